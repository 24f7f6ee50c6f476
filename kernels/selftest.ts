// Start-up check of the relaxed build (src/backends/cpu/runtime.ts): a relaxed dot product on 48 bytes at p
// (i8 a, 7-bit b, i32x4 c), folded into one number; the simd128 build returns 0
export function simd_selftest(p: usize): i32 {
  if (ASC_FEATURE_RELAXED_SIMD) {
    const r = i32x4.relaxed_dot_i8x16_i7x16_add_s(v128.load(p), v128.load(p, 16), v128.load(p, 32));
    return i32x4.extract_lane(r, 0) + 3 * i32x4.extract_lane(r, 1) + 5 * i32x4.extract_lane(r, 2) + 7 * i32x4.extract_lane(r, 3);
  }
  return 0;
}
// Start-up check that the relaxed build's f32x4.relaxed_madd is fused (relaxed SIMD allows either; the relaxed
// kernels use it as C's fmaf): stores relaxed_madd(a, b, c) of the f32x4 at p, p + 16, p + 32 at p + 48.
// The simd128 build stores nothing.
export function fma_selftest(p: usize): void {
  if (ASC_FEATURE_RELAXED_SIMD) v128.store(p, f32x4.relaxed_madd(v128.load(p), v128.load(p, 16), v128.load(p, 32)), 48);
}
