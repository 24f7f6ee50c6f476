// Q4_K/Q5_K super-block helpers in SIMD form for the relaxed-SIMD decode kernels: the same integers as
// kquant.ts's k4_scales / k4_summins, with fewer instructions per super-block.

// k4_scales (ggml's utmp shuffle of the 12 packed bytes at sc) on i32 lanes: lanes 0 and 2 are u0, u1 with
// the 6-bit masks, lanes 1 and 3 the low nibbles of u2 (u2 >> 4 for lane 3) with bits 6-7 of u0 / u1 moved
// to bits 4-5 of each byte ((x >> 2) & 0x30). Reads 16 bytes at sc (the 4 after the scales are ignored).
@inline export function k4_scales_v(sc: usize): v128 {
  const v = v128.load(sc);
  const a = i32x4.shuffle(v, i32x4.shr_u(v, 4), 0, 2, 1, 6);
  const b = i32x4.shuffle(v, v, 0, 0, 1, 1);
  return v128.or(v128.and(a, i32x4(0x3f3f3f3f, 0x0f0f0f0f, 0x3f3f3f3f, 0x0f0f0f0f)),
    v128.and(i32x4.shr_u(b, 2), i32x4(0, 0x30303030, 0, 0x30303030)));
}
// the mins term of a super-block (lanes to be summed: k4_summins before its horizontal sum): bsums pairs
// (Q8_K row at a, i16 at 260) times their sub-block's min in one pmaddwd per 8 bsums, each min duplicated
// on the two i16 lanes of its pair
@inline export function k4_mins_lanes(smv: v128, a: usize): v128 {
  const m = i16x8.extend_high_i8x16_u(smv);
  const ml = i16x8.shuffle(m, m, 0, 0, 1, 1, 2, 2, 3, 3), mh = i16x8.shuffle(m, m, 4, 4, 5, 5, 6, 6, 7, 7);
  return i32x4.add(i32x4.dot_i16x8_s(v128.load(a, 260), ml), i32x4.dot_i16x8_s(v128.load(a, 276), mh));
}
// [x0+x1+x2+x3, y0+y1+y2+y3, same, same]: two horizontal sums in one
@inline export function hsum2_i32(x: v128, y: v128): v128 {
  const t = i32x4.add(i32x4.shuffle(x, y, 0, 4, 1, 5), i32x4.shuffle(x, y, 2, 6, 3, 7));
  return i32x4.add(t, i32x4.shuffle(t, t, 2, 3, 0, 1));
}
// one 64-value chunk of a Q4_K super-block for one token (relaxed SIMD): i8 x i7 pair sums of the low
// nibbles (lo) and high nibbles (hi) on i16 lanes (2 per lane), interleaved and folded to [lo, hi, lo, hi..]
// (4 pair sums per lane, |.| <= 4*2*15*128), then one pmaddwd by s = [s_lo, s_hi] repeated: lanes to be
// summed, whose total is sum(lo)*s_lo + sum(hi)*s_hi exactly. aq: the chunk's 64 int8 activations.
@inline export function k4_chunk(aq: usize, l0: v128, l1: v128, h0: v128, h1: v128, s: v128): v128 {
  const lo = i16x8.add(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq), l0), i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq, 16), l1));
  const hi = i16x8.add(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq, 32), h0), i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq, 48), h1));
  return i32x4.dot_i16x8_s(i16x8.add(i16x8.shuffle(lo, hi, 0, 8, 1, 9, 2, 10, 3, 11), i16x8.shuffle(lo, hi, 4, 12, 5, 13, 6, 14, 7, 15)), s);
}
