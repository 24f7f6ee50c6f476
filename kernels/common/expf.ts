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
// silu as ggml_vec_swiglu_f32 / ggml_vec_silu_f32 (AVX-512): x / (1 + v_expf(-x)), in f32
@inline export function silu4(v: v128): v128 {
  const nv = f32x4.neg(v);
  const e = f32x4_of(expf_v2(lo_f64(nv)), expf_v2(hi_f64(nv)));
  return f32x4.div(v, f32x4.add(f32x4.splat(1), e));
}
@inline export function silu1(v: f32): f32 { return f32x4.extract_lane(silu4(f32x4.splat(v)), 0); }
