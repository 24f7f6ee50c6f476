import { f32x4_of, fma2, fma4, reduce_add_16 } from '../common/fmaf';
import { ROW_TILE } from './tile';

// two fused lanes of an F32 dot: c += w[0..1] * a[0..1]
@inline function fma2_f32(w: usize, a: usize, c: v128): v128 {
  return fma2(f64x2.mul(f64x2.promote_low_f32x4(v128.load64_zero(w)), f64x2.promote_low_f32x4(v128.load64_zero(a))), c);
}
// relaxed build: 4 of the lanes as one f32x4 chain on relaxed_madd (checked fused at start-up)
@inline function fma4_f32(w: usize, a: usize, c: v128): v128 { return fma4(v128.load(w), v128.load(a), c); }
@inline function dot_f32_tiny(w: usize, a: usize, n: i32): f32 {
  if (ASC_FEATURE_RELAXED_SIMD) {
    let d0 = f32x4.splat(0), d1 = d0, d2 = d0, d3 = d0;
    for (let i = 0; i < n; i += 16) {
      const o = <usize>i << 2;
      d0 = fma4_f32(w + o, a + o, d0); d1 = fma4_f32(w + o + 16, a + o + 16, d1);
      d2 = fma4_f32(w + o + 32, a + o + 32, d2); d3 = fma4_f32(w + o + 48, a + o + 48, d3);
    }
    return reduce_add_16(d0, d1, d2, d3);
  }
  let c0 = f64x2.splat(0), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0, c6 = c0, c7 = c0;
  for (let i = 0; i < n; i += 16) {
    const o = <usize>i << 2;
    c0 = fma2_f32(w + o, a + o, c0); c1 = fma2_f32(w + o + 8, a + o + 8, c1);
    c2 = fma2_f32(w + o + 16, a + o + 16, c2); c3 = fma2_f32(w + o + 24, a + o + 24, c3);
    c4 = fma2_f32(w + o + 32, a + o + 32, c4); c5 = fma2_f32(w + o + 40, a + o + 40, c5);
    c6 = fma2_f32(w + o + 48, a + o + 48, c6); c7 = fma2_f32(w + o + 56, a + o + 56, c7);
  }
  return reduce_add_16(f32x4_of(c0, c1), f32x4_of(c2, c3), f32x4_of(c4, c5), f32x4_of(c6, c7));
}
// lanes 2q, 2q+1 of ggml_vec_dot_f32's 16 combined lanes (as f32 in an f64x2)
@inline function f32_vec_lanes(w: usize, a: usize, np: i32, q: usize): v128 {
  let s0 = f64x2.splat(0), s1 = s0, s2 = s0, s3 = s0;
  for (let i = 0; i < np; i += 64) {
    const o = (<usize>i << 2) + (q << 3);
    s0 = fma2_f32(w + o, a + o, s0); s1 = fma2_f32(w + o + 64, a + o + 64, s1);
    s2 = fma2_f32(w + o + 128, a + o + 128, s2); s3 = fma2_f32(w + o + 192, a + o + 192, s3);
  }
  const f0 = f32x4.demote_f64x2_zero(s0), f1 = f32x4.demote_f64x2_zero(s1), f2 = f32x4.demote_f64x2_zero(s2), f3 = f32x4.demote_f64x2_zero(s3);
  return f64x2.promote_low_f32x4(f32x4.add(f32x4.add(f0, f2), f32x4.add(f1, f3)));
}
// relaxed build: lanes 4q..4q+3 of the 16 combined lanes, f32_vec_lanes' order on f32x4 chains
@inline function f32_vec_lanes4(w: usize, a: usize, np: i32, q: usize): v128 {
  let s0 = f32x4.splat(0), s1 = s0, s2 = s0, s3 = s0;
  for (let i = 0; i < np; i += 64) {
    const o = (<usize>i << 2) + (q << 4);
    s0 = fma4_f32(w + o, a + o, s0); s1 = fma4_f32(w + o + 64, a + o + 64, s1);
    s2 = fma4_f32(w + o + 128, a + o + 128, s2); s3 = fma4_f32(w + o + 192, a + o + 192, s3);
  }
  return f32x4.add(f32x4.add(s0, s2), f32x4.add(s1, s3));
}
@inline function dot_f32_vec(w: usize, a: usize, n: i32): f32 {
  const np = n & ~63;
  if (ASC_FEATURE_RELAXED_SIMD) {
    let r = reduce_add_16(f32_vec_lanes4(w, a, np, 0), f32_vec_lanes4(w, a, np, 1), f32_vec_lanes4(w, a, np, 2), f32_vec_lanes4(w, a, np, 3));
    for (let i = np; i < n; i++) r += load<f32>(w + (<usize>i << 2)) * load<f32>(a + (<usize>i << 2));
    return r;
  }
  let s = reduce_add_16(
    f32x4_of(f32_vec_lanes(w, a, np, 0), f32_vec_lanes(w, a, np, 1)), f32x4_of(f32_vec_lanes(w, a, np, 2), f32_vec_lanes(w, a, np, 3)),
    f32x4_of(f32_vec_lanes(w, a, np, 4), f32_vec_lanes(w, a, np, 5)), f32x4_of(f32_vec_lanes(w, a, np, 6), f32_vec_lanes(w, a, np, 7)));
  for (let i = np; i < n; i++) s += load<f32>(w + (<usize>i << 2)) * load<f32>(a + (<usize>i << 2));
  return s;
}
export function mm_f32(r0: i32, r1: i32, w: usize, ws: usize, a: usize, as: usize, nTok: i32, y: usize, ys: usize, n: i32): void {
  const tiny = nTok >= 2 && (n & 15) == 0;
  for (let rt = r0; rt < r1; rt += ROW_TILE) {
    const re = min(rt + ROW_TILE, r1);
    for (let t = 0; t < nTok; t++) {
      const at = a + <usize>t * as, yt = y + <usize>t * ys;
      if (tiny) for (let r = rt; r < re; r++) store<f32>(yt + (<usize>r << 2), dot_f32_tiny(w + <usize>r * ws, at, n));
      else for (let r = rt; r < re; r++) store<f32>(yt + (<usize>r << 2), dot_f32_vec(w + <usize>r * ws, at, n));
    }
  }
}

// ---------------------------------------------------------------------------------------------
// norms, softmax, rope, activations (rows [r0, r1) of n values, byte strides)
