// Start-up check of the relaxed build (src/backends/cpu/runtime.ts): a relaxed dot product on 48 bytes at p
// (i8 a, 7-bit b, i32x4 c), folded into one number; the simd128 build returns 0
export function simd_selftest(p: usize): i32 {
  if (ASC_FEATURE_RELAXED_SIMD) {
    const r = i32x4.relaxed_dot_i8x16_i7x16_add_s(v128.load(p), v128.load(p, 16), v128.load(p, 32));
    return i32x4.extract_lane(r, 0) + 3 * i32x4.extract_lane(r, 1) + 5 * i32x4.extract_lane(r, 2) + 7 * i32x4.extract_lane(r, 3);
  }
  return 0;
}
