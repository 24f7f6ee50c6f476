// The recurrent layers' kernels (lfm2, qwen35), as the reference computes them (src/backends/reference/ops.ts,
// recurrent.ts): SiLU per ggml row (16-lane v_expf, the row's tail through glibc expf), sigmoid and softplus
// (glibc expf/logf, scalar as ggml's unary ops), and the fused Gated DeltaNet recurrence over heads.
import { silu4 } from './common/expf';
import { expf_glibc, logf_glibc } from './common/glibc';
import { fma4, fmaf, reduce_add_16 } from './common/fmaf';

// y = silu(x) over rows [r0, r1) of rowLen: ggml_vec_silu_f32's AVX-512 lanes, then its scalar tail
export function silu_rows(r0: i32, r1: i32, x: usize, y: usize, rowLen: i32): void {
  const simd = rowLen & ~15;
  for (let r = r0; r < r1; r++) {
    const xp = x + (<usize>r * <usize>rowLen << 2), yp = y + (<usize>r * <usize>rowLen << 2);
    // silu4 is lane-wise: 4 values per call give each the bits silu1 gives it alone
    let i = 0;
    for (; i < simd; i += 4) v128.store(yp + (<usize>i << 2), silu4(v128.load(xp + (<usize>i << 2))));
    for (; i < rowLen; i++) {
      const v = load<f32>(xp + (<usize>i << 2));
      store<f32>(yp + (<usize>i << 2), v / (<f32>1 + expf_glibc(-v)));
    }
  }
}
// y = 1 / (1 + expf(-x))
export function sigmoid_f32(i0: i32, i1: i32, x: usize, y: usize): void {
  for (let i = i0; i < i1; i++) {
    const o = <usize>i << 2;
    store<f32>(y + o, <f32>1 / (<f32>1 + expf_glibc(-load<f32>(x + o))));
  }
}
// y = x > 20 ? x : logf(1 + expf(x))
export function softplus_f32(i0: i32, i1: i32, x: usize, y: usize): void {
  for (let i = i0; i < i1; i++) {
    const o = <usize>i << 2;
    const v = load<f32>(x + o);
    store<f32>(y + o, v > <f32>20 ? v : logf_glibc(<f32>1 + expf_glibc(v)));
  }
}

// ggml_vec_dot_f32 (AVX-512) of n values: lane l of 64 accumulates elements l, l+64, ... by FMA; lanes
// (l, l+32) and (l+16, l+48) added, then _mm512_reduce_add_ps; the n % 64 tail added unfused in f32
@inline function lane4(x: usize, y: usize, np: i32, l: i32): f32 {
  // lanes l, l+16, l+32, l+48 -> (a0 + a2) + (a1 + a3)
  let a0: f32 = 0, a1: f32 = 0, a2: f32 = 0, a3: f32 = 0;
  for (let s = 0; s < np; s += 64) {
    const o = <usize>(s + l) << 2;
    a0 = fmaf(load<f32>(x + o), load<f32>(y + o), a0);
    a1 = fmaf(load<f32>(x + o + 64), load<f32>(y + o + 64), a1);
    a2 = fmaf(load<f32>(x + o + 128), load<f32>(y + o + 128), a2);
    a3 = fmaf(load<f32>(x + o + 192), load<f32>(y + o + 192), a3);
  }
  return (a0 + a2) + (a1 + a3);
}
// relaxed build: the 64 lanes as 16 f32x4 chains on relaxed_madd (checked fused at start-up); lane vector
// q of the 16 combined lanes = (A[q] + A[q+8]) + (A[q+4] + A[q+12]), as lane4
@inline function lanes16_relaxed(x: usize, y: usize, np: i32, q: usize): v128 {
  let a0 = f32x4.splat(0), a1 = a0, a2 = a0, a3 = a0;
  for (let s = 0; s < np; s += 64) {
    const o = (<usize>s << 2) + (q << 4);
    a0 = fma4(v128.load(x + o), v128.load(y + o), a0);
    a1 = fma4(v128.load(x + o + 64), v128.load(y + o + 64), a1);
    a2 = fma4(v128.load(x + o + 128), v128.load(y + o + 128), a2);
    a3 = fma4(v128.load(x + o + 192), v128.load(y + o + 192), a3);
  }
  return f32x4.add(f32x4.add(a0, a2), f32x4.add(a1, a3));
}
function dot_f32_ggml(x: usize, y: usize, n: i32): f32 {
  const np = n & ~63;
  let s: f32 = 0;
  if (ASC_FEATURE_RELAXED_SIMD) {
    if (np > 0) s = reduce_add_16(lanes16_relaxed(x, y, np, 0), lanes16_relaxed(x, y, np, 1), lanes16_relaxed(x, y, np, 2), lanes16_relaxed(x, y, np, 3));
  } else if (np > 0) {
    let l0 = f32x4.splat(0), l1 = f32x4.splat(0), l2 = f32x4.splat(0), l3 = f32x4.splat(0);
    l0 = f32x4.replace_lane(l0, 0, lane4(x, y, np, 0)); l0 = f32x4.replace_lane(l0, 1, lane4(x, y, np, 1));
    l0 = f32x4.replace_lane(l0, 2, lane4(x, y, np, 2)); l0 = f32x4.replace_lane(l0, 3, lane4(x, y, np, 3));
    l1 = f32x4.replace_lane(l1, 0, lane4(x, y, np, 4)); l1 = f32x4.replace_lane(l1, 1, lane4(x, y, np, 5));
    l1 = f32x4.replace_lane(l1, 2, lane4(x, y, np, 6)); l1 = f32x4.replace_lane(l1, 3, lane4(x, y, np, 7));
    l2 = f32x4.replace_lane(l2, 0, lane4(x, y, np, 8)); l2 = f32x4.replace_lane(l2, 1, lane4(x, y, np, 9));
    l2 = f32x4.replace_lane(l2, 2, lane4(x, y, np, 10)); l2 = f32x4.replace_lane(l2, 3, lane4(x, y, np, 11));
    l3 = f32x4.replace_lane(l3, 0, lane4(x, y, np, 12)); l3 = f32x4.replace_lane(l3, 1, lane4(x, y, np, 13));
    l3 = f32x4.replace_lane(l3, 2, lane4(x, y, np, 14)); l3 = f32x4.replace_lane(l3, 3, lane4(x, y, np, 15));
    s = reduce_add_16(l0, l1, l2, l3);
  }
  for (let i = np; i < n; i++) { const o = <usize>i << 2; s += load<f32>(x + o) * load<f32>(y + o); }
  return s;
}

// The gated delta rule for v-heads [h0, h1), one token at a time (ggml_compute_forward_gated_delta_net_one_chunk):
// per head its S x S state M (transposed: M[j][i] = S[i][j]) decays by expf(g), delta = (v - M·k) * beta,
// M[j] += k * delta[j] (FMA), out = (M·q) / sqrt(S). v-head h reads q/k head h % hk. delta is kept in the
// head's output slot until the output overwrites it (the arena never gives y the bytes of a live source).
export function gated_delta_net(h0: i32, h1: i32, state: usize, q: usize, k: usize, v: usize, g: usize, beta: usize, y: usize,
  nTok: i32, S: i32, hk: i32, hv: i32): void {
  const scale: f32 = <f32>1 / Mathf.sqrt(<f32>S);
  const row = <usize>S << 2;
  for (let h = h0; h < h1; h++) {
    const m = state + <usize>h * <usize>S * row;
    for (let t = 0; t < nTok; t++) {
      const qo = q + ((<usize>t * <usize>hk + <usize>(h % hk)) * row), ko = k + ((<usize>t * <usize>hk + <usize>(h % hk)) * row);
      const vo = v + ((<usize>t * <usize>hv + <usize>h) * row), yo = y + ((<usize>t * <usize>hv + <usize>h) * row);
      const gi = (<usize>t * <usize>hv + <usize>h) << 2;
      const decay = expf_glibc(load<f32>(g + gi)), b = load<f32>(beta + gi);
      const dv = f32x4.splat(decay);
      const n2 = S * S;
      let i = 0;
      for (; i + 4 <= n2; i += 4) { const o = m + (<usize>i << 2); v128.store(o, f32x4.mul(v128.load(o), dv)); }
      for (; i < n2; i++) { const o = m + (<usize>i << 2); store<f32>(o, load<f32>(o) * decay); }
      for (let j = 0; j < S; j++) {
        const o = <usize>j << 2;
        store<f32>(yo + o, (load<f32>(vo + o) - dot_f32_ggml(m + <usize>j * row, ko, S)) * b);
      }
      for (let j = 0; j < S; j++) {
        const d = load<f32>(yo + (<usize>j << 2)), mr = m + <usize>j * row;
        let c = 0;
        if (ASC_FEATURE_RELAXED_SIMD) {
          const dd = f32x4.splat(d);
          for (; c + 4 <= S; c += 4) { const o = <usize>c << 2; v128.store(mr + o, fma4(v128.load(ko + o), dd, v128.load(mr + o))); }
        }
        for (; c < S; c++) { const o = <usize>c << 2; store<f32>(mr + o, fmaf(load<f32>(ko + o), d, load<f32>(mr + o))); }
      }
      for (let j = 0; j < S; j++) store<f32>(yo + (<usize>j << 2), dot_f32_ggml(m + <usize>j * row, qo, S) * scale);
    }
  }
}
