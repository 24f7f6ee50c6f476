import { h2f, h2f4 } from '../common/f16';
import { f32x4_of, fma2_tie, fmaf, hi_f64, lo_f64, round2, tie_any } from '../common/fmaf';
import { k4_scales, k4_summins } from '../common/kquant';
import { dot32_w16, g4, hs2_i32, hs4_i32, hsum4_i32, hsum_i32x4 } from '../common/simd';
import { hsum2_i32, k4_chunk, k4_mins_lanes, k4_scales_v } from '../common/k4-simd';
import { g8_tokens, ROW_TILE } from './tile';
import { Q4K_TOUCH, touch_ahead } from './touch';

// One 64-value chunk of a Q4_K super-block: (low nibbles . 32 activations) * sl + (high nibbles . next 32) * sh,
// exact in i32 lanes. qs: the chunk's 32 bytes; q8: widened activations (SIMD128); aq: int8 activations
// (relaxed SIMD, the nibbles as the 7-bit operand).
@inline function q4k_chunk(qs: usize, q8: usize, aq: usize, sl: v128, sh: v128): v128 {
  let lo: v128, hi: v128;
  if (ASC_FEATURE_RELAXED_SIMD) {
    const v0 = v128.load(qs), v1 = v128.load(qs, 16), m = i8x16.splat(0x0f);
    lo = i32x4.relaxed_dot_i8x16_i7x16_add_s(v128.load(aq, 16), v128.and(v1, m), i32x4.relaxed_dot_i8x16_i7x16_add_s(v128.load(aq), v128.and(v0, m), i32x4.splat(0)));
    hi = i32x4.relaxed_dot_i8x16_i7x16_add_s(v128.load(aq, 48), v128.and(i16x8.shr_u(v1, 4), m), i32x4.relaxed_dot_i8x16_i7x16_add_s(v128.load(aq, 32), v128.and(i16x8.shr_u(v0, 4), m), i32x4.splat(0)));
  } else {
    const m4 = i16x8.splat(0x0f);
    const u0 = v128.load8x8_u(qs), u1 = v128.load8x8_u(qs, 8), u2 = v128.load8x8_u(qs, 16), u3 = v128.load8x8_u(qs, 24);
    lo = dot32_w16(v128.and(u0, m4), v128.and(u1, m4), v128.and(u2, m4), v128.and(u3, m4), q8);
    hi = dot32_w16(i16x8.shr_u(u0, 4), i16x8.shr_u(u1, 4), i16x8.shr_u(u2, 4), i16x8.shr_u(u3, 4), q8 + 64);
  }
  return i32x4.add(i32x4.mul(lo, sl), i32x4.mul(hi, sh));
}
// relaxed SIMD: one 64-value chunk of one token, (low nibbles . 32 activations) * sl + (high . next 32) * sh in
// i32 lanes: the i8 x i7 pair products summed on i16 lanes (|.| <= 4 * 15 * 128 per lane after the add),
// then pmaddwd by the i16 scale splats. The same exact integers as q4k_chunk, fewer instructions.
@inline function q4k_sub(aq: usize, l0: v128, l1: v128, h0: v128, h1: v128, sl16: v128, sh16: v128): v128 {
  const lo = i16x8.add(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq), l0), i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq, 16), l1));
  const hi = i16x8.add(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq, 32), h0), i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq, 48), h1));
  return i32x4.add(i32x4.dot_i16x8_s(lo, sl16), i32x4.dot_i16x8_s(hi, sh16));
}
// Q4_K as llama.cpp runs repacked Q4_K weights (rows % 8 == 0): ggml_gemv_q4_K_8x8_q8_K fuses one
// multiply-add per super-block (the whole integer sum by d = d_w*d_a, the mins' sum by dmin*d_a; result
// acc - acc_min); the GEMM for groups of 4 activation rows (dot4t_q4_K) fuses one per 64 values.
@inline function dot_q4_K(w: usize, a: usize, ax: usize, nb: i32, exact: bool): f32 {
  if (ASC_FEATURE_RELAXED_SIMD) return dot_q4_K_relaxed(w, a, nb, exact);
  let acc: f32 = 0, accm: f32 = 0;
  const end = w + <usize>nb * 144;
  while (w < end) {
    const ad = load<f32>(a);
    const d = h2f(load<u16>(w)) * ad;
    const dmin = h2f(load<u16>(w, 2)) * ad;
    const smv = k4_scales(w + 4);
    // sub-block scales as i32 pairs (lane 0: low nibbles' scale, lane 1: high nibbles'), rotated per step
    let sc = i32x4.extend_low_i16x8_u(i16x8.extend_low_i8x16_u(smv));
    let sc2 = i32x4.extend_high_i16x8_u(i16x8.extend_low_i8x16_u(smv));
    let isum = i32x4.splat(0);
    let qs = w + 16, q8 = ax, aq = a + 4;
    const qe = qs + 128;
    while (qs < qe) {
      isum = i32x4.add(isum, q4k_chunk(qs, q8, aq, i32x4.shuffle(sc, sc, 0, 0, 0, 0), i32x4.shuffle(sc, sc, 1, 1, 1, 1)));
      sc = i32x4.shuffle(sc, sc2, 2, 3, 4, 5);
      sc2 = i32x4.shuffle(sc2, sc2, 2, 3, 0, 1);
      qs += 32; q8 += 128; aq += 64;
    }
    if (exact) {
      acc = fmaf(<f32>hsum_i32x4(isum), d, acc);
      accm = fmaf(<f32>k4_summins(smv, a), dmin, accm);
    } else {
      // 'fast' numerics: plain multiply-adds
      acc += <f32>hsum_i32x4(isum) * d;
      accm += <f32>k4_summins(smv, a) * dmin;
    }
    w += 144; a += 292; ax += 512;
  }
  return acc - accm;
}
// one chunk's nibbles split (low, high halves of its 32 bytes at qs) . 64 int8 activations at aq, scaled (k4_chunk)
@inline function q4k_chunk_r(qs: usize, aq: usize, mb: v128, sc: v128): v128 {
  const v0 = v128.load(qs), v1 = v128.load(qs, 16);
  return k4_chunk(aq, v128.and(v0, mb), v128.and(v1, mb), v128.and(i16x8.shr_u(v0, 4), mb), v128.and(i16x8.shr_u(v1, 4), mb), sc);
}
// the exact integers of one super-block for one token (relaxed SIMD): lane 0 its scaled sum, lane 1 its
// mins term (k4_chunk per 64 values, k4_mins_lanes, both horizontal sums at once), as f32
@inline function q4k_block_r(w: usize, a: usize, mb: v128): v128 {
  const smv = k4_scales_v(w + 4);
  // i32 lane j of sr: chunk j's two scales (low nibbles', high nibbles') on i16 lanes, rotated per chunk.
  // A loop, not 4 straight-line chunks: V8 hoists all 4 chunks' loads and then spills.
  let sr = i16x8.extend_low_i8x16_u(smv);
  let isum = i32x4.splat(0);
  let qs = w + 16, aq = a + 4;
  const qe = qs + 128;
  while (qs < qe) {
    isum = i32x4.add(isum, q4k_chunk_r(qs, aq, mb, i32x4.shuffle(sr, sr, 0, 0, 0, 0)));
    sr = i32x4.shuffle(sr, sr, 1, 2, 3, 0);
    qs += 32; aq += 64;
  }
  return f32x4.convert_i32x4_s(hsum2_i32(isum, k4_mins_lanes(smv, a)));
}
// dot_q4_K in the relaxed build: the same integers and the same f32 operations, with the sums and the mins
// side by side in lanes 0 and 1 of one f32x4 chain (exact: fmaf = relaxed_madd per lane). Super-blocks in
// pairs: one h2f4 converts both blocks' [d, dmin] (its constants cost more than its arithmetic).
@inline function dot_q4_K_relaxed(w: usize, a: usize, nb: i32, exact: bool): f32 {
  let acc = f32x4.splat(0);
  const mb = i8x16.splat(0x0f);
  const end = w + <usize>nb * 144, end2 = w + <usize>(nb & ~1) * 144;
  while (w < end2) {
    // [d0, dmin0, d1, dmin1] * [ad0, ad0, ad1, ad1]
    const hd = i32x4.extend_low_i16x8_u(v128.load32_lane(w + 144, v128.load32_zero(w), 1));
    const ad = v128.load32_lane(a + 292, v128.load32_lane(a + 292, v128.load32_splat(a), 2), 3);
    const dd = f32x4.mul(h2f4(hd), ad);
    const f0 = q4k_block_r(w, a, mb);
    acc = exact ? f32x4.relaxed_madd(f0, dd, acc) : f32x4.add(acc, f32x4.mul(f0, dd));
    const f1 = q4k_block_r(w + 144, a + 292, mb), dd1 = i32x4.shuffle(dd, dd, 2, 3, 0, 1);
    acc = exact ? f32x4.relaxed_madd(f1, dd1, acc) : f32x4.add(acc, f32x4.mul(f1, dd1));
    w += 288; a += 584;
  }
  if (w < end) {
    const dd = f32x4.mul(h2f4(i32x4.extend_low_i16x8_u(v128.load32_zero(w))), v128.load32_splat(a));
    const f = q4k_block_r(w, a, mb);
    acc = exact ? f32x4.relaxed_madd(f, dd, acc) : f32x4.add(acc, f32x4.mul(f, dd));
  }
  return f32x4.extract_lane(acc, 0) - f32x4.extract_lane(acc, 1);
}
// ggml_gemm_q4_K_8x8_q8_K for one weight row and 4 activation rows (tokens) at once: the nibbles are
// decoded once for the 4 tokens, and the 4 tokens' FMA chains (one per 64 values) run side by side in
// f64x2 lanes. a: token t's Q8_K row (as bytes apart), ax: its widened quants (axs apart); 4 results
// at y, y + ys, y + 2ys, y + 3ys.
@inline function q4k_minsums(a: usize, mins: v128): v128 {
  const b0 = v128.load(a, 260), b1 = v128.load(a, 276);
  const bs = i16x8.add(
    i8x16.shuffle(b0, b1, 0, 1, 4, 5, 8, 9, 12, 13, 16, 17, 20, 21, 24, 25, 28, 29),
    i8x16.shuffle(b0, b1, 2, 3, 6, 7, 10, 11, 14, 15, 18, 19, 22, 23, 26, 27, 30, 31));
  // [m0*B0 + m1*B1, m2*B2 + m3*B3, m4*B4 + m5*B5, m6*B6 + m7*B7]: the mins term of each 64 values
  return g4(i32x4.extmul_low_i16x8_s(bs, mins), i32x4.extmul_high_i16x8_s(bs, mins));
}
@inline function dot4t_q4_K(w: usize, a: usize, as: usize, ax: usize, axs: usize, nb: i32, y: usize, ys: usize): void {
  let c0 = f64x2.splat(0), c1 = c0, m0 = c0, m1 = c0;
  // relaxed SIMD: the 4 tokens' chains in f32x4 lanes, fmaf = relaxed_madd (checked fused at start-up)
  let cf = f32x4.splat(0), mf = cf;
  const m4 = i16x8.splat(0x0f);
  const end = w + <usize>nb * 144;
  while (w < end) {
    let yd = f32x4.splat(load<f32>(a));
    yd = f32x4.replace_lane(yd, 1, load<f32>(a + as));
    yd = f32x4.replace_lane(yd, 2, load<f32>(a + 2 * as));
    yd = f32x4.replace_lane(yd, 3, load<f32>(a + 3 * as));
    const dd = f32x4.mul(f32x4.splat(h2f(load<u16>(w))), yd), dm = f32x4.mul(f32x4.splat(h2f(load<u16>(w, 2))), yd);
    const ddl = lo_f64(dd), ddh = hi_f64(dd), dml = lo_f64(dm), dmh = hi_f64(dm);
    const smv = k4_scales(w + 4);
    const mins = i16x8.extend_high_i8x16_u(smv);
    // mins terms, token-major, then transposed to step-major (M_j lane k = token k)
    const t0 = q4k_minsums(a, mins), t1 = q4k_minsums(a + as, mins), t2 = q4k_minsums(a + 2 * as, mins), t3 = q4k_minsums(a + 3 * as, mins);
    const u01a = i32x4.shuffle(t0, t1, 0, 4, 1, 5), u23a = i32x4.shuffle(t2, t3, 0, 4, 1, 5);
    const u01b = i32x4.shuffle(t0, t1, 2, 6, 3, 7), u23b = i32x4.shuffle(t2, t3, 2, 6, 3, 7);
    const mj0 = i32x4.shuffle(u01a, u23a, 0, 1, 4, 5), mj1 = i32x4.shuffle(u01a, u23a, 2, 3, 6, 7);
    const mj2 = i32x4.shuffle(u01b, u23b, 0, 1, 4, 5), mj3 = i32x4.shuffle(u01b, u23b, 2, 3, 6, 7);
    // the 8 sub-block scales on i16 lanes, rotated by 2 per step (lane 0: low nibbles', lane 1: high's).
    // The nibbles are multiplied by their scale before the dot (<= 15*63 = 945, so each i16 product pair
    // stays far inside i32 and the 64-value sum is the same exact integer as sum*scale): one i16 multiply
    // per 8 weights shared by the 4 tokens instead of an i32 multiply per token.
    let s16 = i16x8.extend_low_i8x16_u(smv);
    let mja = mj0, mjb = mj1, mjc = mj2, mjd = mj3;
    let qs = w + 16, q8 = ax, aq = a + 4;
    for (let j = 0; j < 4; j++) {
      const sl = i8x16.shuffle(s16, s16, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1);
      const sh = i8x16.shuffle(s16, s16, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3);
      let p0: v128, p1: v128, p2: v128, p3: v128;
      if (ASC_FEATURE_RELAXED_SIMD) {
        // the int8 activations and pmaddubsw + pmaddwd (q4k_sub): the same exact 64-value sums
        const v0 = v128.load(qs), v1 = v128.load(qs, 16), mb = i8x16.splat(0x0f);
        const n0 = v128.and(v0, mb), n1 = v128.and(v1, mb), n2 = v128.and(i16x8.shr_u(v0, 4), mb), n3 = v128.and(i16x8.shr_u(v1, 4), mb);
        p0 = q4k_sub(aq, n0, n1, n2, n3, sl, sh);
        p1 = q4k_sub(aq + as, n0, n1, n2, n3, sl, sh);
        p2 = q4k_sub(aq + 2 * as, n0, n1, n2, n3, sl, sh);
        p3 = q4k_sub(aq + 3 * as, n0, n1, n2, n3, sl, sh);
      } else {
        const u0 = v128.load8x8_u(qs), u1 = v128.load8x8_u(qs, 8), u2 = v128.load8x8_u(qs, 16), u3 = v128.load8x8_u(qs, 24);
        const l0 = i16x8.mul(v128.and(u0, m4), sl), l1 = i16x8.mul(v128.and(u1, m4), sl);
        const l2 = i16x8.mul(v128.and(u2, m4), sl), l3 = i16x8.mul(v128.and(u3, m4), sl);
        const h0 = i16x8.mul(i16x8.shr_u(u0, 4), sh), h1 = i16x8.mul(i16x8.shr_u(u1, 4), sh);
        const h2 = i16x8.mul(i16x8.shr_u(u2, 4), sh), h3 = i16x8.mul(i16x8.shr_u(u3, 4), sh);
        p0 = i32x4.add(dot32_w16(l0, l1, l2, l3, q8), dot32_w16(h0, h1, h2, h3, q8 + 64));
        p1 = i32x4.add(dot32_w16(l0, l1, l2, l3, q8 + axs), dot32_w16(h0, h1, h2, h3, q8 + axs + 64));
        p2 = i32x4.add(dot32_w16(l0, l1, l2, l3, q8 + 2 * axs), dot32_w16(h0, h1, h2, h3, q8 + 2 * axs + 64));
        p3 = i32x4.add(dot32_w16(l0, l1, l2, l3, q8 + 3 * axs), dot32_w16(h0, h1, h2, h3, q8 + 3 * axs + 64));
      }
      // |sum of 64 values| <= 64*15*127*63 < 2^24 and the mins term likewise: exact in f32, so straight to f64
      const sj = hsum4_i32(p0, p1, p2, p3);
      const mj = mja;
      mja = mjb; mjb = mjc; mjc = mjd;
      s16 = i8x16.shuffle(s16, s16, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3);
      qs += 32; q8 += 128; aq += 64;
      if (ASC_FEATURE_RELAXED_SIMD) {
        cf = f32x4.relaxed_madd(f32x4.convert_i32x4_s(sj), dd, cf);
        mf = f32x4.relaxed_madd(f32x4.convert_i32x4_s(mj), dm, mf);
        continue;
      }
      const e0 = f64x2.mul(f64x2.convert_low_i32x4_s(sj), ddl);
      const e1 = f64x2.mul(f64x2.convert_low_i32x4_s(i32x4.shuffle(sj, sj, 2, 3, 0, 1)), ddh);
      const e2 = f64x2.mul(f64x2.convert_low_i32x4_s(mj), dml);
      const e3 = f64x2.mul(f64x2.convert_low_i32x4_s(i32x4.shuffle(mj, mj, 2, 3, 0, 1)), dmh);
      // the four fmaf pairs with one (rarely taken) tie check
      const f0 = f64x2.add(e0, c0), f1 = f64x2.add(e1, c1), f2 = f64x2.add(e2, m0), f3 = f64x2.add(e3, m1);
      if (tie_any(f0, f1, f2, f3)) {
        c0 = fma2_tie(e0, c0); c1 = fma2_tie(e1, c1); m0 = fma2_tie(e2, m0); m1 = fma2_tie(e3, m1);
      } else {
        c0 = round2(f0); c1 = round2(f1); m0 = round2(f2); m1 = round2(f3);
      }
    }
    w += 144; a += 292; ax += 512;
  }
  const r = ASC_FEATURE_RELAXED_SIMD ? f32x4.sub(cf, mf) : f32x4.sub(f32x4_of(c0, c1), f32x4_of(m0, m1));
  store<f32>(y, f32x4.extract_lane(r, 0));
  store<f32>(y + ys, f32x4.extract_lane(r, 1));
  store<f32>(y + 2 * ys, f32x4.extract_lane(r, 2));
  store<f32>(y + 3 * ys, f32x4.extract_lane(r, 3));
}
// one 64-value chunk of one weight row for 4 tokens (activations a1, a2, a3 bytes after token 0's at aq): the
// exact sums (q4k_sub), lane = token; each token's vector pinned by a store of a lane into its result slot
@inline function q4k_tok4(aq: usize, a1: usize, a2: usize, a3: usize, n0: v128, n1: v128, n2: v128, n3: v128, sl: v128, sh: v128, y0: usize, y1: usize, y2: usize, y3: usize): v128 {
  const p0 = q4k_sub(aq, n0, n1, n2, n3, sl, sh);
  v128.store32_lane(y0, p0, 0);
  const p1 = q4k_sub(aq + a1, n0, n1, n2, n3, sl, sh);
  v128.store32_lane(y1, p1, 0);
  const t0 = hs2_i32(p0, p1);
  const p2 = q4k_sub(aq + a2, n0, n1, n2, n3, sl, sh);
  v128.store32_lane(y2, p2, 0);
  const p3 = q4k_sub(aq + a3, n0, n1, n2, n3, sl, sh);
  v128.store32_lane(y3, p3, 0);
  return hs4_i32(t0, hs2_i32(p2, p3));
}
@inline function q4k_chunk4t(qs: usize, aq: usize, a1: usize, a2: usize, a3: usize, sl: v128, sh: v128, y0: usize, y1: usize, y2: usize, y3: usize): v128 {
  const v0 = v128.load(qs), v1 = v128.load(qs, 16), mb = i8x16.splat(0x0f);
  const n0 = v128.and(v0, mb), n1 = v128.and(v1, mb), n2 = v128.and(i16x8.shr_u(v0, 4), mb), n3 = v128.and(i16x8.shr_u(v1, 4), mb);
  return q4k_tok4(aq, a1, a2, a3, n0, n1, n2, n3, sl, sh, y0, y1, y2, y3);
}
// dot4t_q4_K in the relaxed build, fewer instructions, the same integers and f32 chains (lane = token):
// - the mins terms of the 4 chunks: per token two pmaddwd of the bsums by the mins duplicated on i16 pairs
//   ([m0 B0, m1 B1, m2 B2, m3 B3] and [m4 B4 ..]), the pair sums taken in the 4x4 transpose to chunk-major
//   (the byte shuffles of q4k_minsums lowered to ~5 instructions each);
// - the scales unpacked in SIMD (k4_scales_v), the tokens' d loaded into lanes;
// - each token's 64-value sum pinned with a store of one lane into its (later overwritten) result slot, so
//   V8 does not hoist the 16 activation loads of a chunk ahead of the arithmetic and spill them.
@inline function dot4t_q4_K_r(w: usize, a: usize, as: usize, nb: i32, y: usize, ys: usize): void {
  let cf = f32x4.splat(0), mf = cf;
  const end = w + <usize>nb * 144;
  const a1 = as, a2 = 2 * as, a3 = 3 * as;
  const y1 = y + ys, y2 = y + 2 * ys, y3 = y + 3 * ys;
  while (w < end) {
    const yd = v128.load32_lane(a + a3, v128.load32_lane(a + a2, v128.load32_lane(a + a1, v128.load32_zero(a), 1), 2), 3);
    const dd = f32x4.mul(f32x4.splat(h2f(load<u16>(w))), yd), dm = f32x4.mul(f32x4.splat(h2f(load<u16>(w, 2))), yd);
    const smv = k4_scales_v(w + 4);
    const m = i16x8.extend_high_i8x16_u(smv);
    const ml = i16x8.shuffle(m, m, 0, 0, 1, 1, 2, 2, 3, 3), mh = i16x8.shuffle(m, m, 4, 4, 5, 5, 6, 6, 7, 7);
    let mj0: v128, mj1: v128, mj2: v128, mj3: v128;
    {
      const p0 = i32x4.dot_i16x8_s(v128.load(a, 260), ml), p1 = i32x4.dot_i16x8_s(v128.load(a + a1, 260), ml);
      const p2 = i32x4.dot_i16x8_s(v128.load(a + a2, 260), ml), p3 = i32x4.dot_i16x8_s(v128.load(a + a3, 260), ml);
      const ul = i32x4.shuffle(p0, p1, 0, 4, 1, 5), vl = i32x4.shuffle(p2, p3, 0, 4, 1, 5);
      const uh = i32x4.shuffle(p0, p1, 2, 6, 3, 7), vh = i32x4.shuffle(p2, p3, 2, 6, 3, 7);
      mj0 = i32x4.add(i32x4.shuffle(ul, vl, 0, 1, 4, 5), i32x4.shuffle(ul, vl, 2, 3, 6, 7));
      mj1 = i32x4.add(i32x4.shuffle(uh, vh, 0, 1, 4, 5), i32x4.shuffle(uh, vh, 2, 3, 6, 7));
    }
    {
      const p0 = i32x4.dot_i16x8_s(v128.load(a, 276), mh), p1 = i32x4.dot_i16x8_s(v128.load(a + a1, 276), mh);
      const p2 = i32x4.dot_i16x8_s(v128.load(a + a2, 276), mh), p3 = i32x4.dot_i16x8_s(v128.load(a + a3, 276), mh);
      const ul = i32x4.shuffle(p0, p1, 0, 4, 1, 5), vl = i32x4.shuffle(p2, p3, 0, 4, 1, 5);
      const uh = i32x4.shuffle(p0, p1, 2, 6, 3, 7), vh = i32x4.shuffle(p2, p3, 2, 6, 3, 7);
      mj2 = i32x4.add(i32x4.shuffle(ul, vl, 0, 1, 4, 5), i32x4.shuffle(ul, vl, 2, 3, 6, 7));
      mj3 = i32x4.add(i32x4.shuffle(uh, vh, 0, 1, 4, 5), i32x4.shuffle(uh, vh, 2, 3, 6, 7));
    }
    // the 4 chunks straight-line (each chunk's scale splats by immediate lanes, no rotation; the pins keep
    // the loads in place)
    const s16 = i16x8.extend_low_i8x16_u(smv);
    const qs = w + 16, aq = a + 4;
    let sj = q4k_chunk4t(qs, aq, a1, a2, a3, i8x16.shuffle(s16, s16, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1), i8x16.shuffle(s16, s16, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3), y, y1, y2, y3);
    cf = f32x4.relaxed_madd(f32x4.convert_i32x4_s(sj), dd, cf);
    mf = f32x4.relaxed_madd(f32x4.convert_i32x4_s(mj0), dm, mf);
    sj = q4k_chunk4t(qs + 32, aq + 64, a1, a2, a3, i8x16.shuffle(s16, s16, 4, 5, 4, 5, 4, 5, 4, 5, 4, 5, 4, 5, 4, 5, 4, 5), i8x16.shuffle(s16, s16, 6, 7, 6, 7, 6, 7, 6, 7, 6, 7, 6, 7, 6, 7, 6, 7), y, y1, y2, y3);
    cf = f32x4.relaxed_madd(f32x4.convert_i32x4_s(sj), dd, cf);
    mf = f32x4.relaxed_madd(f32x4.convert_i32x4_s(mj1), dm, mf);
    sj = q4k_chunk4t(qs + 64, aq + 128, a1, a2, a3, i8x16.shuffle(s16, s16, 8, 9, 8, 9, 8, 9, 8, 9, 8, 9, 8, 9, 8, 9, 8, 9), i8x16.shuffle(s16, s16, 10, 11, 10, 11, 10, 11, 10, 11, 10, 11, 10, 11, 10, 11, 10, 11), y, y1, y2, y3);
    cf = f32x4.relaxed_madd(f32x4.convert_i32x4_s(sj), dd, cf);
    mf = f32x4.relaxed_madd(f32x4.convert_i32x4_s(mj2), dm, mf);
    sj = q4k_chunk4t(qs + 96, aq + 192, a1, a2, a3, i8x16.shuffle(s16, s16, 12, 13, 12, 13, 12, 13, 12, 13, 12, 13, 12, 13, 12, 13, 12, 13), i8x16.shuffle(s16, s16, 14, 15, 14, 15, 14, 15, 14, 15, 14, 15, 14, 15, 14, 15, 14, 15), y, y1, y2, y3);
    cf = f32x4.relaxed_madd(f32x4.convert_i32x4_s(sj), dd, cf);
    mf = f32x4.relaxed_madd(f32x4.convert_i32x4_s(mj3), dm, mf);
    w += 144; a += 292;
  }
  const r = f32x4.sub(cf, mf);
  store<f32>(y, f32x4.extract_lane(r, 0));
  store<f32>(y1, f32x4.extract_lane(r, 1));
  store<f32>(y2, f32x4.extract_lane(r, 2));
  store<f32>(y3, f32x4.extract_lane(r, 3));
}
// 8 tokens per pass, each token exactly dot4t_q4_K_r's integers and f32 chains (same bits), from the activations
// of 4 tokens interleaved
// (act/quantize.ts q8_K_x4; x0: group 0's table at the block loop's start, x1 = x0 + gs group 1's): each
// 4-nibble group of the row splat over the 4 i32 lanes (lane = token) times the 4 tokens' 4 quants, the i16
// pair sums of a 32-value sub-block added on i16 (|.| <= 8 * 2 * 15 * 128), pmaddwd by the sub-block's scale
// gives each token's scaled sub-block sum in its own lane: no horizontal sums, no per-token pins; the mins
// terms from the tokens' interleaved bsum pairs, one pmaddwd per chunk and group. 8 tokens: 2 groups share
// the nibble splats. (It replaced dot8t_q4_K_r, dot4t_q4_K_r's 4-token groups x 2 on the plain Q8_K rows,
// with per-token pins and horizontal sums: 1.16-1.23x, BENCHMARKS.md "pp32".)
// pin each sub-block's sums by a store into the result slot (V8 otherwise may hoist the loads)
const Q4KX_PIN = true;
const Q4KX_PIN4 = true;
@inline function dot8t_q4_K_x(w: usize, x0: usize, gs: usize, nb: i32, y: usize, ys: usize): void {
  let cf = f32x4.splat(0), mf = cf, cg = cf, mg = cf;
  const end = w + <usize>nb * 144;
  const mb = i8x16.splat(0x0f);
  while (w < end) {
    const x1 = x0 + gs;
    const hd = f32x4.splat(h2f(load<u16>(w))), hm = f32x4.splat(h2f(load<u16>(w, 2)));
    const smv = k4_scales_v(w + 4);
    {
      const yd = v128.load(x0), ye = v128.load(x1);
      const dm = f32x4.mul(hm, yd), dn = f32x4.mul(hm, ye);
      const m = i16x8.extend_high_i8x16_u(smv);
      mf = f32x4.relaxed_madd(f32x4.convert_i32x4_s(i32x4.dot_i16x8_s(v128.load(x0, 16), i32x4.shuffle(m, m, 0, 0, 0, 0))), dm, mf);
      mg = f32x4.relaxed_madd(f32x4.convert_i32x4_s(i32x4.dot_i16x8_s(v128.load(x1, 16), i32x4.shuffle(m, m, 0, 0, 0, 0))), dn, mg);
      mf = f32x4.relaxed_madd(f32x4.convert_i32x4_s(i32x4.dot_i16x8_s(v128.load(x0, 32), i32x4.shuffle(m, m, 1, 1, 1, 1))), dm, mf);
      mg = f32x4.relaxed_madd(f32x4.convert_i32x4_s(i32x4.dot_i16x8_s(v128.load(x1, 32), i32x4.shuffle(m, m, 1, 1, 1, 1))), dn, mg);
      mf = f32x4.relaxed_madd(f32x4.convert_i32x4_s(i32x4.dot_i16x8_s(v128.load(x0, 48), i32x4.shuffle(m, m, 2, 2, 2, 2))), dm, mf);
      mg = f32x4.relaxed_madd(f32x4.convert_i32x4_s(i32x4.dot_i16x8_s(v128.load(x1, 48), i32x4.shuffle(m, m, 2, 2, 2, 2))), dn, mg);
      mf = f32x4.relaxed_madd(f32x4.convert_i32x4_s(i32x4.dot_i16x8_s(v128.load(x0, 64), i32x4.shuffle(m, m, 3, 3, 3, 3))), dm, mf);
      mg = f32x4.relaxed_madd(f32x4.convert_i32x4_s(i32x4.dot_i16x8_s(v128.load(x1, 64), i32x4.shuffle(m, m, 3, 3, 3, 3))), dn, mg);
    }
    const dd = f32x4.mul(hd, v128.load(x0)), de = f32x4.mul(hd, v128.load(x1));
    const s16 = i16x8.extend_low_i8x16_u(smv);
    {
      const v0 = v128.load(w, 16), v1 = v128.load(w, 32);
      const sl = i8x16.shuffle(s16, s16, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1);
      let n = v128.and(v0, mb);
      let s = i32x4.shuffle(n, n, 0, 0, 0, 0);
      let e0 = i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x0, 80), s), e1 = i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x1, 80), s);
      s = i32x4.shuffle(n, n, 1, 1, 1, 1);
      e0 = i16x8.add(e0, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x0, 96), s)); e1 = i16x8.add(e1, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x1, 96), s));
      s = i32x4.shuffle(n, n, 2, 2, 2, 2);
      e0 = i16x8.add(e0, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x0, 112), s)); e1 = i16x8.add(e1, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x1, 112), s));
      s = i32x4.shuffle(n, n, 3, 3, 3, 3);
      e0 = i16x8.add(e0, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x0, 128), s)); e1 = i16x8.add(e1, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x1, 128), s));
      if (Q4KX_PIN4) v128.store32_lane(y, e1, 0);
      n = v128.and(v1, mb);
      s = i32x4.shuffle(n, n, 0, 0, 0, 0);
      e0 = i16x8.add(e0, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x0, 144), s)); e1 = i16x8.add(e1, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x1, 144), s));
      s = i32x4.shuffle(n, n, 1, 1, 1, 1);
      e0 = i16x8.add(e0, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x0, 160), s)); e1 = i16x8.add(e1, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x1, 160), s));
      s = i32x4.shuffle(n, n, 2, 2, 2, 2);
      e0 = i16x8.add(e0, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x0, 176), s)); e1 = i16x8.add(e1, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x1, 176), s));
      s = i32x4.shuffle(n, n, 3, 3, 3, 3);
      e0 = i16x8.add(e0, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x0, 192), s)); e1 = i16x8.add(e1, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x1, 192), s));
      let p0 = i32x4.dot_i16x8_s(e0, sl), p1 = i32x4.dot_i16x8_s(e1, sl);
      if (Q4KX_PIN) { v128.store32_lane(y, p0, 0); v128.store32_lane(y, p1, 0); }
      const sh = i8x16.shuffle(s16, s16, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3);
      n = v128.and(i16x8.shr_u(v0, 4), mb);
      s = i32x4.shuffle(n, n, 0, 0, 0, 0);
      e0 = i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x0, 208), s); e1 = i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x1, 208), s);
      s = i32x4.shuffle(n, n, 1, 1, 1, 1);
      e0 = i16x8.add(e0, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x0, 224), s)); e1 = i16x8.add(e1, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x1, 224), s));
      s = i32x4.shuffle(n, n, 2, 2, 2, 2);
      e0 = i16x8.add(e0, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x0, 240), s)); e1 = i16x8.add(e1, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x1, 240), s));
      s = i32x4.shuffle(n, n, 3, 3, 3, 3);
      e0 = i16x8.add(e0, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x0, 256), s)); e1 = i16x8.add(e1, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x1, 256), s));
      if (Q4KX_PIN4) v128.store32_lane(y, e1, 0);
      n = v128.and(i16x8.shr_u(v1, 4), mb);
      s = i32x4.shuffle(n, n, 0, 0, 0, 0);
      e0 = i16x8.add(e0, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x0, 272), s)); e1 = i16x8.add(e1, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x1, 272), s));
      s = i32x4.shuffle(n, n, 1, 1, 1, 1);
      e0 = i16x8.add(e0, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x0, 288), s)); e1 = i16x8.add(e1, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x1, 288), s));
      s = i32x4.shuffle(n, n, 2, 2, 2, 2);
      e0 = i16x8.add(e0, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x0, 304), s)); e1 = i16x8.add(e1, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x1, 304), s));
      s = i32x4.shuffle(n, n, 3, 3, 3, 3);
      e0 = i16x8.add(e0, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x0, 320), s)); e1 = i16x8.add(e1, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x1, 320), s));
      p0 = i32x4.add(p0, i32x4.dot_i16x8_s(e0, sh)); p1 = i32x4.add(p1, i32x4.dot_i16x8_s(e1, sh));
      if (Q4KX_PIN) { v128.store32_lane(y, p0, 0); v128.store32_lane(y, p1, 0); }
      cf = f32x4.relaxed_madd(f32x4.convert_i32x4_s(p0), dd, cf);
      cg = f32x4.relaxed_madd(f32x4.convert_i32x4_s(p1), de, cg);
    }
    {
      const v0 = v128.load(w, 48), v1 = v128.load(w, 64);
      const sl = i8x16.shuffle(s16, s16, 4, 5, 4, 5, 4, 5, 4, 5, 4, 5, 4, 5, 4, 5, 4, 5);
      let n = v128.and(v0, mb);
      let s = i32x4.shuffle(n, n, 0, 0, 0, 0);
      let e0 = i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x0, 336), s), e1 = i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x1, 336), s);
      s = i32x4.shuffle(n, n, 1, 1, 1, 1);
      e0 = i16x8.add(e0, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x0, 352), s)); e1 = i16x8.add(e1, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x1, 352), s));
      s = i32x4.shuffle(n, n, 2, 2, 2, 2);
      e0 = i16x8.add(e0, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x0, 368), s)); e1 = i16x8.add(e1, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x1, 368), s));
      s = i32x4.shuffle(n, n, 3, 3, 3, 3);
      e0 = i16x8.add(e0, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x0, 384), s)); e1 = i16x8.add(e1, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x1, 384), s));
      if (Q4KX_PIN4) v128.store32_lane(y, e1, 0);
      n = v128.and(v1, mb);
      s = i32x4.shuffle(n, n, 0, 0, 0, 0);
      e0 = i16x8.add(e0, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x0, 400), s)); e1 = i16x8.add(e1, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x1, 400), s));
      s = i32x4.shuffle(n, n, 1, 1, 1, 1);
      e0 = i16x8.add(e0, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x0, 416), s)); e1 = i16x8.add(e1, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x1, 416), s));
      s = i32x4.shuffle(n, n, 2, 2, 2, 2);
      e0 = i16x8.add(e0, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x0, 432), s)); e1 = i16x8.add(e1, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x1, 432), s));
      s = i32x4.shuffle(n, n, 3, 3, 3, 3);
      e0 = i16x8.add(e0, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x0, 448), s)); e1 = i16x8.add(e1, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x1, 448), s));
      let p0 = i32x4.dot_i16x8_s(e0, sl), p1 = i32x4.dot_i16x8_s(e1, sl);
      if (Q4KX_PIN) { v128.store32_lane(y, p0, 0); v128.store32_lane(y, p1, 0); }
      const sh = i8x16.shuffle(s16, s16, 6, 7, 6, 7, 6, 7, 6, 7, 6, 7, 6, 7, 6, 7, 6, 7);
      n = v128.and(i16x8.shr_u(v0, 4), mb);
      s = i32x4.shuffle(n, n, 0, 0, 0, 0);
      e0 = i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x0, 464), s); e1 = i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x1, 464), s);
      s = i32x4.shuffle(n, n, 1, 1, 1, 1);
      e0 = i16x8.add(e0, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x0, 480), s)); e1 = i16x8.add(e1, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x1, 480), s));
      s = i32x4.shuffle(n, n, 2, 2, 2, 2);
      e0 = i16x8.add(e0, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x0, 496), s)); e1 = i16x8.add(e1, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x1, 496), s));
      s = i32x4.shuffle(n, n, 3, 3, 3, 3);
      e0 = i16x8.add(e0, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x0, 512), s)); e1 = i16x8.add(e1, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x1, 512), s));
      if (Q4KX_PIN4) v128.store32_lane(y, e1, 0);
      n = v128.and(i16x8.shr_u(v1, 4), mb);
      s = i32x4.shuffle(n, n, 0, 0, 0, 0);
      e0 = i16x8.add(e0, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x0, 528), s)); e1 = i16x8.add(e1, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x1, 528), s));
      s = i32x4.shuffle(n, n, 1, 1, 1, 1);
      e0 = i16x8.add(e0, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x0, 544), s)); e1 = i16x8.add(e1, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x1, 544), s));
      s = i32x4.shuffle(n, n, 2, 2, 2, 2);
      e0 = i16x8.add(e0, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x0, 560), s)); e1 = i16x8.add(e1, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x1, 560), s));
      s = i32x4.shuffle(n, n, 3, 3, 3, 3);
      e0 = i16x8.add(e0, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x0, 576), s)); e1 = i16x8.add(e1, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x1, 576), s));
      p0 = i32x4.add(p0, i32x4.dot_i16x8_s(e0, sh)); p1 = i32x4.add(p1, i32x4.dot_i16x8_s(e1, sh));
      if (Q4KX_PIN) { v128.store32_lane(y, p0, 0); v128.store32_lane(y, p1, 0); }
      cf = f32x4.relaxed_madd(f32x4.convert_i32x4_s(p0), dd, cf);
      cg = f32x4.relaxed_madd(f32x4.convert_i32x4_s(p1), de, cg);
    }
    {
      const v0 = v128.load(w, 80), v1 = v128.load(w, 96);
      const sl = i8x16.shuffle(s16, s16, 8, 9, 8, 9, 8, 9, 8, 9, 8, 9, 8, 9, 8, 9, 8, 9);
      let n = v128.and(v0, mb);
      let s = i32x4.shuffle(n, n, 0, 0, 0, 0);
      let e0 = i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x0, 592), s), e1 = i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x1, 592), s);
      s = i32x4.shuffle(n, n, 1, 1, 1, 1);
      e0 = i16x8.add(e0, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x0, 608), s)); e1 = i16x8.add(e1, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x1, 608), s));
      s = i32x4.shuffle(n, n, 2, 2, 2, 2);
      e0 = i16x8.add(e0, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x0, 624), s)); e1 = i16x8.add(e1, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x1, 624), s));
      s = i32x4.shuffle(n, n, 3, 3, 3, 3);
      e0 = i16x8.add(e0, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x0, 640), s)); e1 = i16x8.add(e1, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x1, 640), s));
      if (Q4KX_PIN4) v128.store32_lane(y, e1, 0);
      n = v128.and(v1, mb);
      s = i32x4.shuffle(n, n, 0, 0, 0, 0);
      e0 = i16x8.add(e0, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x0, 656), s)); e1 = i16x8.add(e1, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x1, 656), s));
      s = i32x4.shuffle(n, n, 1, 1, 1, 1);
      e0 = i16x8.add(e0, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x0, 672), s)); e1 = i16x8.add(e1, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x1, 672), s));
      s = i32x4.shuffle(n, n, 2, 2, 2, 2);
      e0 = i16x8.add(e0, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x0, 688), s)); e1 = i16x8.add(e1, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x1, 688), s));
      s = i32x4.shuffle(n, n, 3, 3, 3, 3);
      e0 = i16x8.add(e0, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x0, 704), s)); e1 = i16x8.add(e1, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x1, 704), s));
      let p0 = i32x4.dot_i16x8_s(e0, sl), p1 = i32x4.dot_i16x8_s(e1, sl);
      if (Q4KX_PIN) { v128.store32_lane(y, p0, 0); v128.store32_lane(y, p1, 0); }
      const sh = i8x16.shuffle(s16, s16, 10, 11, 10, 11, 10, 11, 10, 11, 10, 11, 10, 11, 10, 11, 10, 11);
      n = v128.and(i16x8.shr_u(v0, 4), mb);
      s = i32x4.shuffle(n, n, 0, 0, 0, 0);
      e0 = i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x0, 720), s); e1 = i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x1, 720), s);
      s = i32x4.shuffle(n, n, 1, 1, 1, 1);
      e0 = i16x8.add(e0, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x0, 736), s)); e1 = i16x8.add(e1, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x1, 736), s));
      s = i32x4.shuffle(n, n, 2, 2, 2, 2);
      e0 = i16x8.add(e0, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x0, 752), s)); e1 = i16x8.add(e1, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x1, 752), s));
      s = i32x4.shuffle(n, n, 3, 3, 3, 3);
      e0 = i16x8.add(e0, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x0, 768), s)); e1 = i16x8.add(e1, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x1, 768), s));
      if (Q4KX_PIN4) v128.store32_lane(y, e1, 0);
      n = v128.and(i16x8.shr_u(v1, 4), mb);
      s = i32x4.shuffle(n, n, 0, 0, 0, 0);
      e0 = i16x8.add(e0, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x0, 784), s)); e1 = i16x8.add(e1, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x1, 784), s));
      s = i32x4.shuffle(n, n, 1, 1, 1, 1);
      e0 = i16x8.add(e0, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x0, 800), s)); e1 = i16x8.add(e1, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x1, 800), s));
      s = i32x4.shuffle(n, n, 2, 2, 2, 2);
      e0 = i16x8.add(e0, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x0, 816), s)); e1 = i16x8.add(e1, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x1, 816), s));
      s = i32x4.shuffle(n, n, 3, 3, 3, 3);
      e0 = i16x8.add(e0, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x0, 832), s)); e1 = i16x8.add(e1, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x1, 832), s));
      p0 = i32x4.add(p0, i32x4.dot_i16x8_s(e0, sh)); p1 = i32x4.add(p1, i32x4.dot_i16x8_s(e1, sh));
      if (Q4KX_PIN) { v128.store32_lane(y, p0, 0); v128.store32_lane(y, p1, 0); }
      cf = f32x4.relaxed_madd(f32x4.convert_i32x4_s(p0), dd, cf);
      cg = f32x4.relaxed_madd(f32x4.convert_i32x4_s(p1), de, cg);
    }
    {
      const v0 = v128.load(w, 112), v1 = v128.load(w, 128);
      const sl = i8x16.shuffle(s16, s16, 12, 13, 12, 13, 12, 13, 12, 13, 12, 13, 12, 13, 12, 13, 12, 13);
      let n = v128.and(v0, mb);
      let s = i32x4.shuffle(n, n, 0, 0, 0, 0);
      let e0 = i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x0, 848), s), e1 = i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x1, 848), s);
      s = i32x4.shuffle(n, n, 1, 1, 1, 1);
      e0 = i16x8.add(e0, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x0, 864), s)); e1 = i16x8.add(e1, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x1, 864), s));
      s = i32x4.shuffle(n, n, 2, 2, 2, 2);
      e0 = i16x8.add(e0, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x0, 880), s)); e1 = i16x8.add(e1, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x1, 880), s));
      s = i32x4.shuffle(n, n, 3, 3, 3, 3);
      e0 = i16x8.add(e0, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x0, 896), s)); e1 = i16x8.add(e1, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x1, 896), s));
      if (Q4KX_PIN4) v128.store32_lane(y, e1, 0);
      n = v128.and(v1, mb);
      s = i32x4.shuffle(n, n, 0, 0, 0, 0);
      e0 = i16x8.add(e0, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x0, 912), s)); e1 = i16x8.add(e1, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x1, 912), s));
      s = i32x4.shuffle(n, n, 1, 1, 1, 1);
      e0 = i16x8.add(e0, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x0, 928), s)); e1 = i16x8.add(e1, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x1, 928), s));
      s = i32x4.shuffle(n, n, 2, 2, 2, 2);
      e0 = i16x8.add(e0, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x0, 944), s)); e1 = i16x8.add(e1, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x1, 944), s));
      s = i32x4.shuffle(n, n, 3, 3, 3, 3);
      e0 = i16x8.add(e0, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x0, 960), s)); e1 = i16x8.add(e1, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x1, 960), s));
      let p0 = i32x4.dot_i16x8_s(e0, sl), p1 = i32x4.dot_i16x8_s(e1, sl);
      if (Q4KX_PIN) { v128.store32_lane(y, p0, 0); v128.store32_lane(y, p1, 0); }
      const sh = i8x16.shuffle(s16, s16, 14, 15, 14, 15, 14, 15, 14, 15, 14, 15, 14, 15, 14, 15, 14, 15);
      n = v128.and(i16x8.shr_u(v0, 4), mb);
      s = i32x4.shuffle(n, n, 0, 0, 0, 0);
      e0 = i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x0, 976), s); e1 = i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x1, 976), s);
      s = i32x4.shuffle(n, n, 1, 1, 1, 1);
      e0 = i16x8.add(e0, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x0, 992), s)); e1 = i16x8.add(e1, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x1, 992), s));
      s = i32x4.shuffle(n, n, 2, 2, 2, 2);
      e0 = i16x8.add(e0, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x0, 1008), s)); e1 = i16x8.add(e1, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x1, 1008), s));
      s = i32x4.shuffle(n, n, 3, 3, 3, 3);
      e0 = i16x8.add(e0, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x0, 1024), s)); e1 = i16x8.add(e1, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x1, 1024), s));
      if (Q4KX_PIN4) v128.store32_lane(y, e1, 0);
      n = v128.and(i16x8.shr_u(v1, 4), mb);
      s = i32x4.shuffle(n, n, 0, 0, 0, 0);
      e0 = i16x8.add(e0, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x0, 1040), s)); e1 = i16x8.add(e1, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x1, 1040), s));
      s = i32x4.shuffle(n, n, 1, 1, 1, 1);
      e0 = i16x8.add(e0, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x0, 1056), s)); e1 = i16x8.add(e1, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x1, 1056), s));
      s = i32x4.shuffle(n, n, 2, 2, 2, 2);
      e0 = i16x8.add(e0, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x0, 1072), s)); e1 = i16x8.add(e1, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x1, 1072), s));
      s = i32x4.shuffle(n, n, 3, 3, 3, 3);
      e0 = i16x8.add(e0, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x0, 1088), s)); e1 = i16x8.add(e1, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x1, 1088), s));
      p0 = i32x4.add(p0, i32x4.dot_i16x8_s(e0, sh)); p1 = i32x4.add(p1, i32x4.dot_i16x8_s(e1, sh));
      if (Q4KX_PIN) { v128.store32_lane(y, p0, 0); v128.store32_lane(y, p1, 0); }
      cf = f32x4.relaxed_madd(f32x4.convert_i32x4_s(p0), dd, cf);
      cg = f32x4.relaxed_madd(f32x4.convert_i32x4_s(p1), de, cg);
    }
    w += 144; x0 += 1104;
  }
  const r = f32x4.sub(cf, mf), q = f32x4.sub(cg, mg);
  const y4 = y + 4 * ys;
  store<f32>(y, f32x4.extract_lane(r, 0)); store<f32>(y + ys, f32x4.extract_lane(r, 1));
  store<f32>(y + 2 * ys, f32x4.extract_lane(r, 2)); store<f32>(y + 3 * ys, f32x4.extract_lane(r, 3));
  store<f32>(y4, f32x4.extract_lane(q, 0)); store<f32>(y4 + ys, f32x4.extract_lane(q, 1));
  store<f32>(y4 + 2 * ys, f32x4.extract_lane(q, 2)); store<f32>(y4 + 3 * ys, f32x4.extract_lane(q, 3));
}
// Q4_K GEMM for 2 weight rows x 4 tokens per pass, in ggml_gemm_q4_K_8x8_q8_K's order (exact): each (row,
// token) still gets one fused multiply-add per 64 values for the sums and one for the mins, as dot4t_q4_K,
// but the 4 activation vectors loaded per step feed 2 rows, and the nibbles are multiplied by their 6-bit
// scale on i16 lanes (<= 945, the 64-value sums stay < 2^24: exact in f32) once for the 4 tokens.
@inline function dot2r4t_q4_K(w: usize, ws: usize, a: usize, as: usize, ax: usize, axs: usize, nb: i32, y: usize, ys: usize): void {
  let c00 = f64x2.splat(0), c01 = c00, m00 = c00, m01 = c00, c10 = c00, c11 = c00, m10 = c00, m11 = c00;
  const m4 = i16x8.splat(0x0f);
  for (let b = 0; b < nb; b++) {
    const w1 = w + ws;
    let yd = f32x4.splat(load<f32>(a));
    yd = f32x4.replace_lane(yd, 1, load<f32>(a + as));
    yd = f32x4.replace_lane(yd, 2, load<f32>(a + 2 * as));
    yd = f32x4.replace_lane(yd, 3, load<f32>(a + 3 * as));
    const dd0 = f32x4.mul(f32x4.splat(h2f(load<u16>(w))), yd), dm0 = f32x4.mul(f32x4.splat(h2f(load<u16>(w, 2))), yd);
    const dd1 = f32x4.mul(f32x4.splat(h2f(load<u16>(w1))), yd), dm1 = f32x4.mul(f32x4.splat(h2f(load<u16>(w1, 2))), yd);
    const smv0 = k4_scales(w + 4), smv1 = k4_scales(w1 + 4);
    const mins0 = i16x8.extend_high_i8x16_u(smv0), mins1 = i16x8.extend_high_i8x16_u(smv1);
    let sc0 = i16x8.extend_low_i8x16_u(smv0), sc1 = i16x8.extend_low_i8x16_u(smv1);
    // mins terms per 64-value chunk (lane = token), transposed once per super-block and rotated per chunk
    let t0 = q4k_minsums(a, mins0), t1 = q4k_minsums(a + as, mins0), t2 = q4k_minsums(a + 2 * as, mins0), t3 = q4k_minsums(a + 3 * as, mins0);
    let ua = i32x4.shuffle(t0, t1, 0, 4, 1, 5), ub = i32x4.shuffle(t2, t3, 0, 4, 1, 5);
    let uc = i32x4.shuffle(t0, t1, 2, 6, 3, 7), ud = i32x4.shuffle(t2, t3, 2, 6, 3, 7);
    let ma0 = i32x4.shuffle(ua, ub, 0, 1, 4, 5), mb0 = i32x4.shuffle(ua, ub, 2, 3, 6, 7);
    let mc0 = i32x4.shuffle(uc, ud, 0, 1, 4, 5), md0 = i32x4.shuffle(uc, ud, 2, 3, 6, 7);
    t0 = q4k_minsums(a, mins1); t1 = q4k_minsums(a + as, mins1); t2 = q4k_minsums(a + 2 * as, mins1); t3 = q4k_minsums(a + 3 * as, mins1);
    ua = i32x4.shuffle(t0, t1, 0, 4, 1, 5); ub = i32x4.shuffle(t2, t3, 0, 4, 1, 5);
    uc = i32x4.shuffle(t0, t1, 2, 6, 3, 7); ud = i32x4.shuffle(t2, t3, 2, 6, 3, 7);
    let ma1 = i32x4.shuffle(ua, ub, 0, 1, 4, 5), mb1 = i32x4.shuffle(ua, ub, 2, 3, 6, 7);
    let mc1 = i32x4.shuffle(uc, ud, 0, 1, 4, 5), md1 = i32x4.shuffle(uc, ud, 2, 3, 6, 7);
    let qs = w + 16, q8 = ax;
    for (let j = 0; j < 4; j++) {
      let p00 = i32x4.splat(0), p01 = p00, p02 = p00, p03 = p00, p10 = p00, p11 = p00, p12 = p00, p13 = p00;
      for (let half = 0; half < 2; half++) {
        // sub-block 2j + half: the low (half 0) or high (half 1) nibbles of the chunk's 32 bytes
        const s0 = i8x16.shuffle(sc0, sc0, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1);
        const s1 = i8x16.shuffle(sc1, sc1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1);
        const sh = half << 2;
        for (let k: usize = 0; k < 32; k += 8) {
          const x0 = i16x8.mul(v128.and(i16x8.shr_u(v128.load8x8_u(qs + k), sh), m4), s0);
          const x1 = i16x8.mul(v128.and(i16x8.shr_u(v128.load8x8_u(qs + ws + k), sh), m4), s1);
          const o = q8 + (k << 1);
          let at = v128.load(o);
          p00 = i32x4.add(p00, i32x4.dot_i16x8_s(x0, at)); p10 = i32x4.add(p10, i32x4.dot_i16x8_s(x1, at));
          at = v128.load(o + axs);
          p01 = i32x4.add(p01, i32x4.dot_i16x8_s(x0, at)); p11 = i32x4.add(p11, i32x4.dot_i16x8_s(x1, at));
          at = v128.load(o + 2 * axs);
          p02 = i32x4.add(p02, i32x4.dot_i16x8_s(x0, at)); p12 = i32x4.add(p12, i32x4.dot_i16x8_s(x1, at));
          at = v128.load(o + 3 * axs);
          p03 = i32x4.add(p03, i32x4.dot_i16x8_s(x0, at)); p13 = i32x4.add(p13, i32x4.dot_i16x8_s(x1, at));
        }
        sc0 = i8x16.shuffle(sc0, sc0, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1);
        sc1 = i8x16.shuffle(sc1, sc1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1);
        q8 += 64;
      }
      qs += 32;
      // the chunk's exact sums (lane = token) and mins terms, then the fmaf chains as dot4t_q4_K
      const sj0 = hsum4_i32(p00, p01, p02, p03), sj1 = hsum4_i32(p10, p11, p12, p13);
      const mj0 = ma0, mj1 = ma1;
      ma0 = mb0; mb0 = mc0; mc0 = md0; ma1 = mb1; mb1 = mc1; mc1 = md1;
      let e0 = f64x2.mul(f64x2.convert_low_i32x4_s(sj0), lo_f64(dd0));
      let e1 = f64x2.mul(f64x2.convert_low_i32x4_s(i32x4.shuffle(sj0, sj0, 2, 3, 0, 1)), hi_f64(dd0));
      let e2 = f64x2.mul(f64x2.convert_low_i32x4_s(mj0), lo_f64(dm0));
      let e3 = f64x2.mul(f64x2.convert_low_i32x4_s(i32x4.shuffle(mj0, mj0, 2, 3, 0, 1)), hi_f64(dm0));
      let f0 = f64x2.add(e0, c00), f1 = f64x2.add(e1, c01), f2 = f64x2.add(e2, m00), f3 = f64x2.add(e3, m01);
      if (tie_any(f0, f1, f2, f3)) {
        c00 = fma2_tie(e0, c00); c01 = fma2_tie(e1, c01); m00 = fma2_tie(e2, m00); m01 = fma2_tie(e3, m01);
      } else {
        c00 = round2(f0); c01 = round2(f1); m00 = round2(f2); m01 = round2(f3);
      }
      e0 = f64x2.mul(f64x2.convert_low_i32x4_s(sj1), lo_f64(dd1));
      e1 = f64x2.mul(f64x2.convert_low_i32x4_s(i32x4.shuffle(sj1, sj1, 2, 3, 0, 1)), hi_f64(dd1));
      e2 = f64x2.mul(f64x2.convert_low_i32x4_s(mj1), lo_f64(dm1));
      e3 = f64x2.mul(f64x2.convert_low_i32x4_s(i32x4.shuffle(mj1, mj1, 2, 3, 0, 1)), hi_f64(dm1));
      f0 = f64x2.add(e0, c10); f1 = f64x2.add(e1, c11); f2 = f64x2.add(e2, m10); f3 = f64x2.add(e3, m11);
      if (tie_any(f0, f1, f2, f3)) {
        c10 = fma2_tie(e0, c10); c11 = fma2_tie(e1, c11); m10 = fma2_tie(e2, m10); m11 = fma2_tie(e3, m11);
      } else {
        c10 = round2(f0); c11 = round2(f1); m10 = round2(f2); m11 = round2(f3);
      }
    }
    w += 144; a += 292; ax += 512;
  }
  const r0 = f32x4.sub(f32x4_of(c00, c01), f32x4_of(m00, m01)), r1 = f32x4.sub(f32x4_of(c10, c11), f32x4_of(m10, m11));
  store<f32>(y, f32x4.extract_lane(r0, 0)); store<f32>(y + ys, f32x4.extract_lane(r0, 1));
  store<f32>(y + 2 * ys, f32x4.extract_lane(r0, 2)); store<f32>(y + 3 * ys, f32x4.extract_lane(r0, 3));
  store<f32>(y + 4, f32x4.extract_lane(r1, 0)); store<f32>(y + ys + 4, f32x4.extract_lane(r1, 1));
  store<f32>(y + 2 * ys + 4, f32x4.extract_lane(r1, 2)); store<f32>(y + 3 * ys + 4, f32x4.extract_lane(r1, 3));
}
// dot_q4_K's order (the one-token GEMV) for 4 activation rows (tokens) at once: several sequences' decode
// tokens batched together keep the logits each would get alone (NOTES.md "Continuous batching"), while the
// nibbles, scales and mins are decoded once for the 4. Integer sums are exact, so lane t of the transposed
// sums is token t's hsum_i32x4; the float side runs in f32x4 / f64x2 lanes (lane = token), each lane the
// same f32 operations (exact: fmaf) as dot_q4_K's scalar chain. a/ax: token 0's Q8_K row and widened
// quants, the next tokens as / axs apart; results at y, y + ys, y + 2ys, y + 3ys.
@inline function dot4v_q4_K(w: usize, a: usize, as: usize, ax: usize, axs: usize, nb: i32, y: usize, ys: usize, exact: bool): void {
  let acc = f32x4.splat(0), accm = acc;
  let c0 = f64x2.splat(0), c1 = c0, m0 = c0, m1 = c0;
  const m4 = i16x8.splat(0x0f), mb = i8x16.splat(0x0f);
  const end = w + <usize>nb * 144;
  const a1 = as, a2 = 2 * as, a3 = 3 * as, x1 = axs, x2 = 2 * axs, x3 = 3 * axs;
  while (w < end) {
    let ad = f32x4.splat(load<f32>(a));
    ad = f32x4.replace_lane(ad, 1, load<f32>(a + a1));
    ad = f32x4.replace_lane(ad, 2, load<f32>(a + a2));
    ad = f32x4.replace_lane(ad, 3, load<f32>(a + a3));
    const d = f32x4.mul(f32x4.splat(h2f(load<u16>(w))), ad);
    const dmin = f32x4.mul(f32x4.splat(h2f(load<u16>(w, 2))), ad);
    const smv = k4_scales_v(w + 4);
    let sc = i32x4.extend_low_i16x8_u(i16x8.extend_low_i8x16_u(smv));
    let sc2 = i32x4.extend_high_i16x8_u(i16x8.extend_low_i8x16_u(smv));
    // the 8 sub-block scales on i16 lanes, rotated by 2 per chunk (lane 0: low nibbles', lane 1: high's)
    let s16 = i16x8.extend_low_i8x16_u(smv);
    let s0 = i32x4.splat(0), s1 = s0, s2 = s0, s3 = s0;
    let qs = w + 16, q8 = ax, aq = a + 4;
    const qe = qs + 128;
    while (qs < qe) {
      const sl = i32x4.shuffle(sc, sc, 0, 0, 0, 0), sh = i32x4.shuffle(sc, sc, 1, 1, 1, 1);
      if (ASC_FEATURE_RELAXED_SIMD) {
        // pair products summed on i16 lanes (pmaddubsw; |.| <= 4*15*128 for the two halves of a sub-block),
        // then times the sub-block's scale and pair-summed into i32 lanes (pmaddwd): ggml's AVX2 shape
        const v0 = v128.load(qs), v1 = v128.load(qs, 16);
        const l0 = v128.and(v0, mb), l1 = v128.and(v1, mb), h0 = v128.and(i16x8.shr_u(v0, 4), mb), h1 = v128.and(i16x8.shr_u(v1, 4), mb);
        const sl16 = i8x16.shuffle(s16, s16, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1);
        const sh16 = i8x16.shuffle(s16, s16, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3);
        s0 = i32x4.add(s0, q4k_sub(aq, l0, l1, h0, h1, sl16, sh16));
        s1 = i32x4.add(s1, q4k_sub(aq + a1, l0, l1, h0, h1, sl16, sh16));
        s2 = i32x4.add(s2, q4k_sub(aq + a2, l0, l1, h0, h1, sl16, sh16));
        s3 = i32x4.add(s3, q4k_sub(aq + a3, l0, l1, h0, h1, sl16, sh16));
      } else {
        // the nibbles times their scale on i16 lanes (<= 15*63): one multiply per 8 weights for the 4 tokens,
        // the same exact integers as (nibbles . q8) * scale
        const u0 = v128.load8x8_u(qs), u1 = v128.load8x8_u(qs, 8), u2 = v128.load8x8_u(qs, 16), u3 = v128.load8x8_u(qs, 24);
        const sl16 = i16x8.splat(<i16>i32x4.extract_lane(sc, 0)), sh16 = i16x8.splat(<i16>i32x4.extract_lane(sc, 1));
        const l0 = i16x8.mul(v128.and(u0, m4), sl16), l1 = i16x8.mul(v128.and(u1, m4), sl16), l2 = i16x8.mul(v128.and(u2, m4), sl16), l3 = i16x8.mul(v128.and(u3, m4), sl16);
        const h0 = i16x8.mul(i16x8.shr_u(u0, 4), sh16), h1 = i16x8.mul(i16x8.shr_u(u1, 4), sh16), h2 = i16x8.mul(i16x8.shr_u(u2, 4), sh16), h3 = i16x8.mul(i16x8.shr_u(u3, 4), sh16);
        s0 = i32x4.add(s0, i32x4.add(dot32_w16(l0, l1, l2, l3, q8), dot32_w16(h0, h1, h2, h3, q8 + 64)));
        s1 = i32x4.add(s1, i32x4.add(dot32_w16(l0, l1, l2, l3, q8 + x1), dot32_w16(h0, h1, h2, h3, q8 + x1 + 64)));
        s2 = i32x4.add(s2, i32x4.add(dot32_w16(l0, l1, l2, l3, q8 + x2), dot32_w16(h0, h1, h2, h3, q8 + x2 + 64)));
        s3 = i32x4.add(s3, i32x4.add(dot32_w16(l0, l1, l2, l3, q8 + x3), dot32_w16(h0, h1, h2, h3, q8 + x3 + 64)));
      }
      sc = i32x4.shuffle(sc, sc2, 2, 3, 4, 5);
      sc2 = i32x4.shuffle(sc2, sc2, 2, 3, 0, 1);
      s16 = i8x16.shuffle(s16, s16, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3);
      qs += 32; q8 += 128; aq += 64;
    }
    const isum = f32x4.convert_i32x4_s(hsum4_i32(s0, s1, s2, s3));
    const mins = f32x4.convert_i32x4_s(hsum4_i32(k4_mins_lanes(smv, a), k4_mins_lanes(smv, a + a1), k4_mins_lanes(smv, a + a2), k4_mins_lanes(smv, a + a3)));
    if (exact) {
      if (ASC_FEATURE_RELAXED_SIMD) {
        // fmaf = relaxed_madd (checked fused at start-up), lane = token
        acc = f32x4.relaxed_madd(isum, d, acc);
        accm = f32x4.relaxed_madd(mins, dmin, accm);
      } else {
        const e0 = f64x2.mul(lo_f64(isum), lo_f64(d)), e1 = f64x2.mul(hi_f64(isum), hi_f64(d));
        const e2 = f64x2.mul(lo_f64(mins), lo_f64(dmin)), e3 = f64x2.mul(hi_f64(mins), hi_f64(dmin));
        const f0 = f64x2.add(e0, c0), f1 = f64x2.add(e1, c1), f2 = f64x2.add(e2, m0), f3 = f64x2.add(e3, m1);
        if (tie_any(f0, f1, f2, f3)) {
          c0 = fma2_tie(e0, c0); c1 = fma2_tie(e1, c1); m0 = fma2_tie(e2, m0); m1 = fma2_tie(e3, m1);
        } else {
          c0 = round2(f0); c1 = round2(f1); m0 = round2(f2); m1 = round2(f3);
        }
      }
    } else {
      acc = f32x4.add(acc, f32x4.mul(isum, d));
      accm = f32x4.add(accm, f32x4.mul(mins, dmin));
    }
    w += 144; a += 292; ax += 512;
  }
  const r = exact && !ASC_FEATURE_RELAXED_SIMD ? f32x4.sub(f32x4_of(c0, c1), f32x4_of(m0, m1)) : f32x4.sub(acc, accm);
  store<f32>(y, f32x4.extract_lane(r, 0));
  store<f32>(y + ys, f32x4.extract_lane(r, 1));
  store<f32>(y + 2 * ys, f32x4.extract_lane(r, 2));
  store<f32>(y + 3 * ys, f32x4.extract_lane(r, 3));
}
// two tokens' exact chunk sums (q4k_sub, activations at aq and aq + a1) pair-reduced (hs2_i32) into acc: lanes
// [t0 0+2, t1 0+2, t0 1+3, t1 1+3]. Each pin stores a lane of the newest value (p0, then the new acc), so V8 can
// neither hoist the next token's activation loads nor sink the reduction to the block end (with q4k_tok4's
// per-token pins it sank the transposes and kept all 16 token-chunk vectors of a block live: 75 spill accesses)
@inline function q4k_pair2(aq: usize, a1: usize, n0: v128, n1: v128, n2: v128, n3: v128, sl: v128, sh: v128, y: usize, acc: v128, first: bool): v128 {
  const p0 = q4k_sub(aq, n0, n1, n2, n3, sl, sh);
  v128.store32_lane(y, p0, 0);
  const t = hs2_i32(p0, q4k_sub(aq + a1, n0, n1, n2, n3, sl, sh));
  const r = first ? t : i32x4.add(acc, t);
  v128.store32_lane(y, r, 0);
  return r;
}
// dot4v_q4_K in the relaxed build: the same exact integers (only their i32 order changed) and the same f32
// operations per lane = token: same bits. The 4 chunks straight-line with immediate offsets, each sub-block's
// scale splat one pshufd (e0, e1: the 8 scales as i16, each twice), [d, dmin] of two super-blocks converted by
// one h2f4, few live vectors (V8 allocates xmm0-15 only): the mins first, folded into accm at the block's top (the scales
// vector is dead before the chunks), then each chunk's 4 token sums pair-reduced at once into two i32x4
// accumulators (u: tokens 0, 1; v: 2, 3; q4k_pair2) instead of four, transposed to lane = token at the end
// (before: four per-token accumulators and the scales live through the chunks, V8 497 instructions and 75
// spill-slot accesses per block; now 459 and 37, counted as in BENCHMARKS' np4 section).
@inline function dot4v_q4_K_rx(w: usize, a: usize, as: usize, nb: i32, y: usize, ys: usize, exact: bool): void {
  let acc = f32x4.splat(0), accm = acc;
  const end = w + <usize>nb * 144;
  const a1 = as, a2 = 2 * as, a3 = 3 * as;
  let hd = f32x4.splat(0);
  let pair = false;
  while (w < end) {
    // [d, dmin] of this block and the next (lanes 0, 1 / 2, 3), converted every other block
    if (!pair) {
      const h = w + 144 < end ? v128.load32_lane(w + 144, v128.load32_zero(w), 1) : v128.load32_zero(w);
      hd = h2f4(i32x4.extend_low_i16x8_u(h));
    } else hd = i32x4.shuffle(hd, hd, 2, 3, 0, 1);
    pair = !pair;
    const smv = k4_scales_v(w + 4);
    const ad = v128.load32_lane(a + a3, v128.load32_lane(a + a2, v128.load32_lane(a + a1, v128.load32_zero(a), 1), 2), 3);
    {
      const mins = f32x4.convert_i32x4_s(hsum4_i32(k4_mins_lanes(smv, a), k4_mins_lanes(smv, a + a1), k4_mins_lanes(smv, a + a2), k4_mins_lanes(smv, a + a3)));
      const dmin = f32x4.mul(i32x4.shuffle(hd, hd, 1, 1, 1, 1), ad);
      accm = exact ? f32x4.relaxed_madd(mins, dmin, accm) : f32x4.add(accm, f32x4.mul(mins, dmin));
    }
    const d = f32x4.mul(i32x4.shuffle(hd, hd, 0, 0, 0, 0), ad);
    const s16 = i16x8.extend_low_i8x16_u(smv);
    const e0 = i16x8.shuffle(s16, s16, 0, 0, 1, 1, 2, 2, 3, 3), e1 = i16x8.shuffle(s16, s16, 4, 4, 5, 5, 6, 6, 7, 7);
    const mb = i8x16.splat(0x0f);
    let u = i32x4.splat(0), v = u;
    {
      const v0 = v128.load(w, 16), v1 = v128.load(w, 32);
      const n0 = v128.and(v0, mb), n1 = v128.and(v1, mb), n2 = v128.and(i16x8.shr_u(v0, 4), mb), n3 = v128.and(i16x8.shr_u(v1, 4), mb);
      const sl = i32x4.shuffle(e0, e0, 0, 0, 0, 0), sh = i32x4.shuffle(e0, e0, 1, 1, 1, 1);
      u = q4k_pair2(a + 4, a1, n0, n1, n2, n3, sl, sh, y, u, true);
      v = q4k_pair2(a + 4 + a2, a1, n0, n1, n2, n3, sl, sh, y, v, true);
    }
    {
      const v0 = v128.load(w, 48), v1 = v128.load(w, 64);
      const n0 = v128.and(v0, mb), n1 = v128.and(v1, mb), n2 = v128.and(i16x8.shr_u(v0, 4), mb), n3 = v128.and(i16x8.shr_u(v1, 4), mb);
      const sl = i32x4.shuffle(e0, e0, 2, 2, 2, 2), sh = i32x4.shuffle(e0, e0, 3, 3, 3, 3);
      u = q4k_pair2(a + 68, a1, n0, n1, n2, n3, sl, sh, y, u, false);
      v = q4k_pair2(a + 68 + a2, a1, n0, n1, n2, n3, sl, sh, y, v, false);
    }
    {
      const v0 = v128.load(w, 80), v1 = v128.load(w, 96);
      const n0 = v128.and(v0, mb), n1 = v128.and(v1, mb), n2 = v128.and(i16x8.shr_u(v0, 4), mb), n3 = v128.and(i16x8.shr_u(v1, 4), mb);
      const sl = i32x4.shuffle(e1, e1, 0, 0, 0, 0), sh = i32x4.shuffle(e1, e1, 1, 1, 1, 1);
      u = q4k_pair2(a + 132, a1, n0, n1, n2, n3, sl, sh, y, u, false);
      v = q4k_pair2(a + 132 + a2, a1, n0, n1, n2, n3, sl, sh, y, v, false);
    }
    {
      const v0 = v128.load(w, 112), v1 = v128.load(w, 128);
      const n0 = v128.and(v0, mb), n1 = v128.and(v1, mb), n2 = v128.and(i16x8.shr_u(v0, 4), mb), n3 = v128.and(i16x8.shr_u(v1, 4), mb);
      const sl = i32x4.shuffle(e1, e1, 2, 2, 2, 2), sh = i32x4.shuffle(e1, e1, 3, 3, 3, 3);
      u = q4k_pair2(a + 196, a1, n0, n1, n2, n3, sl, sh, y, u, false);
      v = q4k_pair2(a + 196 + a2, a1, n0, n1, n2, n3, sl, sh, y, v, false);
    }
    const isum = f32x4.convert_i32x4_s(hs4_i32(u, v));
    acc = exact ? f32x4.relaxed_madd(isum, d, acc) : f32x4.add(acc, f32x4.mul(isum, d));
    w += 144; a += 292;
  }
  const r = f32x4.sub(acc, accm);
  store<f32>(y, f32x4.extract_lane(r, 0));
  store<f32>(y + ys, f32x4.extract_lane(r, 1));
  store<f32>(y + 2 * ys, f32x4.extract_lane(r, 2));
  store<f32>(y + 3 * ys, f32x4.extract_lane(r, 3));
}
// dot4v_q4_K_rx for 2 (three = false) or 3 sequences' decode tokens (partial batches of -np 4): lanes 0-2
// of the same vector operations as dot4v (each lane its token's exact integers and f32 operations, so the
// same bits as the one-token kernel), the weights decoded once for all the tokens
@inline function dot3v_q4_K_rx(w: usize, a: usize, as: usize, nb: i32, y: usize, ys: usize, exact: bool, three: bool): void {
  let acc = f32x4.splat(0), accm = acc;
  const mb = i8x16.splat(0x0f);
  const end = w + <usize>nb * 144;
  let a0 = a, a1 = a + as, a2 = three ? a + 2 * as : a + as;
  let hd = f32x4.splat(0);
  let pair = false;
  while (w < end) {
    // [d, dmin] of this block and the next (lanes 0, 1 / 2, 3), converted every other block
    if (!pair) {
      const h = w + 144 < end ? v128.load32_lane(w + 144, v128.load32_zero(w), 1) : v128.load32_zero(w);
      hd = h2f4(i32x4.extend_low_i16x8_u(h));
    } else hd = i32x4.shuffle(hd, hd, 2, 3, 0, 1);
    pair = !pair;
    const smv = k4_scales_v(w + 4);
    const s16 = i16x8.extend_low_i8x16_u(smv);
    const e0 = i16x8.shuffle(s16, s16, 0, 0, 1, 1, 2, 2, 3, 3), e1 = i16x8.shuffle(s16, s16, 4, 4, 5, 5, 6, 6, 7, 7);
    let s0: v128, s1: v128, s2: v128;
    {
      const v0 = v128.load(w, 16), v1 = v128.load(w, 32);
      const l0 = v128.and(v0, mb), l1 = v128.and(v1, mb), h0 = v128.and(i16x8.shr_u(v0, 4), mb), h1 = v128.and(i16x8.shr_u(v1, 4), mb);
      const sl = i32x4.shuffle(e0, e0, 0, 0, 0, 0), sh = i32x4.shuffle(e0, e0, 1, 1, 1, 1);
      s0 = q4k_sub(a0 + 4, l0, l1, h0, h1, sl, sh);
      s1 = q4k_sub(a1 + 4, l0, l1, h0, h1, sl, sh);
      store<i32>(y, i32x4.extract_lane(v128.or(s0, s1), 0));
      s2 = three ? q4k_sub(a2 + 4, l0, l1, h0, h1, sl, sh) : s1;
    }
    {
      const v0 = v128.load(w, 48), v1 = v128.load(w, 64);
      const l0 = v128.and(v0, mb), l1 = v128.and(v1, mb), h0 = v128.and(i16x8.shr_u(v0, 4), mb), h1 = v128.and(i16x8.shr_u(v1, 4), mb);
      const sl = i32x4.shuffle(e0, e0, 2, 2, 2, 2), sh = i32x4.shuffle(e0, e0, 3, 3, 3, 3);
      s0 = i32x4.add(s0, q4k_sub(a0 + 68, l0, l1, h0, h1, sl, sh));
      s1 = i32x4.add(s1, q4k_sub(a1 + 68, l0, l1, h0, h1, sl, sh));
      store<i32>(y, i32x4.extract_lane(v128.or(s0, s1), 0));
      if (three) s2 = i32x4.add(s2, q4k_sub(a2 + 68, l0, l1, h0, h1, sl, sh));
    }
    {
      const v0 = v128.load(w, 80), v1 = v128.load(w, 96);
      const l0 = v128.and(v0, mb), l1 = v128.and(v1, mb), h0 = v128.and(i16x8.shr_u(v0, 4), mb), h1 = v128.and(i16x8.shr_u(v1, 4), mb);
      const sl = i32x4.shuffle(e1, e1, 0, 0, 0, 0), sh = i32x4.shuffle(e1, e1, 1, 1, 1, 1);
      s0 = i32x4.add(s0, q4k_sub(a0 + 132, l0, l1, h0, h1, sl, sh));
      s1 = i32x4.add(s1, q4k_sub(a1 + 132, l0, l1, h0, h1, sl, sh));
      store<i32>(y, i32x4.extract_lane(v128.or(s0, s1), 0));
      if (three) s2 = i32x4.add(s2, q4k_sub(a2 + 132, l0, l1, h0, h1, sl, sh));
    }
    {
      const v0 = v128.load(w, 112), v1 = v128.load(w, 128);
      const l0 = v128.and(v0, mb), l1 = v128.and(v1, mb), h0 = v128.and(i16x8.shr_u(v0, 4), mb), h1 = v128.and(i16x8.shr_u(v1, 4), mb);
      const sl = i32x4.shuffle(e1, e1, 2, 2, 2, 2), sh = i32x4.shuffle(e1, e1, 3, 3, 3, 3);
      s0 = i32x4.add(s0, q4k_sub(a0 + 196, l0, l1, h0, h1, sl, sh));
      s1 = i32x4.add(s1, q4k_sub(a1 + 196, l0, l1, h0, h1, sl, sh));
      store<i32>(y, i32x4.extract_lane(v128.or(s0, s1), 0));
      if (three) s2 = i32x4.add(s2, q4k_sub(a2 + 196, l0, l1, h0, h1, sl, sh));
    }
    // the activation scales loaded after the last pin store, as in dot4v_q4_K_rx
    let ad = f32x4.splat(load<f32>(a0));
    ad = f32x4.replace_lane(ad, 1, load<f32>(a1));
    ad = f32x4.replace_lane(ad, 2, load<f32>(a2));
    const d = f32x4.mul(i32x4.shuffle(hd, hd, 0, 0, 0, 0), ad);
    const dmin = f32x4.mul(i32x4.shuffle(hd, hd, 1, 1, 1, 1), ad);
    const isum = f32x4.convert_i32x4_s(hsum4_i32(s0, s1, three ? s2 : s1, s1));
    const mins = f32x4.convert_i32x4_s(hsum4_i32(k4_mins_lanes(smv, a0), k4_mins_lanes(smv, a1), three ? k4_mins_lanes(smv, a2) : i32x4.splat(0), i32x4.splat(0)));
    if (exact) {
      acc = f32x4.relaxed_madd(isum, d, acc);
      accm = f32x4.relaxed_madd(mins, dmin, accm);
    } else {
      acc = f32x4.add(acc, f32x4.mul(isum, d));
      accm = f32x4.add(accm, f32x4.mul(mins, dmin));
    }
    w += 144; a0 += 292; a1 += 292; a2 += 292;
  }
  const r = f32x4.sub(acc, accm);
  store<f32>(y, f32x4.extract_lane(r, 0));
  store<f32>(y + ys, f32x4.extract_lane(r, 1));
  if (three) store<f32>(y + 2 * ys, f32x4.extract_lane(r, 2));
}
// activation rows t < nGemm (a multiple of 4) take the GEMM order, 4 at a time; the rest the GEMV order,
// whose float side is ggml's (exact) or plain multiply-adds (fast)
@inline function mm_q4_K_any(r0: i32, r1: i32, w: usize, ws: usize, a: usize, as: usize, nTok: i32, y: usize, ys: usize, nb: i32, ax: usize, axs: usize, nGemm: i32, exact: bool): void {
  const wend = w + <usize>r1 * ws;
  // the 8-token GEMM in blocks of g8_tokens(as) tokens: their activation rows stay in L2 while the thread's
  // weight rows pass over them once per block (before, all tokens per 8-row tile: the activations streamed
  // from L3 once per tile)
  let t8 = 0;
  const G8_TOK = g8_tokens(as);
  if (ASC_FEATURE_RELAXED_SIMD) {
    t8 = nGemm & ~7;
    for (let tb = 0; tb < t8; tb += G8_TOK) {
      const te = min(tb + G8_TOK, t8);
      for (let rt = r0; rt < r1; rt += ROW_TILE) {
        const re = min(rt + ROW_TILE, r1);
        for (let t = tb; t < te; t += 8) {
          const at = a + <usize>t * as, yt = y + <usize>t * ys;
          // ax: the tokens' interleaved table (act/quantize.ts q8_K_x4, axs bytes per group of 4 tokens)
          const xt = ax + <usize>(t >> 2) * axs;
          for (let r = rt; r < re; r++) dot8t_q4_K_x(w + <usize>r * ws, xt, axs, nb, yt + (<usize>r << 2), ys);
        }
      }
    }
  }
  // tiles of ROW_TILE rows stay in L1 while the activation rows pass over them
  for (let rt = r0; rt < r1; rt += ROW_TILE) {
    const re = min(rt + ROW_TILE, r1);
    let t = t8;
    for (; t + 4 <= nGemm; t += 4) {
      const at = a + <usize>t * as, xt = ax + <usize>t * axs, yt = y + <usize>t * ys;
      let r = rt;
      // SIMD128: 2 rows share the widened activations; relaxed SIMD: dot4t's int8 path is the faster one
      if (!ASC_FEATURE_RELAXED_SIMD) for (; r + 2 <= re; r += 2) dot2r4t_q4_K(w + <usize>r * ws, ws, at, as, xt, axs, nb, yt + (<usize>r << 2), ys);
      if (ASC_FEATURE_RELAXED_SIMD) for (; r < re; r++) dot4t_q4_K_r(w + <usize>r * ws, at, as, nb, yt + (<usize>r << 2), ys);
      for (; r < re; r++) dot4t_q4_K(w + <usize>r * ws, at, as, xt, axs, nb, yt + (<usize>r << 2), ys);
    }
    // GEMV-order rows (several sequences' decode tokens): 4 at a time, each its one-token result
    for (; t + 4 <= nTok; t += 4) {
      const at = a + <usize>t * as, xt = ax + <usize>t * axs, yt = y + <usize>t * ys;
      // no touch-ahead (touch.ts) in the multi-token loops: these kernels are compute-bound, the hardware
      // prefetcher keeps up, and the touches' bursts cost more than they hid (CPU-time A/B on the AMD EPYC,
      // from DRAM, 1 thread: tok=4 1.14x without Q4K_TOUCH's 2.5 KiB, tok=2/3 1.17-1.5x without 16 KiB)
      for (let r = rt; r < re; r++) {
        const p = w + <usize>r * ws;
        if (ASC_FEATURE_RELAXED_SIMD) dot4v_q4_K_rx(p, at, as, nb, yt + (<usize>r << 2), ys, exact);
        else dot4v_q4_K(p, at, as, xt, axs, nb, yt + (<usize>r << 2), ys, exact);
      }
    }
    if (ASC_FEATURE_RELAXED_SIMD && nTok - t >= 2) {
      const at = a + <usize>t * as, yt = y + <usize>t * ys;
      const three = nTok - t == 3;
      for (let r = rt; r < re; r++) {
        const p = w + <usize>r * ws;
        if (three) dot3v_q4_K_rx(p, at, as, nb, yt + (<usize>r << 2), ys, exact, true);
        else dot3v_q4_K_rx(p, at, as, nb, yt + (<usize>r << 2), ys, exact, false);
      }
      t = nTok;
    }
    for (; t < nTok; t++) {
      const at = a + <usize>t * as, xt = ax + <usize>t * axs, yt = y + <usize>t * ys;
      for (let r = rt; r < re; r++) {
        const p = w + <usize>r * ws;
        if (Q4K_TOUCH != 0) store<u32>(yt + (<usize>r << 2), touch_ahead(p, ws, wend, Q4K_TOUCH));
        store<f32>(yt + (<usize>r << 2), dot_q4_K(p, at, xt, nb, exact));
      }
    }
  }
}
export function mm_q4_K(r0: i32, r1: i32, w: usize, ws: usize, a: usize, as: usize, nTok: i32, y: usize, ys: usize, nb: i32, ax: usize, axs: usize, nGemm: i32): void {
  mm_q4_K_any(r0, r1, w, ws, a, as, nTok, y, ys, nb, ax, axs, nGemm, true);
}
export function mmf_q4_K(r0: i32, r1: i32, w: usize, ws: usize, a: usize, as: usize, nTok: i32, y: usize, ys: usize, nb: i32, ax: usize, axs: usize, nGemm: i32): void {
  mm_q4_K_any(r0, r1, w, ws, a, as, nTok, y, ys, nb, ax, axs, nGemm, false);
}
