import { silu1, silu4 } from './common/expf';
import { tanhf } from './common/libm';

// y[r] = x[r] + b (a row of n broadcast over rows), e.g. a projection's bias
export function add_row(r0: i32, r1: i32, x: usize, xs: usize, bias: usize, y: usize, ys: usize, n: i32): void {
  for (let r = r0; r < r1; r++) {
    const xp = x + <usize>r * xs, yp = y + <usize>r * ys;
    let i = 0;
    for (; i + 4 <= n; i += 4) { const o = <usize>i << 2; v128.store(yp + o, f32x4.add(v128.load(xp + o), v128.load(bias + o))); }
    for (; i < n; i++) { const o = <usize>i << 2; store<f32>(yp + o, load<f32>(xp + o) + load<f32>(bias + o)); }
  }
}
// y[r] = x[r] * w (a row of n broadcast over rows), e.g. a norm's weight
export function mul_row(r0: i32, r1: i32, x: usize, xs: usize, wr: usize, y: usize, ys: usize, n: i32): void {
  for (let r = r0; r < r1; r++) {
    const xp = x + <usize>r * xs, yp = y + <usize>r * ys;
    let i = 0;
    for (; i + 4 <= n; i += 4) { const o = <usize>i << 2; v128.store(yp + o, f32x4.mul(v128.load(xp + o), v128.load(wr + o))); }
    for (; i < n; i++) { const o = <usize>i << 2; store<f32>(yp + o, load<f32>(xp + o) * load<f32>(wr + o)); }
  }
}
// y = silu(g) * u  (SwiGLU)
export function silu_mul(i0: i32, i1: i32, g: usize, u: usize, y: usize): void {
  let i = i0;
  for (; i + 4 <= i1; i += 4) { const o = <usize>i << 2; v128.store(y + o, f32x4.mul(silu4(v128.load(g + o)), v128.load(u + o))); }
  for (; i < i1; i++) { const o = <usize>i << 2; store<f32>(y + o, silu1(load<f32>(g + o)) * load<f32>(u + o)); }
}
export function add(i0: i32, i1: i32, a: usize, b: usize, y: usize): void {
  let i = i0;
  for (; i + 4 <= i1; i += 4) { const o = <usize>i << 2; v128.store(y + o, f32x4.add(v128.load(a + o), v128.load(b + o))); }
  for (; i < i1; i++) { const o = <usize>i << 2; store<f32>(y + o, load<f32>(a + o) + load<f32>(b + o)); }
}
export function mul(i0: i32, i1: i32, a: usize, b: usize, y: usize): void {
  let i = i0;
  for (; i + 4 <= i1; i += 4) { const o = <usize>i << 2; v128.store(y + o, f32x4.mul(v128.load(a + o), v128.load(b + o))); }
  for (; i < i1; i++) { const o = <usize>i << 2; store<f32>(y + o, load<f32>(a + o) * load<f32>(b + o)); }
}
export function scale(i0: i32, i1: i32, x: usize, y: usize, s: f32): void {
  let i = i0;
  const sv = f32x4.splat(s);
  for (; i + 4 <= i1; i += 4) { const o = <usize>i << 2; v128.store(y + o, f32x4.mul(v128.load(x + o), sv)); }
  for (; i < i1; i++) { const o = <usize>i << 2; store<f32>(y + o, load<f32>(x + o) * s); }
}
// y = tanhf(x * (1/cap)) * cap: ggml_scale, ggml_tanh (glibc's tanhf), ggml_scale, as gemma2's final-logit softcap
export function softcap(i0: i32, i1: i32, x: usize, y: usize, cap: f32): void {
  const inv: f32 = <f32>1 / cap;
  for (let i = i0; i < i1; i++) { const o = <usize>i << 2; store<f32>(y + o, tanhf(load<f32>(x + o) * inv) * cap); }
}
