import { h2f } from '../common/f16';
import { k4_scales, k4_summins } from '../common/kquant';
import { hsum4_i32, hsum_i32x4 } from '../common/simd';
import { ROW_TILE } from './tile';

// Q5_K x Q8_K (176 B per 256 values: f16 d, f16 dmin, 12 scale bytes as Q4_K, qh[32], qs[128]), free order
// (llama.cpp's x86 build runs ggml_vec_dot_q5_K_q8_K's AVX2 lanes; not reproduced, no fixture pins them).
// Value l of 64-value chunk j: the low (l < 32) or high nibble of qs[32j + l % 32] plus bit 2j (2j + 1) of
// qh[l % 32] as 16; times the sub-block's 6-bit scale, minus its 6-bit min.
// The integers are exact and the same in both builds: the whole super-block's sum in i32 (|.| < 2^26), then
// one multiply-add by d and one by dmin per super-block, so one token alone and 4 tokens together give the
// same bits (batch-invariant).

// chunk j's 64 5-bit values as 4 byte vectors: sub-block 2j (v0 = values 0..15, v1 = 16..31) and 2j + 1
// (v2, v3); h0/h1: qh shifted right by 2j
@inline function q5k_lo(q: v128, h: v128): v128 {
  return v128.or(v128.and(q, i8x16.splat(0x0f)), v128.and(i16x8.shl(h, 4), i8x16.splat(0x10)));
}
@inline function q5k_hi(q: v128, h: v128): v128 {
  return v128.or(v128.and(i16x8.shr_u(q, 4), i8x16.splat(0x0f)), v128.and(i16x8.shl(h, 3), i8x16.splat(0x10)));
}
// 32 values (u8, < 32) . one sub-block's activations: int8 quants at aq (relaxed SIMD, the values are the
// 7-bit operand) or widened i16 quants at ax (SIMD128); same integer sum, lanes differ
@inline function dot32x(v0: v128, v1: v128, aq: usize, ax: usize): v128 {
  if (ASC_FEATURE_RELAXED_SIMD) {
    return i32x4.relaxed_dot_i8x16_i7x16_add_s(v128.load(aq, 16), v1, i32x4.relaxed_dot_i8x16_i7x16_add_s(v128.load(aq), v0, i32x4.splat(0)));
  }
  return i32x4.add(
    i32x4.add(i32x4.dot_i16x8_s(i16x8.extend_low_i8x16_u(v0), v128.load(ax)), i32x4.dot_i16x8_s(i16x8.extend_high_i8x16_u(v0), v128.load(ax, 16))),
    i32x4.add(i32x4.dot_i16x8_s(i16x8.extend_low_i8x16_u(v1), v128.load(ax, 32)), i32x4.dot_i16x8_s(i16x8.extend_high_i8x16_u(v1), v128.load(ax, 48))));
}
// one token's chunk: (sub-block 2j . acts) * sl + (2j + 1 . acts) * sh
@inline function q5k_tok(v0: v128, v1: v128, v2: v128, v3: v128, aq: usize, ax: usize, sl: v128, sh: v128): v128 {
  return i32x4.add(i32x4.mul(dot32x(v0, v1, aq, ax), sl), i32x4.mul(dot32x(v2, v3, aq + 32, ax + 64), sh));
}
@inline function dot_q5_K(w: usize, a: usize, ax: usize, nb: i32): f32 {
  let acc: f32 = 0, accm: f32 = 0;
  const end = w + <usize>nb * 176;
  while (w < end) {
    const ad = load<f32>(a);
    const d = h2f(load<u16>(w)) * ad;
    const dmin = h2f(load<u16>(w, 2)) * ad;
    const smv = k4_scales(w + 4);
    // sub-block scales as i32 pairs (lane 0: chunk's low sub-block, lane 1: high), rotated per chunk
    let sc = i32x4.extend_low_i16x8_u(i16x8.extend_low_i8x16_u(smv));
    let sc2 = i32x4.extend_high_i16x8_u(i16x8.extend_low_i8x16_u(smv));
    let h0 = v128.load(w, 16), h1 = v128.load(w, 32);
    let isum = i32x4.splat(0);
    let qs = w + 48, aq = a + 4, x = ax;
    const qe = qs + 128;
    while (qs < qe) {
      const q0 = v128.load(qs), q1 = v128.load(qs, 16);
      isum = i32x4.add(isum, q5k_tok(q5k_lo(q0, h0), q5k_lo(q1, h1), q5k_hi(q0, h0), q5k_hi(q1, h1), aq, x,
        i32x4.shuffle(sc, sc, 0, 0, 0, 0), i32x4.shuffle(sc, sc, 1, 1, 1, 1)));
      sc = i32x4.shuffle(sc, sc2, 2, 3, 4, 5);
      sc2 = i32x4.shuffle(sc2, sc2, 2, 3, 0, 1);
      h0 = i16x8.shr_u(h0, 2); h1 = i16x8.shr_u(h1, 2);
      qs += 32; aq += 64; x += 128;
    }
    acc += <f32>hsum_i32x4(isum) * d;
    accm += <f32>k4_summins(smv, a) * dmin;
    w += 176; a += 292; ax += 512;
  }
  return acc - accm;
}
// one weight row x 4 activation rows (tokens): the 5-bit values decoded once for the 4 tokens; each token's
// float steps are dot_q5_K's (lane t = token t), so the results equal 4 dot_q5_K calls bit for bit
@inline function dot4t_q5_K(w: usize, a: usize, as: usize, ax: usize, axs: usize, nb: i32, y: usize, ys: usize): void {
  let acc = f32x4.splat(0), accm = f32x4.splat(0);
  const end = w + <usize>nb * 176;
  while (w < end) {
    let ad = f32x4.splat(load<f32>(a));
    ad = f32x4.replace_lane(ad, 1, load<f32>(a + as));
    ad = f32x4.replace_lane(ad, 2, load<f32>(a + 2 * as));
    ad = f32x4.replace_lane(ad, 3, load<f32>(a + 3 * as));
    const d = f32x4.mul(f32x4.splat(h2f(load<u16>(w))), ad);
    const dmin = f32x4.mul(f32x4.splat(h2f(load<u16>(w, 2))), ad);
    const smv = k4_scales(w + 4);
    let mins = i32x4.splat(k4_summins(smv, a));
    mins = i32x4.replace_lane(mins, 1, k4_summins(smv, a + as));
    mins = i32x4.replace_lane(mins, 2, k4_summins(smv, a + 2 * as));
    mins = i32x4.replace_lane(mins, 3, k4_summins(smv, a + 3 * as));
    let sc = i32x4.extend_low_i16x8_u(i16x8.extend_low_i8x16_u(smv));
    let sc2 = i32x4.extend_high_i16x8_u(i16x8.extend_low_i8x16_u(smv));
    let h0 = v128.load(w, 16), h1 = v128.load(w, 32);
    let s0 = i32x4.splat(0), s1 = s0, s2 = s0, s3 = s0;
    let qs = w + 48, aq = a + 4, x = ax;
    const qe = qs + 128;
    while (qs < qe) {
      const q0 = v128.load(qs), q1 = v128.load(qs, 16);
      const v0 = q5k_lo(q0, h0), v1 = q5k_lo(q1, h1), v2 = q5k_hi(q0, h0), v3 = q5k_hi(q1, h1);
      const sl = i32x4.shuffle(sc, sc, 0, 0, 0, 0), sh = i32x4.shuffle(sc, sc, 1, 1, 1, 1);
      s0 = i32x4.add(s0, q5k_tok(v0, v1, v2, v3, aq, x, sl, sh));
      s1 = i32x4.add(s1, q5k_tok(v0, v1, v2, v3, aq + as, x + axs, sl, sh));
      s2 = i32x4.add(s2, q5k_tok(v0, v1, v2, v3, aq + 2 * as, x + 2 * axs, sl, sh));
      s3 = i32x4.add(s3, q5k_tok(v0, v1, v2, v3, aq + 3 * as, x + 3 * axs, sl, sh));
      sc = i32x4.shuffle(sc, sc2, 2, 3, 4, 5);
      sc2 = i32x4.shuffle(sc2, sc2, 2, 3, 0, 1);
      h0 = i16x8.shr_u(h0, 2); h1 = i16x8.shr_u(h1, 2);
      qs += 32; aq += 64; x += 128;
    }
    acc = f32x4.add(acc, f32x4.mul(f32x4.convert_i32x4_s(hsum4_i32(s0, s1, s2, s3)), d));
    accm = f32x4.add(accm, f32x4.mul(f32x4.convert_i32x4_s(mins), dmin));
    w += 176; a += 292; ax += 512;
  }
  const r = f32x4.sub(acc, accm);
  store<f32>(y, f32x4.extract_lane(r, 0));
  store<f32>(y + ys, f32x4.extract_lane(r, 1));
  store<f32>(y + 2 * ys, f32x4.extract_lane(r, 2));
  store<f32>(y + 3 * ys, f32x4.extract_lane(r, 3));
}
export function mm_q5_K(r0: i32, r1: i32, w: usize, ws: usize, a: usize, as: usize, nTok: i32, y: usize, ys: usize, nb: i32, ax: usize, axs: usize): void {
  // tiles of ROW_TILE rows stay in L1 while the activation rows pass over them; tokens in groups of 4
  for (let rt = r0; rt < r1; rt += ROW_TILE) {
    const re = min(rt + ROW_TILE, r1);
    let t = 0;
    for (; t + 4 <= nTok; t += 4) {
      const at = a + <usize>t * as, xt = ax + <usize>t * axs, yt = y + <usize>t * ys;
      for (let r = rt; r < re; r++) dot4t_q5_K(w + <usize>r * ws, at, as, xt, axs, nb, yt + (<usize>r << 2), ys);
    }
    for (; t < nTok; t++) {
      const at = a + <usize>t * as, xt = ax + <usize>t * axs, yt = y + <usize>t * ys;
      for (let r = rt; r < re; r++) store<f32>(yt + (<usize>r << 2), dot_q5_K(w + <usize>r * ws, at, xt, nb));
    }
  }
}
