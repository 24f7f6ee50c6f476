import { h2f } from '../common/f16';
import { k4_scales, k4_summins } from '../common/kquant';
import { fma2, fma4_dd, lanes4, fmaf, hi_f64, hsum_float_8, lo_f64 } from '../common/fmaf';
import { g4 } from '../common/simd';
import { ROW_TILE } from './tile';

// Q5_K x Q8_K (176 B per 256 values: f16 d, f16 dmin, 12 scale bytes as Q4_K, qh[32], qs[128]) in the float
// order of llama.cpp's x86 kernel (below), in both numerics. Value l of 64-value chunk j: the low (l < 32) or
// high nibble of qs[32j + l % 32] plus bit 2j (2j + 1) of qh[l % 32] as 16; times the sub-block's 6-bit
// scale, minus its 6-bit min. The integer lanes are exact and the same in both builds; one token alone and
// two together give the same bits.

// chunk j's 64 5-bit values as 4 byte vectors: sub-block 2j (v0 = values 0..15, v1 = 16..31) and 2j + 1
// (v2, v3); h0/h1: qh shifted right by 2j
@inline function q5k_lo(q: v128, h: v128): v128 {
  return v128.or(v128.and(q, i8x16.splat(0x0f)), v128.and(i16x8.shl(h, 4), i8x16.splat(0x10)));
}
@inline function q5k_hi(q: v128, h: v128): v128 {
  return v128.or(v128.and(i16x8.shr_u(q, 4), i8x16.splat(0x0f)), v128.and(i16x8.shl(h, 3), i8x16.splat(0x10)));
}
// 16 values (u8, < 32) . their activations -> sums of 4 consecutive products (AVX2's lane layout): one
// relaxed dot with the int8 quants at aq (the values are the 7-bit operand), or the widened quants at ax
@inline function dot16x(v: v128, aq: usize, ax: usize): v128 {
  if (ASC_FEATURE_RELAXED_SIMD) return i32x4.relaxed_dot_i8x16_i7x16_add_s(v128.load(aq), v, i32x4.splat(0));
  return g4(i32x4.dot_i16x8_s(i16x8.extend_low_i8x16_u(v), v128.load(ax)), i32x4.dot_i16x8_s(i16x8.extend_high_i8x16_u(v), v128.load(ax, 16)));
}
// dot16x times the sub-block scale: relaxed SIMD as AVX2 does it (pair sums on i16, pmaddubsw, then
// i32x4.dot_i16x8_s with the scale on i16 lanes, pmaddwd: no i32 multiply); SIMD128 an i32 multiply
@inline function dot16s(v: v128, aq: usize, ax: usize, s16: v128, s32: v128): v128 {
  if (ASC_FEATURE_RELAXED_SIMD) return i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq), v), s16);
  return i32x4.mul(dot16x(v, aq, ax), s32);
}
// ggml_vec_dot_q5_K_q8_K (AVX2; Q5_K is not repacked on x86): per super-block 8 int32 lanes (lane k = values
// 4k..4k+3 of every 32, times their sub-block scale), each converted to f32 and fused-multiply-added by
// d = y.d * x.d into its own accumulator; the mins as one scalar fmaf per super-block (summs += dmin * m,
// contracted by GCC's default -ffp-contract=fast under -std=gnu11); result hsum_float_8(acc) + summs.
// A: lanes 0..3 (values 0..15 of each 32), B: lanes 4..7.
@inline function dot_q5_K(w: usize, a: usize, ax: usize, nb: i32): f32 {
  let c0 = f64x2.splat(0), c1 = c0, c2 = c0, c3 = c0;
  let summs: f32 = 0;
  const end = w + <usize>nb * 176;
  while (w < end) {
    const ad = load<f32>(a);
    const dd = f64x2.splat(<f64>(ad * h2f(load<u16>(w))));
    const smv = k4_scales(w + 4);
    summs = fmaf(-ad * h2f(load<u16>(w, 2)), <f32>k4_summins(smv, a), summs);
    // sub-block scales as i32 pairs (lane 0: chunk's low sub-block, lane 1: high), rotated per chunk
    let sc = i32x4.extend_low_i16x8_u(i16x8.extend_low_i8x16_u(smv));
    let sc2 = i32x4.extend_high_i16x8_u(i16x8.extend_low_i8x16_u(smv));
    let s16 = i16x8.extend_low_i8x16_u(smv);
    let h0 = v128.load(w, 16), h1 = v128.load(w, 32);
    let A = i32x4.splat(0), B = A;
    let qs = w + 48, aq = a + 4, x = ax;
    const qe = qs + 128;
    while (qs < qe) {
      const q0 = v128.load(qs), q1 = v128.load(qs, 16);
      const sl = i32x4.shuffle(sc, sc, 0, 0, 0, 0), sh = i32x4.shuffle(sc, sc, 1, 1, 1, 1);
      const l16 = i8x16.shuffle(s16, s16, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1), h16 = i8x16.shuffle(s16, s16, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3);
      A = i32x4.add(A, i32x4.add(dot16s(q5k_lo(q0, h0), aq, x, l16, sl), dot16s(q5k_hi(q0, h0), aq + 32, x + 64, h16, sh)));
      B = i32x4.add(B, i32x4.add(dot16s(q5k_lo(q1, h1), aq + 16, x + 32, l16, sl), dot16s(q5k_hi(q1, h1), aq + 48, x + 96, h16, sh)));
      s16 = i8x16.shuffle(s16, s16, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3);
      sc = i32x4.shuffle(sc, sc2, 2, 3, 4, 5);
      sc2 = i32x4.shuffle(sc2, sc2, 2, 3, 0, 1);
      h0 = i16x8.shr_u(h0, 2); h1 = i16x8.shr_u(h1, 2);
      qs += 32; aq += 64; x += 128;
    }
    // |lane| <= 8 * 63 * 4 * 31 * 127 < 2^24: exact in f32, so straight to f64
    const fA = f32x4.convert_i32x4_s(A), fB = f32x4.convert_i32x4_s(B);
    if (ASC_FEATURE_RELAXED_SIMD) {
      c0 = fma4_dd(fA, dd, c0); c2 = fma4_dd(fB, dd, c2);
    } else {
      c0 = fma2(f64x2.mul(lo_f64(fA), dd), c0);
      c1 = fma2(f64x2.mul(hi_f64(fA), dd), c1);
      c2 = fma2(f64x2.mul(lo_f64(fB), dd), c2);
      c3 = fma2(f64x2.mul(hi_f64(fB), dd), c3);
    }
    w += 176; a += 292; ax += 512;
  }
  return hsum_float_8(lanes4(c0, c1), lanes4(c2, c3)) + summs;
}
// dot_q5_K for two activation rows (tokens) at once, for prefill: the 5-bit values decoded once for both,
// each token with its own accumulators in the same order (the same bits as two dot_q5_K calls)
@inline function dot2t_q5_K(w: usize, a: usize, as: usize, ax: usize, axs: usize, nb: i32, y: usize, ys: usize): void {
  let c0 = f64x2.splat(0), c1 = c0, c2 = c0, c3 = c0, e0 = c0, e1 = c0, e2 = c0, e3 = c0;
  let summs: f32 = 0, summs2: f32 = 0;
  const end = w + <usize>nb * 176;
  while (w < end) {
    const ad = load<f32>(a), ad2 = load<f32>(a + as);
    const hd = h2f(load<u16>(w)), hm = h2f(load<u16>(w, 2));
    const smv = k4_scales(w + 4);
    summs = fmaf(-ad * hm, <f32>k4_summins(smv, a), summs);
    summs2 = fmaf(-ad2 * hm, <f32>k4_summins(smv, a + as), summs2);
    let sc = i32x4.extend_low_i16x8_u(i16x8.extend_low_i8x16_u(smv));
    let sc2 = i32x4.extend_high_i16x8_u(i16x8.extend_low_i8x16_u(smv));
    let s16 = i16x8.extend_low_i8x16_u(smv);
    let h0 = v128.load(w, 16), h1 = v128.load(w, 32);
    let A = i32x4.splat(0), B = A, A2 = A, B2 = A;
    let qs = w + 48, aq = a + 4, x = ax;
    const qe = qs + 128;
    while (qs < qe) {
      const q0 = v128.load(qs), q1 = v128.load(qs, 16);
      const sl = i32x4.shuffle(sc, sc, 0, 0, 0, 0), sh = i32x4.shuffle(sc, sc, 1, 1, 1, 1);
      const l16 = i8x16.shuffle(s16, s16, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1), h16 = i8x16.shuffle(s16, s16, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3);
      const v0 = q5k_lo(q0, h0), v2 = q5k_hi(q0, h0);
      A = i32x4.add(A, i32x4.add(dot16s(v0, aq, x, l16, sl), dot16s(v2, aq + 32, x + 64, h16, sh)));
      A2 = i32x4.add(A2, i32x4.add(dot16s(v0, aq + as, x + axs, l16, sl), dot16s(v2, aq + as + 32, x + axs + 64, h16, sh)));
      const v1 = q5k_lo(q1, h1), v3 = q5k_hi(q1, h1);
      B = i32x4.add(B, i32x4.add(dot16s(v1, aq + 16, x + 32, l16, sl), dot16s(v3, aq + 48, x + 96, h16, sh)));
      B2 = i32x4.add(B2, i32x4.add(dot16s(v1, aq + as + 16, x + axs + 32, l16, sl), dot16s(v3, aq + as + 48, x + axs + 96, h16, sh)));
      s16 = i8x16.shuffle(s16, s16, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3);
      sc = i32x4.shuffle(sc, sc2, 2, 3, 4, 5);
      sc2 = i32x4.shuffle(sc2, sc2, 2, 3, 0, 1);
      h0 = i16x8.shr_u(h0, 2); h1 = i16x8.shr_u(h1, 2);
      qs += 32; aq += 64; x += 128;
    }
    const dd = f64x2.splat(<f64>(ad * hd)), dd2 = f64x2.splat(<f64>(ad2 * hd));
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
    w += 176; a += 292; ax += 512;
  }
  store<f32>(y, hsum_float_8(lanes4(c0, c1), lanes4(c2, c3)) + summs);
  store<f32>(y + ys, hsum_float_8(lanes4(e0, e1), lanes4(e2, e3)) + summs2);
}
export function mm_q5_K(r0: i32, r1: i32, w: usize, ws: usize, a: usize, as: usize, nTok: i32, y: usize, ys: usize, nb: i32, ax: usize, axs: usize): void {
  // tiles of ROW_TILE rows stay in L1 while the activation rows pass over them; tokens in pairs
  for (let rt = r0; rt < r1; rt += ROW_TILE) {
    const re = min(rt + ROW_TILE, r1);
    let t = 0;
    for (; t + 2 <= nTok; t += 2) {
      const at = a + <usize>t * as, xt = ax + <usize>t * axs, yt = y + <usize>t * ys;
      for (let r = rt; r < re; r++) dot2t_q5_K(w + <usize>r * ws, at, as, xt, axs, nb, yt + (<usize>r << 2), ys);
    }
    for (; t < nTok; t++) {
      const at = a + <usize>t * as, xt = ax + <usize>t * axs, yt = y + <usize>t * ys;
      for (let r = rt; r < re; r++) store<f32>(yt + (<usize>r << 2), dot_q5_K(w + <usize>r * ws, at, xt, nb));
    }
  }
}
