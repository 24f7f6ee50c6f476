import { h2f } from '../common/f16';
import { hsum4_i32, hsum_i32x4 } from '../common/simd';
import { ROW_TILE } from './tile';

// Q3_K x Q8_K (110 B per 256 values: hmask[32], qs[64], 12 packed 6-bit scales, f16 d), free order (llama.cpp's
// x86 build runs ggml_vec_dot_q3_K_q8_K's AVX2 lanes; not reproduced). Value l of 32-value step m (0..7,
// chunk c = m >> 2, shift s = m & 3): x = (qs[32c + l] >> 2s) & 3 | (bit m of hmask[l]) << 2, value x - 4,
// times scale 2m + (l >= 16) minus 32. The -4 is folded out through the bsums (-4 * sum_j sc_j * bsum_j).
// The whole super-block's integer sum (exact, the same in both builds), then one multiply-add by d per
// super-block: one token alone and 4 together give the same bits.

// Q3_K's 16 6-bit scales (unsigned, before the -32) from the 12 packed bytes at s, as ggml's aux shuffle
@inline function q3_scales(s: usize): v128 {
  const a0 = load<u32>(s), a1 = load<u32>(s, 4), tmp = load<u32>(s, 8);
  let v = i32x4.splat((a0 & 0x0f0f0f0f) | (((tmp >> 0) & 0x03030303) << 4));
  v = i32x4.replace_lane(v, 1, (a1 & 0x0f0f0f0f) | (((tmp >> 2) & 0x03030303) << 4));
  v = i32x4.replace_lane(v, 2, ((a0 >> 4) & 0x0f0f0f0f) | (((tmp >> 4) & 0x03030303) << 4));
  return i32x4.replace_lane(v, 3, ((a1 >> 4) & 0x0f0f0f0f) | (((tmp >> 6) & 0x03030303) << 4));
}
// 16 values (u8, < 8) . their activations: int8 quants at aq (relaxed SIMD: the values are the 7-bit
// operand) or widened quants at ax (SIMD128); same integer sum
@inline function dot16x(v: v128, aq: usize, ax: usize): v128 {
  if (ASC_FEATURE_RELAXED_SIMD) return i32x4.relaxed_dot_i8x16_i7x16_add_s(v128.load(aq), v, i32x4.splat(0));
  return i32x4.add(i32x4.dot_i16x8_s(i16x8.extend_low_i8x16_u(v), v128.load(ax)), i32x4.dot_i16x8_s(i16x8.extend_high_i8x16_u(v), v128.load(ax, 16)));
}
// 16 values of step m: q the chunk's quant bytes shifted right by 2s, g hmask shifted right by m (on u16
// lanes: the bits a byte needs never cross into or out of it at these shift counts)
@inline function q3k_vals(q: v128, g: v128): v128 {
  return v128.or(v128.and(q, i8x16.splat(3)), v128.and(i16x8.shl(g, 2), i8x16.splat(4)));
}
// the -4 offset term, -4 * sum_j (sc_j - 32) * bsum_j, for the activations at a
@inline function q3k_offset(s16l: v128, s16h: v128, a: usize): i32 {
  return -4 * hsum_i32x4(i32x4.add(i32x4.dot_i16x8_s(s16l, v128.load(a, 260)), i32x4.dot_i16x8_s(s16h, v128.load(a, 276))));
}
@inline function dot_q3_K(w: usize, a: usize, ax: usize, nb: i32): f32 {
  let acc: f32 = 0;
  const end = w + <usize>nb * 110;
  while (w < end) {
    const d = h2f(load<u16>(w, 108)) * load<f32>(a);
    const sc = i8x16.sub(q3_scales(w + 96), i8x16.splat(32));
    const s16l = i16x8.extend_low_i8x16_s(sc), s16h = i16x8.extend_high_i8x16_s(sc);
    let isum = i32x4.splat(0);
    // scales of steps (m, m + 1) as i32x4, rotated every two steps
    let v0 = i32x4.extend_low_i16x8_s(s16l), v1 = i32x4.extend_high_i16x8_s(s16l);
    let v2 = i32x4.extend_low_i16x8_s(s16h), v3 = i32x4.extend_high_i16x8_s(s16h);
    let g0 = v128.load(w), g1 = v128.load(w, 16);
    let aq = a + 4, x = ax;
    for (let c: usize = 0; c < 2; c++) {
      let q0 = v128.load(w + 32 + (c << 5)), q1 = v128.load(w + 48 + (c << 5));
      for (let s = 0; s < 2; s++) {
        const pa = dot16x(q3k_vals(q0, g0), aq, x), pb = dot16x(q3k_vals(q1, g1), aq + 16, x + 32);
        q0 = i16x8.shr_u(q0, 2); q1 = i16x8.shr_u(q1, 2); g0 = i16x8.shr_u(g0, 1); g1 = i16x8.shr_u(g1, 1);
        const pc = dot16x(q3k_vals(q0, g0), aq + 32, x + 64), pd = dot16x(q3k_vals(q1, g1), aq + 48, x + 96);
        q0 = i16x8.shr_u(q0, 2); q1 = i16x8.shr_u(q1, 2); g0 = i16x8.shr_u(g0, 1); g1 = i16x8.shr_u(g1, 1);
        isum = i32x4.add(isum, i32x4.mul(hsum4_i32(pa, pb, pc, pd), v0));
        const t = v0; v0 = v1; v1 = v2; v2 = v3; v3 = t;
        aq += 64; x += 128;
      }
    }
    acc += <f32>(hsum_i32x4(isum) + q3k_offset(s16l, s16h, a)) * d;
    w += 110; a += 292; ax += 512;
  }
  return acc;
}
// one weight row x 4 tokens: each step's values decoded once for the 4 tokens; the float steps per token
// are dot_q3_K's (lane t = token t), so the results equal 4 dot_q3_K calls bit for bit
@inline function dot4t_q3_K(w: usize, a: usize, as: usize, ax: usize, axs: usize, nb: i32, y: usize, ys: usize): void {
  let acc = f32x4.splat(0);
  const end = w + <usize>nb * 110;
  while (w < end) {
    let ad = f32x4.splat(load<f32>(a));
    ad = f32x4.replace_lane(ad, 1, load<f32>(a + as));
    ad = f32x4.replace_lane(ad, 2, load<f32>(a + 2 * as));
    ad = f32x4.replace_lane(ad, 3, load<f32>(a + 3 * as));
    const d = f32x4.mul(f32x4.splat(h2f(load<u16>(w, 108))), ad);
    const sc = i8x16.sub(q3_scales(w + 96), i8x16.splat(32));
    const s16l = i16x8.extend_low_i8x16_s(sc), s16h = i16x8.extend_high_i8x16_s(sc);
    let off = i32x4.splat(q3k_offset(s16l, s16h, a));
    off = i32x4.replace_lane(off, 1, q3k_offset(s16l, s16h, a + as));
    off = i32x4.replace_lane(off, 2, q3k_offset(s16l, s16h, a + 2 * as));
    off = i32x4.replace_lane(off, 3, q3k_offset(s16l, s16h, a + 3 * as));
    let v0 = i32x4.extend_low_i16x8_s(s16l), v1 = i32x4.extend_high_i16x8_s(s16l);
    let v2 = i32x4.extend_low_i16x8_s(s16h), v3 = i32x4.extend_high_i16x8_s(s16h);
    let g0 = v128.load(w), g1 = v128.load(w, 16);
    // per token: the sum of (step sums x scales); token t's lanes hold its 4 sub-block products
    let s0 = i32x4.splat(0), s1 = s0, s2 = s0, s3 = s0;
    let aq = a + 4, x = ax;
    for (let c: usize = 0; c < 2; c++) {
      let q0 = v128.load(w + 32 + (c << 5)), q1 = v128.load(w + 48 + (c << 5));
      for (let s = 0; s < 2; s++) {
        const xa = q3k_vals(q0, g0), xb = q3k_vals(q1, g1);
        q0 = i16x8.shr_u(q0, 2); q1 = i16x8.shr_u(q1, 2); g0 = i16x8.shr_u(g0, 1); g1 = i16x8.shr_u(g1, 1);
        const xc = q3k_vals(q0, g0), xd = q3k_vals(q1, g1);
        q0 = i16x8.shr_u(q0, 2); q1 = i16x8.shr_u(q1, 2); g0 = i16x8.shr_u(g0, 1); g1 = i16x8.shr_u(g1, 1);
        s0 = i32x4.add(s0, i32x4.mul(hsum4_i32(dot16x(xa, aq, x), dot16x(xb, aq + 16, x + 32), dot16x(xc, aq + 32, x + 64), dot16x(xd, aq + 48, x + 96)), v0));
        let o = aq + as, ox = x + axs;
        s1 = i32x4.add(s1, i32x4.mul(hsum4_i32(dot16x(xa, o, ox), dot16x(xb, o + 16, ox + 32), dot16x(xc, o + 32, ox + 64), dot16x(xd, o + 48, ox + 96)), v0));
        o += as; ox += axs;
        s2 = i32x4.add(s2, i32x4.mul(hsum4_i32(dot16x(xa, o, ox), dot16x(xb, o + 16, ox + 32), dot16x(xc, o + 32, ox + 64), dot16x(xd, o + 48, ox + 96)), v0));
        o += as; ox += axs;
        s3 = i32x4.add(s3, i32x4.mul(hsum4_i32(dot16x(xa, o, ox), dot16x(xb, o + 16, ox + 32), dot16x(xc, o + 32, ox + 64), dot16x(xd, o + 48, ox + 96)), v0));
        const t = v0; v0 = v1; v1 = v2; v2 = v3; v3 = t;
        aq += 64; x += 128;
      }
    }
    acc = f32x4.add(acc, f32x4.mul(f32x4.convert_i32x4_s(i32x4.add(hsum4_i32(s0, s1, s2, s3), off)), d));
    w += 110; a += 292; ax += 512;
  }
  store<f32>(y, f32x4.extract_lane(acc, 0));
  store<f32>(y + ys, f32x4.extract_lane(acc, 1));
  store<f32>(y + 2 * ys, f32x4.extract_lane(acc, 2));
  store<f32>(y + 3 * ys, f32x4.extract_lane(acc, 3));
}
export function mm_q3_K(r0: i32, r1: i32, w: usize, ws: usize, a: usize, as: usize, nTok: i32, y: usize, ys: usize, nb: i32, ax: usize, axs: usize): void {
  // tiles of ROW_TILE rows stay in L1 while the activation rows pass over them; tokens in groups of 4
  for (let rt = r0; rt < r1; rt += ROW_TILE) {
    const re = min(rt + ROW_TILE, r1);
    let t = 0;
    for (; t + 4 <= nTok; t += 4) {
      const at = a + <usize>t * as, xt = ax + <usize>t * axs, yt = y + <usize>t * ys;
      for (let r = rt; r < re; r++) dot4t_q3_K(w + <usize>r * ws, at, as, xt, axs, nb, yt + (<usize>r << 2), ys);
    }
    for (; t < nTok; t++) {
      const at = a + <usize>t * as, xt = ax + <usize>t * axs, yt = y + <usize>t * ys;
      for (let r = rt; r < re; r++) store<f32>(yt + (<usize>r << 2), dot_q3_K(w + <usize>r * ws, at, xt, nb));
    }
  }
}
