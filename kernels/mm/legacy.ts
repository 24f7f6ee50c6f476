import { h2f, h2f_4 } from '../common/f16';
import { kvalues_iq4nl } from '../common/kquant';
import { dot32_u16, dot_s8s8, hsum_f32x4, hsum_i32x4 } from '../common/simd';
import { ROW_TILE } from './tile';

// 5th bits of a Q5 block's 32 values (qh) as 0x10 on the u16 lanes matching the nibble layout of
// load8x8_u(qs) / load8x8_u(qs, 8): elements 0..7, 8..15 (low nibbles) and 16..23, 24..31 (high nibbles)
@inline function q5_hbits(qh: u32, shift: u32, half: i32): v128 {
  const v = i16x8.splat(<i16>((qh >> shift) & 0xffff));
  const bits = half ? i16x8(0x100, 0x200, 0x400, 0x800, 0x1000, 0x2000, 0x4000, -0x8000) : i16x8(1, 2, 4, 8, 16, 32, 64, 128);
  return v128.and(i16x8.eq(v128.and(v, bits), bits), i16x8.splat(0x10));
}
// one Q4_1/Q5_0/Q5_1-style block: 16 bytes of nibbles at q (+ 5th bits when qh is given) . 32 int8 at a
@inline function q45_block(q: usize, a: usize, five: bool, qh: u32): v128 {
  const m = i16x8.splat(0x0f);
  const u0 = v128.load8x8_u(q), u1 = v128.load8x8_u(q, 8);
  let x0 = v128.and(u0, m), x1 = v128.and(u1, m), x2 = i16x8.shr_u(u0, 4), x3 = i16x8.shr_u(u1, 4);
  if (five) {
    x0 = v128.or(x0, q5_hbits(qh, 0, 0)); x1 = v128.or(x1, q5_hbits(qh, 0, 1));
    x2 = v128.or(x2, q5_hbits(qh, 16, 0)); x3 = v128.or(x3, q5_hbits(qh, 16, 1));
  }
  return dot32_u16(x0, x1, x2, x3, a);
}
// Q4_1 / Q5_1 x Q8_1: sum_b dw*da*isum + mw*sa, scales of 4 blocks widened at once
@inline function dot_q4_1_q5_1(w: usize, a: usize, ax: usize, nb: i32, five: bool): f32 {
  const bb: usize = five ? 24 : 20, qo: usize = five ? 8 : 4;
  let acc = f32x4.splat(0), accm = f32x4.splat(0);
  const sx = ax + (<usize>nb << 2);
  let b = 0;
  for (; b + 4 <= nb; b += 4) {
    let dv = f32x4.mul(h2f_4(w, bb), v128.load(ax + (<usize>b << 2)));
    accm = f32x4.add(accm, f32x4.mul(h2f_4(w + 2, bb), v128.load(sx + (<usize>b << 2))));
    const we = w + 4 * bb;
    while (w < we) {
      const p = q45_block(w + qo, a + 4, five, five ? load<u32>(w, 4) : 0);
      acc = f32x4.add(acc, f32x4.mul(f32x4.convert_i32x4_s(p), i32x4.shuffle(dv, dv, 0, 0, 0, 0)));
      dv = i32x4.shuffle(dv, dv, 1, 2, 3, 0);
      w += bb; a += 36;
    }
  }
  let r = hsum_f32x4(acc) + hsum_f32x4(accm);
  for (; b < nb; b++) {
    const p = hsum_i32x4(q45_block(w + qo, a + 4, five, five ? load<u32>(w, 4) : 0));
    r += h2f(load<u16>(w)) * load<f32>(ax + (<usize>b << 2)) * <f32>p + h2f(load<u16>(w, 2)) * load<f32>(sx + (<usize>b << 2));
    w += bb; a += 36;
  }
  return r;
}
export function mm_q4_1(r0: i32, r1: i32, w: usize, ws: usize, a: usize, as: usize, nTok: i32, y: usize, ys: usize, nb: i32, ax: usize, axs: usize): void {
  for (let rt = r0; rt < r1; rt += ROW_TILE) {
    const re = min(rt + ROW_TILE, r1);
    for (let t = 0; t < nTok; t++) {
      const at = a + <usize>t * as, xt = ax + <usize>t * axs, yt = y + <usize>t * ys;
      for (let r = rt; r < re; r++) store<f32>(yt + (<usize>r << 2), dot_q4_1_q5_1(w + <usize>r * ws, at, xt, nb, false));
    }
  }
}
export function mm_q5_1(r0: i32, r1: i32, w: usize, ws: usize, a: usize, as: usize, nTok: i32, y: usize, ys: usize, nb: i32, ax: usize, axs: usize): void {
  for (let rt = r0; rt < r1; rt += ROW_TILE) {
    const re = min(rt + ROW_TILE, r1);
    for (let t = 0; t < nTok; t++) {
      const at = a + <usize>t * as, xt = ax + <usize>t * axs, yt = y + <usize>t * ys;
      for (let r = rt; r < re; r++) store<f32>(yt + (<usize>r << 2), dot_q4_1_q5_1(w + <usize>r * ws, at, xt, nb, true));
    }
  }
}
// Q5_0 x Q8_0 (aux table): values (nibble | 5th bit) - 16, the offset folded out as 2 * (8 * sum(q))
@inline function dot_q5_0(w: usize, a: usize, ax: usize, nb: i32): f32 {
  let acc = f32x4.splat(0);
  let cp = ax + (<usize>nb << 2);
  let b = 0;
  for (; b + 4 <= nb; b += 4) {
    let dv = f32x4.mul(h2f_4(w, 22), v128.load(ax + (<usize>b << 2)));
    const we = w + 88;
    while (w < we) {
      const p = i32x4.sub(q45_block(w + 6, a + 2, true, load<u32>(w, 2)), i32x4.shl(v128.load(cp), 1));
      acc = f32x4.add(acc, f32x4.mul(f32x4.convert_i32x4_s(p), i32x4.shuffle(dv, dv, 0, 0, 0, 0)));
      dv = i32x4.shuffle(dv, dv, 1, 2, 3, 0);
      w += 22; a += 34; cp += 16;
    }
  }
  let r = hsum_f32x4(acc);
  for (; b < nb; b++) {
    const p = hsum_i32x4(q45_block(w + 6, a + 2, true, load<u32>(w, 2))) - (load<i32>(cp) << 1);
    r += h2f(load<u16>(w)) * load<f32>(ax + (<usize>b << 2)) * <f32>p;
    w += 22; a += 34; cp += 16;
  }
  return r;
}
export function mm_q5_0(r0: i32, r1: i32, w: usize, ws: usize, a: usize, as: usize, nTok: i32, y: usize, ys: usize, nb: i32, ax: usize, axs: usize): void {
  for (let rt = r0; rt < r1; rt += ROW_TILE) {
    const re = min(rt + ROW_TILE, r1);
    for (let t = 0; t < nTok; t++) {
      const at = a + <usize>t * as, xt = ax + <usize>t * axs, yt = y + <usize>t * ys;
      for (let r = rt; r < re; r++) store<f32>(yt + (<usize>r << 2), dot_q5_0(w + <usize>r * ws, at, xt, nb));
    }
  }
}
@inline function dot_iq4_nl(w: usize, a: usize, ax: usize, nb: i32): f32 {
  let acc = f32x4.splat(0);
  const m4 = i8x16.splat(0x0f), kv = kvalues_iq4nl();
  let dp = ax;
  const we = w + <usize>nb * 18;
  while (w < we) {
    const q = v128.load(w, 2);
    const lo = i8x16.swizzle(kv, v128.and(q, m4)), hi = i8x16.swizzle(kv, v128.and(i16x8.shr_u(q, 4), m4));
    const p = i32x4.add(dot_s8s8(lo, v128.load(a, 2)), dot_s8s8(hi, v128.load(a, 18)));
    acc = f32x4.add(acc, f32x4.mul(f32x4.convert_i32x4_s(p), f32x4.splat(h2f(load<u16>(w)) * load<f32>(dp))));
    w += 18; a += 34; dp += 4;
  }
  return hsum_f32x4(acc);
}
export function mm_iq4_nl(r0: i32, r1: i32, w: usize, ws: usize, a: usize, as: usize, nTok: i32, y: usize, ys: usize, nb: i32, ax: usize, axs: usize): void {
  for (let rt = r0; rt < r1; rt += ROW_TILE) {
    const re = min(rt + ROW_TILE, r1);
    for (let t = 0; t < nTok; t++) {
      const at = a + <usize>t * as, xt = ax + <usize>t * axs, yt = y + <usize>t * ys;
      for (let r = rt; r < re; r++) store<f32>(yt + (<usize>r << 2), dot_iq4_nl(w + <usize>r * ws, at, xt, nb));
    }
  }
}
