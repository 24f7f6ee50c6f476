import { f32x4_of, fma2v, hi_f64, lo_f64, round2 } from './fmaf';

@inline export function expf_v2(x: v128): v128 {
  const R = f64x2.splat(12582912);
  const z = fma2v(x, f64x2.splat(<f64>reinterpret<f32>(0x3fb8aa3b)), R); // log2(e) 0x1.715476p+0
  const n = round2(f64x2.sub(z, R));
  const nn = f64x2.neg(n);
  const b = fma2v(nn, f64x2.splat(<f64>reinterpret<f32>(0x35bfbe8e)), fma2v(nn, f64x2.splat(<f64>reinterpret<f32>(0x3f317200)), x)); // ln2 lo, hi
  const u = round2(f64x2.mul(b, b));
  const j = fma2v(
    fma2v(fma2v(f64x2.splat(<f64>reinterpret<f32>(0x3c072010)), b, f64x2.splat(<f64>reinterpret<f32>(0x3d2b9f17))), u,
      fma2v(f64x2.splat(<f64>reinterpret<f32>(0x3e2aaf33)), b, f64x2.splat(<f64>reinterpret<f32>(0x3efffedb)))), u,
    fma2v(f64x2.splat(<f64>reinterpret<f32>(0x3f7ffff6)), b, f64x2.splat(1)));
  // 2^n as f64 (exact for |n| <= 192), the product rounded once to f32
  const ni = i64x2.extend_low_i32x4_s(i32x4.trunc_sat_f64x2_s_zero(f64x2.min(f64x2.max(n, f64x2.splat(-200)), f64x2.splat(200))));
  const p2 = i64x2.shl(i64x2.add(ni, i64x2.splat(1023)), 52);
  let r = round2(f64x2.mul(j, p2));
  r = v128.bitselect(f64x2.splat(Infinity), r, f64x2.gt(n, f64x2.splat(192)));
  return v128.bitselect(f64x2.splat(0), r, f64x2.lt(n, f64x2.splat(-192)));
}
// ggml_v_expf on 4 f32 lanes (relaxed build): the same steps as expf_v2's relaxed form on f32x4 (see
// silu4_relaxed below for why the roundings are the same); a vector with |n| > 126 takes the f64x2 halves
@inline export function expf_v4(x: v128): v128 {
  const R = f32x4.splat(12582912);
  const z = f32x4.relaxed_madd(x, f32x4.splat(reinterpret<f32>(0x3fb8aa3b)), R);
  const n = f32x4.sub(z, R);
  if (!v128.any_true(f32x4.gt(f32x4.abs(n), f32x4.splat(126)))) {
    const nn = f32x4.neg(n);
    const b = f32x4.relaxed_madd(nn, f32x4.splat(reinterpret<f32>(0x35bfbe8e)), f32x4.relaxed_madd(nn, f32x4.splat(reinterpret<f32>(0x3f317200)), x));
    const u = f32x4.mul(b, b);
    const j = f32x4.relaxed_madd(
      f32x4.relaxed_madd(f32x4.relaxed_madd(f32x4.splat(reinterpret<f32>(0x3c072010)), b, f32x4.splat(reinterpret<f32>(0x3d2b9f17))), u,
        f32x4.relaxed_madd(f32x4.splat(reinterpret<f32>(0x3e2aaf33)), b, f32x4.splat(reinterpret<f32>(0x3efffedb)))), u,
      f32x4.relaxed_madd(f32x4.splat(reinterpret<f32>(0x3f7ffff6)), b, f32x4.splat(1)));
    return f32x4.mul(j, i32x4.shl(i32x4.add(i32x4.trunc_sat_f32x4_s(n), i32x4.splat(127)), 23));
  }
  return f32x4_of(expf_v2(lo_f64(x)), expf_v2(hi_f64(x)));
}
// silu as ggml_vec_swiglu_f32 / ggml_vec_silu_f32 (AVX-512): x / (1 + v_expf(-x)), in f32
@inline function silu4_f64(v: v128): v128 {
  const nv = f32x4.neg(v);
  const e = f32x4_of(expf_v2(lo_f64(nv)), expf_v2(hi_f64(nv)));
  return f32x4.div(v, f32x4.add(f32x4.splat(1), e));
}
// Relaxed build: silu4 (ggml_v_expf, then x / (1 + e)) on 4 f32 lanes at once rather than two f64x2 halves. The
// relaxed build's expf_v2 already runs its fused multiply-adds on the f32 values (relaxed_madd) and rounds
// every other step to f32; those steps in f32x4 are the same roundings. Its last step, j * 2^n rounded once,
// is one f32 multiply while 2^n is a normal f32 (|n| <= 126: j * 2^n then rounds once, subnormal or not);
// a vector with a lane outside takes the f64x2 halves.
@inline function silu4_relaxed(v: v128): v128 {
  return f32x4.div(v, f32x4.add(f32x4.splat(1), expf_v4(f32x4.neg(v))));
}
@inline export function silu4(v: v128): v128 {
  if (ASC_FEATURE_RELAXED_SIMD) return silu4_relaxed(v);
  return silu4_f64(v);
}
@inline export function silu1(v: f32): f32 { return f32x4.extract_lane(silu4(f32x4.splat(v)), 0); }
