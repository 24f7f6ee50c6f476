@inline export function hsum_f32x4(v: v128): f32 {
  return (f32x4.extract_lane(v, 0) + f32x4.extract_lane(v, 1)) + (f32x4.extract_lane(v, 2) + f32x4.extract_lane(v, 3));
}
@inline export function hsum_i32x4(v: v128): i32 {
  return i32x4.extract_lane(v, 0) + i32x4.extract_lane(v, 1) + i32x4.extract_lane(v, 2) + i32x4.extract_lane(v, 3);
}
@inline export function hmax_f32x4(v: v128): f32 {
  return Mathf.max(Mathf.max(f32x4.extract_lane(v, 0), f32x4.extract_lane(v, 1)), Mathf.max(f32x4.extract_lane(v, 2), f32x4.extract_lane(v, 3)));
}
// dot of 16 signed bytes with 16 signed bytes -> i32x4
@inline export function dot_s8s8(a: v128, s: v128): v128 {
  return i32x4.add(
    i32x4.dot_i16x8_s(i16x8.extend_low_i8x16_s(a), i16x8.extend_low_i8x16_s(s)),
    i32x4.dot_i16x8_s(i16x8.extend_high_i8x16_s(a), i16x8.extend_high_i8x16_s(s)));
}

// ---------------------------------------------------------------------------------------------
// ggml's float order. The integer block sums are exact; what decides the last bit is how ggml's x86
// kernels combine them in f32 (src/backends/reference/matmul.ts and src/quant/vec-dot.ts name the
// kernel and order per weight type and batch). WebAssembly has no fused multiply-add, so C's fmaf
// is emulated: the f32 x f32 product is exact in f64, the f64 sum is rounded to f32, and the one
// case where that double rounding differs from a single one (the f64 sum exactly halfway between
// two f32 values after an inexact add) is detected and fixed as src/quant/rounding.ts's fmaf does.
// i32x4 dot pair sums of values 0..7 (d0) and 8..15 (d1) -> sums of 4 consecutive values (AVX2's 8 lanes per 32)
@inline export function g4(d0: v128, d1: v128): v128 {
  return i32x4.add(i32x4.shuffle(d0, d1, 0, 2, 4, 6), i32x4.shuffle(d0, d1, 1, 3, 5, 7));
}
// 32 nibbles (low or high halves of 4 u16-widened byte vectors) . 32 int8 at a
@inline export function dot32_u16(x0: v128, x1: v128, x2: v128, x3: v128, a: usize): v128 {
  return i32x4.add(
    i32x4.add(i32x4.dot_i16x8_s(x0, v128.load8x8_s(a)), i32x4.dot_i16x8_s(x1, v128.load8x8_s(a, 8))),
    i32x4.add(i32x4.dot_i16x8_s(x2, v128.load8x8_s(a, 16)), i32x4.dot_i16x8_s(x3, v128.load8x8_s(a, 24))));
}
// as dot32_u16 with activations already widened to i16 at a
@inline export function dot32_w16(x0: v128, x1: v128, x2: v128, x3: v128, a: usize): v128 {
  return i32x4.add(
    i32x4.add(i32x4.dot_i16x8_s(x0, v128.load(a)), i32x4.dot_i16x8_s(x1, v128.load(a, 16))),
    i32x4.add(i32x4.dot_i16x8_s(x2, v128.load(a, 32)), i32x4.dot_i16x8_s(x3, v128.load(a, 48))));
}
// four i32x4 partial sums -> one i32x4 of their horizontal sums
@inline export function hsum4_i32(p0: v128, p1: v128, p2: v128, p3: v128): v128 {
  const t0 = i32x4.add(i32x4.shuffle(p0, p1, 0, 4, 1, 5), i32x4.shuffle(p0, p1, 2, 6, 3, 7));
  const t1 = i32x4.add(i32x4.shuffle(p2, p3, 0, 4, 1, 5), i32x4.shuffle(p2, p3, 2, 6, 3, 7));
  return i32x4.add(i32x4.shuffle(t0, t1, 0, 1, 4, 5), i32x4.shuffle(t0, t1, 2, 3, 6, 7));
}
// first half of hsum4_i32: p0, p1 -> [p0 lanes 0+2, p1 lanes 0+2, p0 1+3, p1 1+3]
@inline export function hs2_i32(p0: v128, p1: v128): v128 {
  return i32x4.add(i32x4.shuffle(p0, p1, 0, 4, 1, 5), i32x4.shuffle(p0, p1, 2, 6, 3, 7));
}
@inline export function hs4_i32(t0: v128, t1: v128): v128 {
  return i32x4.add(i32x4.shuffle(t0, t1, 0, 1, 4, 5), i32x4.shuffle(t0, t1, 2, 3, 6, 7));
}
