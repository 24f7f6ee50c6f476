import { h2f } from '../common/f16';
import { k4_scales, k4_summins, kvalues_iq4nl } from '../common/kquant';
import { dot32_u16, dot_s8s8, hsum4_i32, hsum_f32x4, hsum_i32x4 } from '../common/simd';
import { ROW_TILE } from './tile';

@inline function dot_q5_K(w: usize, a: usize, nb: i32): f32 {
  let acc = f32x4.splat(0);
  let accm: f32 = 0;
  const m4 = i16x8.splat(0x0f), b4 = i16x8.splat(0x10);
  const end = w + <usize>nb * 176;
  while (w < end) {
    const ad = load<f32>(a);
    const d = h2f(load<u16>(w)) * ad;
    const dmin = h2f(load<u16>(w, 2)) * ad;
    const smv = k4_scales(w + 4);
    accm += dmin * <f32>k4_summins(smv, a);
    let sc = i32x4.extend_low_i16x8_u(i16x8.extend_low_i8x16_u(smv));
    let sc2 = i32x4.extend_high_i16x8_u(i16x8.extend_low_i8x16_u(smv));
    // qh bytes (element l's 5th bits for the 8 sub-blocks) on u16 lanes, shifted right by 2 per step
    let h0 = v128.load8x8_u(w, 16), h1 = v128.load8x8_u(w, 24), h2 = v128.load8x8_u(w, 32), h3 = v128.load8x8_u(w, 40);
    let isum = i32x4.splat(0);
    let qs = w + 48, q8 = a + 4;
    const qe = qs + 128;
    while (qs < qe) {
      const u0 = v128.load8x8_u(qs), u1 = v128.load8x8_u(qs, 8), u2 = v128.load8x8_u(qs, 16), u3 = v128.load8x8_u(qs, 24);
      const lo = dot32_u16(
        v128.or(v128.and(u0, m4), v128.and(i16x8.shl(h0, 4), b4)), v128.or(v128.and(u1, m4), v128.and(i16x8.shl(h1, 4), b4)),
        v128.or(v128.and(u2, m4), v128.and(i16x8.shl(h2, 4), b4)), v128.or(v128.and(u3, m4), v128.and(i16x8.shl(h3, 4), b4)), q8);
      const hi = dot32_u16(
        v128.or(i16x8.shr_u(u0, 4), v128.and(i16x8.shl(h0, 3), b4)), v128.or(i16x8.shr_u(u1, 4), v128.and(i16x8.shl(h1, 3), b4)),
        v128.or(i16x8.shr_u(u2, 4), v128.and(i16x8.shl(h2, 3), b4)), v128.or(i16x8.shr_u(u3, 4), v128.and(i16x8.shl(h3, 3), b4)), q8 + 32);
      isum = i32x4.add(isum, i32x4.add(i32x4.mul(lo, i32x4.shuffle(sc, sc, 0, 0, 0, 0)), i32x4.mul(hi, i32x4.shuffle(sc, sc, 1, 1, 1, 1))));
      sc = i32x4.shuffle(sc, sc2, 2, 3, 4, 5);
      sc2 = i32x4.shuffle(sc2, sc2, 2, 3, 0, 1);
      h0 = i16x8.shr_u(h0, 2); h1 = i16x8.shr_u(h1, 2); h2 = i16x8.shr_u(h2, 2); h3 = i16x8.shr_u(h3, 2);
      qs += 32; q8 += 64;
    }
    acc = f32x4.add(acc, f32x4.mul(f32x4.convert_i32x4_s(isum), f32x4.splat(d)));
    w += 176; a += 292;
  }
  return hsum_f32x4(acc) - accm;
}
export function mm_q5_K(r0: i32, r1: i32, w: usize, ws: usize, a: usize, as: usize, nTok: i32, y: usize, ys: usize, nb: i32): void {
  // tiles of ROW_TILE rows stay in L1 while each activation row passes over them
  for (let rt = r0; rt < r1; rt += ROW_TILE) {
    const re = min(rt + ROW_TILE, r1);
    for (let t = 0; t < nTok; t++) {
      const at = a + <usize>t * as, yt = y + <usize>t * ys;
      for (let r = rt; r < re; r++) store<f32>(yt + (<usize>r << 2), dot_q5_K(w + <usize>r * ws, at, nb));
    }
  }
}
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
// Q3_K's 16 6-bit scales (unsigned, before the -32) from the 12 packed bytes at s, as ggml's aux shuffle
@inline function q3_scales(s: usize): v128 {
  const a0 = load<u32>(s), a1 = load<u32>(s, 4), tmp = load<u32>(s, 8);
  let v = i32x4.splat((a0 & 0x0f0f0f0f) | (((tmp >> 0) & 0x03030303) << 4));
  v = i32x4.replace_lane(v, 1, (a1 & 0x0f0f0f0f) | (((tmp >> 2) & 0x03030303) << 4));
  v = i32x4.replace_lane(v, 2, ((a0 >> 4) & 0x0f0f0f0f) | (((tmp >> 4) & 0x03030303) << 4));
  return i32x4.replace_lane(v, 3, ((a1 >> 4) & 0x0f0f0f0f) | (((tmp >> 6) & 0x03030303) << 4));
}
// Q3_K x Q8_K: x = (q & 3) | hbit << 2 in 0..7 on u16 lanes, value = x - 4; the -4 is folded out through
// the bsums as -4 * sum_j scale_j * bsum_j
@inline function dot_q3_K(w: usize, a: usize, nb: i32): f32 {
  let acc = f32x4.splat(0);
  const m3 = i16x8.splat(3), m4 = i16x8.splat(4);
  const end = w + <usize>nb * 110;
  while (w < end) {
    const d = h2f(load<u16>(w, 108)) * load<f32>(a);
    const sc = i8x16.sub(q3_scales(w + 96), i8x16.splat(32));
    const s16l = i16x8.extend_low_i8x16_s(sc), s16h = i16x8.extend_high_i8x16_s(sc);
    const off = i32x4.add(i32x4.dot_i16x8_s(s16l, v128.load(a, 260)), i32x4.dot_i16x8_s(s16h, v128.load(a, 276)));
    let isum = i32x4.mul(off, i32x4.splat(-4));
    let v0 = i32x4.extend_low_i16x8_s(s16l), v1 = i32x4.extend_high_i16x8_s(s16l);
    let v2 = i32x4.extend_low_i16x8_s(s16h), v3 = i32x4.extend_high_i16x8_s(s16h);
    let q8 = a + 4;
    // 4 steps of 4 sub-blocks: step i reads quants at w + 32 + 32*(i >> 1), shifts 4*(i & 1) and +2,
    // and hmask bits 2i and 2i+1; operands are reloaded per step to keep few vectors live
    for (let i: u32 = 0; i < 4; i++) {
      const q3 = w + 32 + ((<usize>i >> 1) << 5);
      const sh = (i & 1) << 2, bt = i << 1;
      const u0 = i16x8.shr_u(v128.load8x8_u(q3), sh), u1 = i16x8.shr_u(v128.load8x8_u(q3, 8), sh);
      const h0 = i16x8.shr_u(v128.load8x8_u(w), bt), h1 = i16x8.shr_u(v128.load8x8_u(w, 8), bt);
      const pa = i32x4.add(
        i32x4.dot_i16x8_s(v128.or(v128.and(u0, m3), v128.and(i16x8.shl(h0, 2), m4)), v128.load8x8_s(q8)),
        i32x4.dot_i16x8_s(v128.or(v128.and(u1, m3), v128.and(i16x8.shl(h1, 2), m4)), v128.load8x8_s(q8, 8)));
      const pc = i32x4.add(
        i32x4.dot_i16x8_s(v128.or(v128.and(i16x8.shr_u(u0, 2), m3), v128.and(i16x8.shl(h0, 1), m4)), v128.load8x8_s(q8, 32)),
        i32x4.dot_i16x8_s(v128.or(v128.and(i16x8.shr_u(u1, 2), m3), v128.and(i16x8.shl(h1, 1), m4)), v128.load8x8_s(q8, 40)));
      const u2 = i16x8.shr_u(v128.load8x8_u(q3, 16), sh), u3 = i16x8.shr_u(v128.load8x8_u(q3, 24), sh);
      const h2 = i16x8.shr_u(v128.load8x8_u(w, 16), bt), h3 = i16x8.shr_u(v128.load8x8_u(w, 24), bt);
      const pb = i32x4.add(
        i32x4.dot_i16x8_s(v128.or(v128.and(u2, m3), v128.and(i16x8.shl(h2, 2), m4)), v128.load8x8_s(q8, 16)),
        i32x4.dot_i16x8_s(v128.or(v128.and(u3, m3), v128.and(i16x8.shl(h3, 2), m4)), v128.load8x8_s(q8, 24)));
      const pd = i32x4.add(
        i32x4.dot_i16x8_s(v128.or(v128.and(i16x8.shr_u(u2, 2), m3), v128.and(i16x8.shl(h2, 1), m4)), v128.load8x8_s(q8, 48)),
        i32x4.dot_i16x8_s(v128.or(v128.and(i16x8.shr_u(u3, 2), m3), v128.and(i16x8.shl(h3, 1), m4)), v128.load8x8_s(q8, 56)));
      isum = i32x4.add(isum, i32x4.mul(hsum4_i32(pa, pb, pc, pd), v0));
      const t = v0; v0 = v1; v1 = v2; v2 = v3; v3 = t;
      q8 += 64;
    }
    acc = f32x4.add(acc, f32x4.mul(f32x4.convert_i32x4_s(isum), f32x4.splat(d)));
    w += 110; a += 292;
  }
  return hsum_f32x4(acc);
}
export function mm_q3_K(r0: i32, r1: i32, w: usize, ws: usize, a: usize, as: usize, nTok: i32, y: usize, ys: usize, nb: i32): void {
  // tiles of ROW_TILE rows stay in L1 while each activation row passes over them
  for (let rt = r0; rt < r1; rt += ROW_TILE) {
    const re = min(rt + ROW_TILE, r1);
    for (let t = 0; t < nTok; t++) {
      const at = a + <usize>t * as, yt = y + <usize>t * ys;
      for (let r = rt; r < re; r++) store<f32>(yt + (<usize>r << 2), dot_q3_K(w + <usize>r * ws, at, nb));
    }
  }
}
// IQ4_XS (136 B / 256: f16 d, u16 scales_h, u8 scales_l[4], qs[128]) x Q8_K; 6-bit sub-block scales - 32
@inline function dot_iq4_xs(w: usize, a: usize, nb: i32): f32 {
  let acc: f32 = 0;
  const m4 = i8x16.splat(0x0f), kv = kvalues_iq4nl();
  const end = w + <usize>nb * 136;
  while (w < end) {
    const d = h2f(load<u16>(w)) * load<f32>(a);
    const sh = <u32>load<u16>(w, 2);
    const sl = load<u32>(w, 4);
    let isum = 0;
    let q = w + 8, q8 = a + 4;
    for (let ib: u32 = 0; ib < 8; ib++) {
      const ls = <i32>(((sl >> (4 * ib)) & 0xf) | (((sh >> (2 * ib)) & 3) << 4)) - 32;
      const v = v128.load(q);
      const lo = i8x16.swizzle(kv, v128.and(v, m4)), hi = i8x16.swizzle(kv, v128.and(i16x8.shr_u(v, 4), m4));
      isum += ls * hsum_i32x4(i32x4.add(dot_s8s8(lo, v128.load(q8)), dot_s8s8(hi, v128.load(q8, 16))));
      q += 16; q8 += 32;
    }
    acc += d * <f32>isum;
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
