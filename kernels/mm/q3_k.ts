import { h2f } from '../common/f16';
import { fma2, fma4_dd, lanes4, hi_f64, hsum_float_8, lo_f64 } from '../common/fmaf';
import { g4 } from '../common/simd';
import { ROW_TILE } from './tile';

// Q3_K x Q8_K (110 B per 256 values: hmask[32], qs[64], 12 packed 6-bit scales, f16 d) in the float order of
// llama.cpp's x86 kernel (below), in both numerics. Value l of 32-value step m (0..7, chunk c = m >> 2, shift
// s = m & 3): x = (qs[32c + l] >> 2s) & 3 | (bit m of hmask[l]) << 2, value x - 4, times scale 2m + (l >= 16)
// minus 32. One token alone and two together give the same bits.

// Q3_K's 16 6-bit scales (unsigned, before the -32) from the 12 packed bytes at s, as ggml's aux shuffle
@inline function q3_scales(s: usize): v128 {
  const a0 = load<u32>(s), a1 = load<u32>(s, 4), tmp = load<u32>(s, 8);
  let v = i32x4.splat((a0 & 0x0f0f0f0f) | (((tmp >> 0) & 0x03030303) << 4));
  v = i32x4.replace_lane(v, 1, (a1 & 0x0f0f0f0f) | (((tmp >> 2) & 0x03030303) << 4));
  v = i32x4.replace_lane(v, 2, ((a0 >> 4) & 0x0f0f0f0f) | (((tmp >> 4) & 0x03030303) << 4));
  return i32x4.replace_lane(v, 3, ((a1 >> 4) & 0x0f0f0f0f) | (((tmp >> 6) & 0x03030303) << 4));
}
// 16 values (u8, < 8) . their activations, plus the -4 offset (off: -4 x pair sums of the activations, i16),
// times the sub-block scale -> 4 lanes of 4 consecutive values (AVX2's layout). Relaxed SIMD as AVX2 does it:
// i16 pair sums (the values are the 7-bit operand), the offset added on i16, i32x4.dot_i16x8_s by the scale on
// i16 lanes (s16); SIMD128: widened products (g4) and an i32 multiply by s32. The same integers.
@inline function dot16s(v: v128, aq: usize, ax: usize, off: v128, s16: v128, s32: v128): v128 {
  if (ASC_FEATURE_RELAXED_SIMD) return i32x4.dot_i16x8_s(i16x8.add(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq), v), off), s16);
  const p = g4(i32x4.dot_i16x8_s(i16x8.extend_low_i8x16_u(v), v128.load(ax)), i32x4.dot_i16x8_s(i16x8.extend_high_i8x16_u(v), v128.load(ax, 16)));
  return i32x4.mul(i32x4.add(p, i32x4.dot_i16x8_s(off, i16x8.splat(1))), s32);
}
// 16 values of step m: q the chunk's quant bytes shifted right by 2s, g hmask shifted right by m (on u16
// lanes: the bits a byte needs never cross into or out of it at these shift counts)
@inline function q3k_vals(q: v128, g: v128): v128 {
  return v128.or(v128.and(q, i8x16.splat(3)), v128.and(i16x8.shl(g, 2), i8x16.splat(4)));
}
// ggml_vec_dot_q3_K_q8_K (AVX2; not repacked on x86): per super-block 8 int32 lanes, lane k = values 4k..4k+3
// of every 32-value step, (x - 4) * a times the step's scale (values 0..15: scale 2m, 16..31: 2m + 1), each
// converted to f32 and fused-multiply-added by d = y.d * x.d into its own accumulator; hsum_float_8.
// The -4 comes from the side table (q8_K_aux: -4 * each 2 activations' sum as i16, at ax + nb * 512).
// A: lanes 0..3, B: lanes 4..7; s16 the 16 scales - 32 on i16 lanes.
@inline function dot_q3_K(w: usize, a: usize, ax: usize, nb: i32): f32 {
  let c0 = f64x2.splat(0), c1 = c0, c2 = c0, c3 = c0;
  let op = ax + (<usize>nb << 9);
  const end = w + <usize>nb * 110;
  while (w < end) {
    const dd = f64x2.splat(<f64>(load<f32>(a) * h2f(load<u16>(w, 108))));
    const sc = i8x16.sub(q3_scales(w + 96), i8x16.splat(32));
    let s16 = i16x8.extend_low_i8x16_s(sc);
    const s16h = i16x8.extend_high_i8x16_s(sc);
    let g0 = v128.load(w), g1 = v128.load(w, 16);
    let A = i32x4.splat(0), B = A;
    let aq = a + 4, x = ax;
    for (let c: usize = 0; c < 2; c++) {
      let q0 = v128.load(w + 32 + (c << 5)), q1 = v128.load(w + 48 + (c << 5));
      for (let s = 0; s < 4; s++) {
        const l16 = i8x16.shuffle(s16, s16, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1), h16 = i8x16.shuffle(s16, s16, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3);
        const sl = i32x4.extend_low_i16x8_s(l16), sh = i32x4.extend_low_i16x8_s(h16);
        A = i32x4.add(A, dot16s(q3k_vals(q0, g0), aq, x, v128.load(op), l16, sl));
        B = i32x4.add(B, dot16s(q3k_vals(q1, g1), aq + 16, x + 32, v128.load(op, 16), h16, sh));
        q0 = i16x8.shr_u(q0, 2); q1 = i16x8.shr_u(q1, 2); g0 = i16x8.shr_u(g0, 1); g1 = i16x8.shr_u(g1, 1);
        s16 = i8x16.shuffle(s16, s16h, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19);
        aq += 32; x += 64; op += 32;
      }
      s16 = s16h;
    }
    // |lane| <= 8 * 32 * 4 * 4 * 128 < 2^24: exact in f32, so straight to f64
    const fA = f32x4.convert_i32x4_s(A), fB = f32x4.convert_i32x4_s(B);
    if (ASC_FEATURE_RELAXED_SIMD) {
      c0 = fma4_dd(fA, dd, c0); c2 = fma4_dd(fB, dd, c2);
    } else {
      c0 = fma2(f64x2.mul(lo_f64(fA), dd), c0);
      c1 = fma2(f64x2.mul(hi_f64(fA), dd), c1);
      c2 = fma2(f64x2.mul(lo_f64(fB), dd), c2);
      c3 = fma2(f64x2.mul(hi_f64(fB), dd), c3);
    }
    w += 110; a += 292; ax += 512;
  }
  return hsum_float_8(lanes4(c0, c1), lanes4(c2, c3));
}
// dot_q3_K for two activation rows (tokens) at once, for prefill: the 3-bit values decoded once for both,
// each token with its own accumulators in the same order (the same bits as two dot_q3_K calls)
@inline function dot2t_q3_K(w: usize, a: usize, as: usize, ax: usize, axs: usize, nb: i32, y: usize, ys: usize): void {
  let c0 = f64x2.splat(0), c1 = c0, c2 = c0, c3 = c0, e0 = c0, e1 = c0, e2 = c0, e3 = c0;
  let op = ax + (<usize>nb << 9);
  const end = w + <usize>nb * 110;
  while (w < end) {
    const hd = h2f(load<u16>(w, 108));
    const sc = i8x16.sub(q3_scales(w + 96), i8x16.splat(32));
    let s16 = i16x8.extend_low_i8x16_s(sc);
    const s16h = i16x8.extend_high_i8x16_s(sc);
    let g0 = v128.load(w), g1 = v128.load(w, 16);
    let A = i32x4.splat(0), B = A, A2 = A, B2 = A;
    let aq = a + 4, x = ax;
    for (let c: usize = 0; c < 2; c++) {
      let q0 = v128.load(w + 32 + (c << 5)), q1 = v128.load(w + 48 + (c << 5));
      for (let s = 0; s < 4; s++) {
        const l16 = i8x16.shuffle(s16, s16, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1), h16 = i8x16.shuffle(s16, s16, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3);
        const sl = i32x4.extend_low_i16x8_s(l16), sh = i32x4.extend_low_i16x8_s(h16);
        const v0 = q3k_vals(q0, g0), v1 = q3k_vals(q1, g1);
        A = i32x4.add(A, dot16s(v0, aq, x, v128.load(op), l16, sl));
        B = i32x4.add(B, dot16s(v1, aq + 16, x + 32, v128.load(op, 16), h16, sh));
        A2 = i32x4.add(A2, dot16s(v0, aq + as, x + axs, v128.load(op + axs), l16, sl));
        B2 = i32x4.add(B2, dot16s(v1, aq + as + 16, x + axs + 32, v128.load(op + axs, 16), h16, sh));
        q0 = i16x8.shr_u(q0, 2); q1 = i16x8.shr_u(q1, 2); g0 = i16x8.shr_u(g0, 1); g1 = i16x8.shr_u(g1, 1);
        s16 = i8x16.shuffle(s16, s16h, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19);
        aq += 32; x += 64; op += 32;
      }
      s16 = s16h;
    }
    const dd = f64x2.splat(<f64>(load<f32>(a) * hd)), dd2 = f64x2.splat(<f64>(load<f32>(a + as) * hd));
    let fA = f32x4.convert_i32x4_s(A), fB = f32x4.convert_i32x4_s(B);
    if (ASC_FEATURE_RELAXED_SIMD) {
      c0 = fma4_dd(fA, dd, c0); c2 = fma4_dd(fB, dd, c2);
    } else {
      c0 = fma2(f64x2.mul(lo_f64(fA), dd), c0);
      c1 = fma2(f64x2.mul(hi_f64(fA), dd), c1);
      c2 = fma2(f64x2.mul(lo_f64(fB), dd), c2);
      c3 = fma2(f64x2.mul(hi_f64(fB), dd), c3);
    }
    fA = f32x4.convert_i32x4_s(A2); fB = f32x4.convert_i32x4_s(B2);
    if (ASC_FEATURE_RELAXED_SIMD) {
      e0 = fma4_dd(fA, dd2, e0); e2 = fma4_dd(fB, dd2, e2);
    } else {
      e0 = fma2(f64x2.mul(lo_f64(fA), dd2), e0);
      e1 = fma2(f64x2.mul(hi_f64(fA), dd2), e1);
      e2 = fma2(f64x2.mul(lo_f64(fB), dd2), e2);
      e3 = fma2(f64x2.mul(hi_f64(fB), dd2), e3);
    }
    w += 110; a += 292; ax += 512;
  }
  store<f32>(y, hsum_float_8(lanes4(c0, c1), lanes4(c2, c3)));
  store<f32>(y + ys, hsum_float_8(lanes4(e0, e1), lanes4(e2, e3)));
}
export function mm_q3_K(r0: i32, r1: i32, w: usize, ws: usize, a: usize, as: usize, nTok: i32, y: usize, ys: usize, nb: i32, ax: usize, axs: usize): void {
  // tiles of ROW_TILE rows stay in L1 while the activation rows pass over them; tokens in pairs
  for (let rt = r0; rt < r1; rt += ROW_TILE) {
    const re = min(rt + ROW_TILE, r1);
    let t = 0;
    for (; t + 2 <= nTok; t += 2) {
      const at = a + <usize>t * as, xt = ax + <usize>t * axs, yt = y + <usize>t * ys;
      for (let r = rt; r < re; r++) dot2t_q3_K(w + <usize>r * ws, at, as, xt, axs, nb, yt + (<usize>r << 2), ys);
    }
    for (; t < nTok; t++) {
      const at = a + <usize>t * as, xt = ax + <usize>t * axs, yt = y + <usize>t * ys;
      for (let r = rt; r < re; r++) store<f32>(yt + (<usize>r << 2), dot_q3_K(w + <usize>r * ws, at, xt, nb));
    }
  }
}
