import { h2f } from '../common/f16';
import { k4_scales, k4_summins, kvalues_iq4nl } from '../common/kquant';
import { dot32_u16, dot_s8s8, hsum4_i32, hsum_f32x4, hsum_i32x4 } from '../common/simd';
import { ROW_TILE } from './tile';

// Q2_K x Q8_K: 2-bit values on u16 lanes (shifted by 2 per step), 4 sub-blocks of 16 reduced together and
// scaled by a vector of their 4-bit scales; mins through the bsums
@inline function dot_q2_K(w: usize, a: usize, nb: i32): f32 {
  let acc = f32x4.splat(0);
  let accm: f32 = 0;
  const m3 = i16x8.splat(3);
  const end = w + <usize>nb * 84;
  while (w < end) {
    const ad = load<f32>(a);
    const d = h2f(load<u16>(w, 80)) * ad;
    const dmin = h2f(load<u16>(w, 82)) * ad;
    const scv = v128.load(w);
    const mn = i8x16.shr_u(scv, 4);
    const summ = hsum_i32x4(i32x4.add(i32x4.dot_i16x8_s(i16x8.extend_low_i8x16_u(mn), v128.load(a, 260)), i32x4.dot_i16x8_s(i16x8.extend_high_i8x16_u(mn), v128.load(a, 276))));
    accm += dmin * <f32>summ;
    const sl = v128.and(scv, i8x16.splat(0x0f));
    const s16l = i16x8.extend_low_i8x16_u(sl), s16h = i16x8.extend_high_i8x16_u(sl);
    let v0 = i32x4.extend_low_i16x8_u(s16l), v1 = i32x4.extend_high_i16x8_u(s16l);
    let v2 = i32x4.extend_low_i16x8_u(s16h), v3 = i32x4.extend_high_i16x8_u(s16h);
    let isum = i32x4.splat(0);
    let q8 = a + 4;
    for (let k: usize = 0; k < 2; k++) {
      const q2 = w + 16 + (k << 5);
      let u0 = v128.load8x8_u(q2), u1 = v128.load8x8_u(q2, 8), u2 = v128.load8x8_u(q2, 16), u3 = v128.load8x8_u(q2, 24);
      for (let h = 0; h < 2; h++) {
        // two shift steps: sub-blocks (first 16, last 16) x 2
        const pa = i32x4.add(i32x4.dot_i16x8_s(v128.and(u0, m3), v128.load8x8_s(q8)), i32x4.dot_i16x8_s(v128.and(u1, m3), v128.load8x8_s(q8, 8)));
        const pb = i32x4.add(i32x4.dot_i16x8_s(v128.and(u2, m3), v128.load8x8_s(q8, 16)), i32x4.dot_i16x8_s(v128.and(u3, m3), v128.load8x8_s(q8, 24)));
        u0 = i16x8.shr_u(u0, 2); u1 = i16x8.shr_u(u1, 2); u2 = i16x8.shr_u(u2, 2); u3 = i16x8.shr_u(u3, 2);
        const pc = i32x4.add(i32x4.dot_i16x8_s(v128.and(u0, m3), v128.load8x8_s(q8, 32)), i32x4.dot_i16x8_s(v128.and(u1, m3), v128.load8x8_s(q8, 40)));
        const pd = i32x4.add(i32x4.dot_i16x8_s(v128.and(u2, m3), v128.load8x8_s(q8, 48)), i32x4.dot_i16x8_s(v128.and(u3, m3), v128.load8x8_s(q8, 56)));
        u0 = i16x8.shr_u(u0, 2); u1 = i16x8.shr_u(u1, 2); u2 = i16x8.shr_u(u2, 2); u3 = i16x8.shr_u(u3, 2);
        isum = i32x4.add(isum, i32x4.mul(hsum4_i32(pa, pb, pc, pd), v0));
        const t = v0; v0 = v1; v1 = v2; v2 = v3; v3 = t;
        q8 += 64;
      }
    }
    acc = f32x4.add(acc, f32x4.mul(f32x4.convert_i32x4_s(isum), f32x4.splat(d)));
    w += 84; a += 292;
  }
  return hsum_f32x4(acc) - accm;
}
export function mm_q2_K(r0: i32, r1: i32, w: usize, ws: usize, a: usize, as: usize, nTok: i32, y: usize, ys: usize, nb: i32): void {
  // tiles of ROW_TILE rows stay in L1 while each activation row passes over them
  for (let rt = r0; rt < r1; rt += ROW_TILE) {
    const re = min(rt + ROW_TILE, r1);
    for (let t = 0; t < nTok; t++) {
      const at = a + <usize>t * as, yt = y + <usize>t * ys;
      for (let r = rt; r < re; r++) store<f32>(yt + (<usize>r << 2), dot_q2_K(w + <usize>r * ws, at, nb));
    }
  }
}
// IQ4_XS (136 B / 256: f16 d, u16 scales_h, u8 scales_l[4], qs[128]) x Q8_K; 6-bit sub-block scales - 32.
// Free order: the super-block's exact integer sum, then one multiply-add by d (the order llama.cpp's AVX2
// lanes would give did not match the fixtures better: llama-iq4_xs 3.6e-7 with this one, 2.3e-2 with those).
// Relaxed SIMD: each signed table value as kpos - kneg (both 0..127, the 7-bit operand) in two dots; the
// same integers as the SIMD128 build's widened signed products.
@inline function iq4_kpos(): v128 { return i8x16(0, 0, 0, 0, 0, 0, 0, 0, 1, 13, 25, 38, 53, 69, 89, 113); }
@inline function iq4_kneg(): v128 { return i8x16(127, 104, 83, 65, 49, 35, 22, 10, 0, 0, 0, 0, 0, 0, 0, 0); }
@inline function dot_iq4_xs(w: usize, a: usize, nb: i32): f32 {
  let acc: f32 = 0;
  const m4 = i8x16.splat(0x0f), kv = kvalues_iq4nl();
  const end = w + <usize>nb * 136;
  while (w < end) {
    const d = h2f(load<u16>(w)) * load<f32>(a);
    const sh = <u32>load<u16>(w, 2);
    const sl = load<u32>(w, 4);
    let isum = i32x4.splat(0);
    let q = w + 8, q8 = a + 4;
    for (let ib: u32 = 0; ib < 8; ib++) {
      const ls = <i32>(((sl >> (4 * ib)) & 0xf) | (((sh >> (2 * ib)) & 3) << 4)) - 32;
      const v = v128.load(q);
      const lo = v128.and(v, m4), hi = v128.and(i16x8.shr_u(v, 4), m4);
      if (ASC_FEATURE_RELAXED_SIMD) {
        // i16 pair sums (pmaddubsw, |.| <= 2 * 127 * 128 each); kpos and kneg are never both nonzero for one
        // value, so kpos pairs - kneg pairs is a pair of a * kvalue products, |.| <= 2 * 127 * 128: the i16
        // difference is exact, then one pmaddwd by the scale on i16 lanes per half. Same integers.
        const a0 = v128.load(q8), a1 = v128.load(q8, 16), kp = iq4_kpos(), kn = iq4_kneg(), ls16 = i16x8.splat(<i16>ls);
        const plo = i16x8.sub(i16x8.relaxed_dot_i8x16_i7x16_s(a0, i8x16.swizzle(kp, lo)), i16x8.relaxed_dot_i8x16_i7x16_s(a0, i8x16.swizzle(kn, lo)));
        const phi = i16x8.sub(i16x8.relaxed_dot_i8x16_i7x16_s(a1, i8x16.swizzle(kp, hi)), i16x8.relaxed_dot_i8x16_i7x16_s(a1, i8x16.swizzle(kn, hi)));
        isum = i32x4.add(isum, i32x4.add(i32x4.dot_i16x8_s(plo, ls16), i32x4.dot_i16x8_s(phi, ls16)));
      } else {
        const p = i32x4.add(dot_s8s8(i8x16.swizzle(kv, lo), v128.load(q8)), dot_s8s8(i8x16.swizzle(kv, hi), v128.load(q8, 16)));
        isum = i32x4.add(isum, i32x4.mul(p, i32x4.splat(ls)));
      }
      q += 16; q8 += 32;
    }
    acc += d * <f32>hsum_i32x4(isum);
    w += 136; a += 292;
  }
  return acc;
}
export function mm_iq4_xs(r0: i32, r1: i32, w: usize, ws: usize, a: usize, as: usize, nTok: i32, y: usize, ys: usize, nb: i32): void {
  for (let rt = r0; rt < r1; rt += ROW_TILE) {
    const re = min(rt + ROW_TILE, r1);
    for (let t = 0; t < nTok; t++) {
      const at = a + <usize>t * as, yt = y + <usize>t * ys;
      for (let r = rt; r < re; r++) store<f32>(yt + (<usize>r << 2), dot_iq4_xs(w + <usize>r * ws, at, nb));
    }
  }
}
