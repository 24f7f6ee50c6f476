// fmaf of an exact f64 product p and an f32 value c (held as f64)
@inline function fma_pc(p: f64, c: f64): f32 {
  const s = p + c;
  if ((reinterpret<u64>(s) & 0x1fffffff) != 0x10000000) return <f32>s;
  return fma_tie(p, c, s);
}
// s = p + c is an f32 midpoint: round towards the part the f64 add lost (TwoSum error term)
function fma_tie(p: f64, c: f64, s: f64): f32 {
  const r = <f32>s;
  if (<f64>r == s) return r;
  const bb = s - p;
  const err = (p - (s - bb)) + (c - bb);
  if (err == 0) return r;
  const other = 2 * s - <f64>r;
  return <f32>(err > 0 ? Math.max(<f64>r, other) : Math.min(<f64>r, other));
}
// relaxed build: f32x4.relaxed_madd, which the runtime checks is fused before it picks the build
@inline export function fmaf(a: f32, b: f32, c: f32): f32 {
  if (ASC_FEATURE_RELAXED_SIMD) return f32x4.extract_lane(f32x4.relaxed_madd(f32x4.splat(a), f32x4.splat(b), f32x4.splat(c)), 0);
  return fma_pc(<f64>a * <f64>b, <f64>c);
}
// two fmaf lanes: p exact products (f64x2), c f32 accumulators held as f64x2; returns the new accumulators
@inline export function fma2(p: v128, c: v128): v128 {
  const s = f64x2.add(p, c);
  if (v128.any_true(i64x2.eq(v128.and(s, i64x2.splat(0x1fffffff)), i64x2.splat(0x10000000)))) return fma2_tie(p, c);
  return f64x2.promote_low_f32x4(f32x4.demote_f64x2_zero(s));
}
// Most midpoints come after an exact f64 add (short f16 x f16 scale products), where rounding the f64 sum
// is already fmaf's single rounding: the vector TwoSum error term tells those apart from the rare inexact
// ones, which take the scalar fix.
export function fma2_tie(p: v128, c: v128): v128 {
  const s = f64x2.add(p, c);
  const bb = f64x2.sub(s, p);
  const err = f64x2.add(f64x2.sub(p, f64x2.sub(s, bb)), f64x2.sub(c, bb));
  if (!v128.any_true(f64x2.ne(err, f64x2.splat(0)))) return round2(s);
  const r0 = fma_pc(f64x2.extract_lane(p, 0), f64x2.extract_lane(c, 0));
  const r1 = fma_pc(f64x2.extract_lane(p, 1), f64x2.extract_lane(c, 1));
  return f64x2.replace_lane(f64x2.splat(<f64>r0), 1, <f64>r1);
}
// fmaf on 8 lanes held as 4 f64x2: the f64 sums s0..s3 rounded to f32, unless one lane sits exactly
// halfway between two f32 values, where tie_any sends all four through the exact fma2 path. A tie after
// an exact add (the common kind with f16 x f16 scales) would round right anyway; telling the two apart
// costs more per step than the occasional slow step.
@inline export function tie_any(s0: v128, s1: v128, s2: v128, s3: v128): bool {
  const m = i64x2.splat(0x1fffffff), t = i64x2.splat(0x10000000);
  return v128.any_true(v128.or(
    v128.or(i64x2.eq(v128.and(s0, m), t), i64x2.eq(v128.and(s1, m), t)),
    v128.or(i64x2.eq(v128.and(s2, m), t), i64x2.eq(v128.and(s3, m), t))));
}
// Relaxed build only (relaxed_madd, checked fused at start-up): 4 fmaf lanes c + x * d, d an f32 value held
// as an f64x2 splat. Kernels keep their 8 lanes in c0 (lanes 0-3) and c2 (4-7) then, instead of c0..c3 as f64x2.
@inline export function fma4_dd(x: v128, dd: v128, c: v128): v128 {
  const d = f32x4.demote_f64x2_zero(dd);
  return f32x4.relaxed_madd(x, i32x4.shuffle(d, d, 0, 0, 0, 0), c);
}
// Relaxed build only: 4 fmaf lanes c + x * d (relaxed_madd); unreachable in the SIMD128 build
@inline export function fma4(x: v128, d: v128, c: v128): v128 {
  if (ASC_FEATURE_RELAXED_SIMD) return f32x4.relaxed_madd(x, d, c);
  unreachable();
  return c;
}
// lanes 0-3 / 4-7 of 8 fmaf lanes: c0 (relaxed build, fma4_dd) or the f64x2 pair c0, c1
@inline export function lanes4(c0: v128, c1: v128): v128 {
  if (ASC_FEATURE_RELAXED_SIMD) return c0;
  return f32x4_of(c0, c1);
}
// f64x2 -> nearest f32 values, held as f64x2
@inline export function round2(v: v128): v128 { return f64x2.promote_low_f32x4(f32x4.demote_f64x2_zero(v)); }
// lanes 0,1 / 2,3 of an f32x4 as f64x2
@inline export function lo_f64(v: v128): v128 { return f64x2.promote_low_f32x4(v); }
@inline export function hi_f64(v: v128): v128 { return f64x2.promote_low_f32x4(i32x4.shuffle(v, v, 2, 3, 0, 1)); }
// two f64x2 holding f32 values -> one f32x4 (exact)
@inline export function f32x4_of(a: v128, b: v128): v128 {
  return i32x4.shuffle(f32x4.demote_f64x2_zero(a), f32x4.demote_f64x2_zero(b), 0, 1, 4, 5);
}
// AVX hsum_float_8 of lanes 0..3 (lo) and 4..7 (hi): (lo + hi), then [0]+[2], [1]+[3], then their sum
@inline export function hsum_float_8(lo: v128, hi: v128): f32 {
  const r = f32x4.add(lo, hi);
  return (f32x4.extract_lane(r, 0) + f32x4.extract_lane(r, 2)) + (f32x4.extract_lane(r, 1) + f32x4.extract_lane(r, 3));
}
// _mm512_reduce_add_ps of 16 lanes in 4 vectors (lanes 0-3, 4-7, 8-11, 12-15), GCC's tree
@inline export function reduce_add_16(l0: v128, l1: v128, l2: v128, l3: v128): f32 {
  return hsum_float_8(f32x4.add(l0, l2), f32x4.add(l1, l3));
}
// ggml_v_expf (AVX-512 build) on two f32 values held as f64x2: its polynomial of fused multiply-adds,
// each fmaf emulated (fma2), then _mm512_scalef_ps (j * 2^n, one rounding); |n| > 192 saturates
// (relaxed build: relaxed_madd on the f32 values, checked fused at start-up)
@inline export function fma2v(a: v128, b: v128, c: v128): v128 {
  if (ASC_FEATURE_RELAXED_SIMD) {
    return f64x2.promote_low_f32x4(f32x4.relaxed_madd(f32x4.demote_f64x2_zero(a), f32x4.demote_f64x2_zero(b), f32x4.demote_f64x2_zero(c)));
  }
  return fma2(f64x2.mul(a, b), c);
}
