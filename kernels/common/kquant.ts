// Block helpers shared by the K-quant and IQ4 matmul kernels.
import { hsum_i32x4 } from './simd';

// Q4_K/Q5_K scales (bytes 0..7) and mins (bytes 8..15) of the 12 packed bytes at sc, as ggml's utmp shuffle
@inline export function k4_scales(sc: usize): v128 {
  const u0 = load<u32>(sc), u1 = load<u32>(sc, 4), u2 = load<u32>(sc, 8);
  let v = i32x4.splat(u0 & 0x3f3f3f3f);
  v = i32x4.replace_lane(v, 1, (u2 & 0x0f0f0f0f) | (((u0 >> 6) & 0x03030303) << 4));
  v = i32x4.replace_lane(v, 2, u1 & 0x3f3f3f3f);
  return i32x4.replace_lane(v, 3, ((u2 >> 4) & 0x0f0f0f0f) | (((u1 >> 6) & 0x03030303) << 4));
}
// sum_j mins[j] * (bsums[2j] + bsums[2j+1]) for Q8_K activations at a
@inline export function k4_summins(smv: v128, a: usize): i32 {
  const b0 = v128.load(a, 260), b1 = v128.load(a, 276);
  const ev = i8x16.shuffle(b0, b1, 0, 1, 4, 5, 8, 9, 12, 13, 16, 17, 20, 21, 24, 25, 28, 29);
  const od = i8x16.shuffle(b0, b1, 2, 3, 6, 7, 10, 11, 14, 15, 18, 19, 22, 23, 26, 27, 30, 31);
  return hsum_i32x4(i32x4.dot_i16x8_s(i16x8.add(ev, od), i16x8.extend_high_i8x16_u(smv)));
}
// the fixed int8 table IQ4_NL and IQ4_XS index with their 4-bit values
@inline export function kvalues_iq4nl(): v128 {
  return i8x16(-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113);
}
