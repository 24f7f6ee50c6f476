
// y = x / sqrt(mean(x^2) + eps) (* w when w != 0); sum of squares in f64 as ggml
export function rms_norm(r0: i32, r1: i32, x: usize, xs: usize, y: usize, ys: usize, n: i32, eps: f32, w: usize): void {
  for (let r = r0; r < r1; r++) {
    const xp = x + <usize>r * xs, yp = y + <usize>r * ys;
    // ggml_compute_forward_rms_norm: the f32 squares summed in double, in order (an f64 sum can round)
    let sum: f64 = 0;
    let i = 0;
    for (; i < n; i++) { const v = load<f32>(xp + (<usize>i << 2)); sum += <f64>(v * v); }
    const mean = <f32>(sum / <f64>n);
    const scale: f32 = <f32>1.0 / Mathf.sqrt(mean + eps);
    const sv = f32x4.splat(scale);
    i = 0;
    if (w != 0) {
      for (; i + 4 <= n; i += 4) { const o = <usize>i << 2; v128.store(yp + o, f32x4.mul(f32x4.mul(v128.load(xp + o), sv), v128.load(w + o))); }
      for (; i < n; i++) { const o = <usize>i << 2; store<f32>(yp + o, load<f32>(xp + o) * scale * load<f32>(w + o)); }
    } else {
      for (; i + 4 <= n; i += 4) { const o = <usize>i << 2; v128.store(yp + o, f32x4.mul(v128.load(xp + o), sv)); }
      for (; i < n; i++) { const o = <usize>i << 2; store<f32>(yp + o, load<f32>(xp + o) * scale); }
    }
  }
}
