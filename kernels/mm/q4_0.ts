import { h2f, h2f4 } from '../common/f16';
import { scales4_normal } from '../common/f16-scale';
import { f32x4_of, fma2_tie, fma4, fmaf, hi_f64, lo_f64, round2, tie_any } from '../common/fmaf';
import { hs2_i32, hs4_i32, hsum4_i32, hsum_i32x4 } from '../common/simd';
import { ROW_TILE } from './tile';
import { Q4R4_TOUCH } from './touch';

// unsigned nibbles of one Q4_0 block (16 bytes at q) . 32 int8 activations at a -> i32x4 partial sums
@inline function q4_block(q: usize, a: usize): v128 {
  const m = i16x8.splat(0x0f);
  const v0 = v128.load8x8_u(q), v1 = v128.load8x8_u(q, 8);
  return i32x4.add(
    i32x4.add(i32x4.dot_i16x8_s(v128.and(v0, m), v128.load8x8_s(a)), i32x4.dot_i16x8_s(v128.and(v1, m), v128.load8x8_s(a, 8))),
    i32x4.add(i32x4.dot_i16x8_s(i16x8.shr_u(v0, 4), v128.load8x8_s(a, 16)), i32x4.dot_i16x8_s(i16x8.shr_u(v1, 4), v128.load8x8_s(a, 24))));
}
// ggml_gemv/gemm_q4_0_8x8_q8_0 (Q4_0 weights with rows % 8 == 0 are repacked by llama.cpp): per block the
// exact integer dot (the -8 offset folded out via the aux table's 8*sum(q)) fused-multiply-added with
// d = d_w*d_a into one f32 accumulator
@inline function dot_q4_0(w: usize, a: usize, ax: usize, nb: i32): f32 {
  let acc: f32 = 0;
  let cp = ax + (<usize>nb << 2), dp = ax;
  const we = w + <usize>nb * 18;
  while (w < we) {
    const s = hsum_i32x4(i32x4.sub(q4_block(w + 2, a + 2), v128.load(cp)));
    acc = fmaf(<f32>s, h2f(load<u16>(w)) * load<f32>(dp), acc);
    w += 18; a += 34; cp += 16; dp += 4;
  }
  return acc;
}
export function mm_q4_0(r0: i32, r1: i32, w: usize, ws: usize, a: usize, as: usize, nTok: i32, y: usize, ys: usize, nb: i32, ax: usize, axs: usize): void {
  // tiles of ROW_TILE rows stay in L1 while each activation row passes over them
  for (let rt = r0; rt < r1; rt += ROW_TILE) {
    const re = min(rt + ROW_TILE, r1);
    for (let t = 0; t < nTok; t++) {
      const at = a + <usize>t * as, yt = y + <usize>t * ys;
      for (let r = rt; r < re; r++) store<f32>(yt + (<usize>r << 2), dot_q4_0(w + <usize>r * ws, at, ax + <usize>t * axs, nb));
    }
  }
}
// one Q4_0 block row (16 bytes of nibbles at q) . widened activations a0..a3 -> i32x4 partial sums
@inline function q4r_row(q: usize, a0: v128, a1: v128, a2: v128, a3: v128): v128 {
  const m = i16x8.splat(0x0f);
  const u0 = v128.load8x8_u(q), u1 = v128.load8x8_u(q, 8);
  return i32x4.add(
    i32x4.add(i32x4.dot_i16x8_s(v128.and(u0, m), a0), i32x4.dot_i16x8_s(v128.and(u1, m), a1)),
    i32x4.add(i32x4.dot_i16x8_s(i16x8.shr_u(u0, 4), a2), i32x4.dot_i16x8_s(i16x8.shr_u(u1, 4), a3)));
}
// The exact integer sums of one Q4_0r4 block for its 4 rows (lane = row), before the -8 offset.
// SIMD128: nibbles widened on u16 lanes . the aux table's widened activations (ap, 64 B per block).
// Relaxed SIMD: the 16 bytes of a row split into low/high nibbles (the 7-bit operand) . the Q8_0 block's
// int8 quants (aq), pair sums on i16 lanes (pmaddubsw, each |.| <= 2*15*128 = 3840); same integers.
@inline function q4x_row16(q: usize, alo: v128, ahi: v128, m: v128): v128 {
  const v = v128.load(q);
  return i16x8.add(i16x8.relaxed_dot_i8x16_i7x16_s(alo, v128.and(v, m)), i16x8.relaxed_dot_i8x16_i7x16_s(ahi, v128.and(i16x8.shr_u(v, 4), m)));
}
// 4 rows' i16 pair sums (2 per lane) -> i32x4 of the rows' totals: two rounds of unpack + i16 add leave 8
// pair sums per lane (|.| <= 30720, no wrap), lanes [r0 r0 r1 r1 r2 r2 r3 r3], then one pairwise widening
// add (pmaddwd by ones) instead of one per row and a 4x4 i32 transpose.
@inline function rows4_i16(p0: v128, p1: v128, p2: v128, p3: v128): v128 {
  const a = i16x8.add(i32x4.shuffle(p0, p1, 0, 4, 1, 5), i32x4.shuffle(p0, p1, 2, 6, 3, 7));
  const b = i16x8.add(i32x4.shuffle(p2, p3, 0, 4, 1, 5), i32x4.shuffle(p2, p3, 2, 6, 3, 7));
  return i32x4.extadd_pairwise_i16x8_s(i16x8.add(i32x4.shuffle(a, b, 0, 1, 4, 5), i32x4.shuffle(a, b, 2, 3, 6, 7)));
}
@inline function q4r4_sums(w: usize, ap: usize, aq: usize): v128 {
  if (ASC_FEATURE_RELAXED_SIMD) {
    const alo = v128.load(aq), ahi = v128.load(aq, 16), m = i8x16.splat(0x0f);
    return rows4_i16(q4x_row16(w + 8, alo, ahi, m), q4x_row16(w + 24, alo, ahi, m), q4x_row16(w + 40, alo, ahi, m), q4x_row16(w + 56, alo, ahi, m));
  }
  const a0 = v128.load(ap), a1 = v128.load(ap, 16), a2 = v128.load(ap, 32), a3 = v128.load(ap, 48);
  return hsum4_i32(q4r_row(w + 8, a0, a1, a2, a3), q4r_row(w + 24, a0, a1, a2, a3), q4r_row(w + 40, a0, a1, a2, a3), q4r_row(w + 56, a0, a1, a2, a3));
}
// Each block's 4 integer sums (minus 8*sum(q)) meet the scales in one of two float orders, picked at compile
// time by `exact`: ggml_gemv/gemm_q4_0_8x8_q8_0's per-row fused multiply-add chains (4 rows side by side in
// two f64x2, FMA emulated), or free-order f32x4 multiply-adds ('fast' numerics).
// exact: f64x2 c0 (rows 0-1) and c1 (rows 2-3) hold the chains; fast: c0 holds the 4 rows' f32 sums
// (relaxed build, exact: c0 holds the 4 chains as f32x4, fmaf = relaxed_madd, checked fused at start-up)
@inline function q4r4_result(c0: v128, c1: v128, exact: bool): v128 {
  if (ASC_FEATURE_RELAXED_SIMD) return c0;
  return exact ? f32x4_of(c0, c1) : c0;
}
// h2f4_normal from sign-extended f16 lanes (load16x4_s): << 13 puts exponent and mantissa in f32 position and
// copies the sign into bits 31-28; clearing bits 30-28 and adding the rebias (112 << 23) gives h2f4_normal's bits
// for normal inputs in 3 ops instead of 6
@inline function h2f4_normal_s(hs: v128): v128 {
  return i32x4.add(v128.and(i32x4.shl(hs, 13), i32x4.splat(0x8fffffff)), i32x4.splat(112 << 23));
}
// one block of dot4_q4_0r4_s's fast relaxed loop: c + f32(sums - 8*sum(q)) * (d_w * d_a)
@inline function q4r4_fast_blk(c: v128, w: usize, aq: usize, cp: usize, dp: usize, normal: bool): v128 {
  return q4r4_fast_blk_d(c, w, aq, cp, dp, normal ? h2f4_normal_s(v128.load16x4_s(w)) : h2f4(v128.load16x4_u(w)));
}
// the same with the block's 4 scales already converted (dw); exact (relaxed build): the 4 rows' fused chains
@inline function q4r4_fast_blk_d(c: v128, w: usize, aq: usize, cp: usize, dp: usize, dw: v128, exact: bool = false): v128 {
  const d4 = f32x4.mul(dw, v128.load32_splat(dp));
  const sums = i32x4.sub(q4r4_sums(w, 0, aq), v128.load32_splat(cp));
  return exact ? fma4(f32x4.convert_i32x4_s(sums), d4, c) : f32x4.add(c, f32x4.mul(f32x4.convert_i32x4_s(sums), d4));
}
// scales4_normal's test of 4 sign-extended f16 lanes: a lane is 0 unless its exponent is 1..30 (a normal number)
@inline function normal_test(hs: v128): v128 {
  return v128.and(i32x4.add(hs, i32x4.splat(0x400)), i32x4.splat(0x7800));
}
// dot4_q4_0r4's relaxed loop (fast, or exact: fused chains) on h2f4_normal_s's scales, testing each block's scales as it goes (instead of a
// pass over the group's scales first, which read every cache line of the group twice: 1.2x slower, ab-matvec).
// Returns false, with y undefined, when a scale was not a normal f16 (zero, subnormal, inf, nan): the caller
// then runs the general loop. Four blocks per iteration: one set of pointer increments, one exit test and one
// stack check per 4 blocks. The store of the running sum between blocks (overwritten by the final one) keeps V8
// from hoisting the next block's loads above this block's arithmetic: without it, 2 blocks per iteration spilled 8
// registers per pass. Each block's f32 step is the general loop's fast one, in block order (same bits).
@inline function dot4_q4_0r4_chk(w: usize, a: usize, ax: usize, nb: i32, y: usize, exact: bool): bool {
  let c0 = f32x4.splat(0), ok = i32x4.splat(-1);
  let cp = ax + (<usize>nb << 2), dp = ax, aq = a + 2;
  const we = w + <usize>nb * 72, we4 = w + <usize>(nb & ~3) * 72;
  while (w < we4) {
    let hs = v128.load16x4_s(w);
    ok = i32x4.min_u(ok, normal_test(hs));
    c0 = q4r4_fast_blk_d(c0, w, aq, cp, dp, h2f4_normal_s(hs), exact);
    v128.store(y, c0);
    hs = v128.load16x4_s(w + 72);
    ok = i32x4.min_u(ok, normal_test(hs));
    c0 = q4r4_fast_blk_d(c0, w + 72, aq + 34, cp + 16, dp + 4, h2f4_normal_s(hs), exact);
    v128.store(y, c0);
    hs = v128.load16x4_s(w + 144);
    ok = i32x4.min_u(ok, normal_test(hs));
    c0 = q4r4_fast_blk_d(c0, w + 144, aq + 68, cp + 32, dp + 8, h2f4_normal_s(hs), exact);
    v128.store(y, c0);
    hs = v128.load16x4_s(w + 216);
    ok = i32x4.min_u(ok, normal_test(hs));
    c0 = q4r4_fast_blk_d(c0, w + 216, aq + 102, cp + 48, dp + 12, h2f4_normal_s(hs), exact);
    w += 288; aq += 136; cp += 64; dp += 16;
  }
  while (w < we) {
    const hs = v128.load16x4_s(w);
    ok = i32x4.min_u(ok, normal_test(hs));
    c0 = q4r4_fast_blk_d(c0, w, aq, cp, dp, h2f4_normal_s(hs), exact);
    w += 72; aq += 34; cp += 16; dp += 4;
  }
  v128.store(y, c0);
  return i32x4.all_true(ok);
}
function dot4_q4_0r4_fc(w: usize, a: usize, ax: usize, nb: i32, y: usize): bool { return dot4_q4_0r4_chk(w, a, ax, nb, y, false); }
function dot4_q4_0r4_ec(w: usize, a: usize, ax: usize, nb: i32, y: usize): bool { return dot4_q4_0r4_chk(w, a, ax, nb, y, true); }
// 4 rows of a Q4_0r4 group against one activation row (Q8_0 quants at a, aux table at ax): 4 results at y
// (normal: every scale of the group is a normal f16, see scales4_normal)
// tl: the last address a touch-ahead load may start at minus 64 (two u32 loads per 72-byte block, Q4R4_TOUCH
// ahead, spread over the blocks: a burst of a group's 72 touches at its start stalled the window on the misses)
@inline function dot4_q4_0r4_s(w: usize, a: usize, ax: usize, nb: i32, y: usize, exact: bool, normal: bool, tl: usize): void {
  let c0 = f64x2.splat(0), c1 = c0;
  let t: u32 = 0;
  let cp = ax + (<usize>nb << 2), dp = ax, ap = ax + <usize>nb * 20, aq = a + 2;
  const we = w + <usize>nb * 72;
  while (w < we) {
    const q = min(w + Q4R4_TOUCH, tl);
    if (Q4R4_TOUCH != 0) t |= load<u32>(q) | load<u32>(q, 64);
    const d4 = f32x4.mul(normal ? h2f4_normal_s(v128.load16x4_s(w)) : h2f4(v128.load16x4_u(w)), v128.load32_splat(dp));
    const sums = i32x4.sub(q4r4_sums(w, ap, aq), v128.load32_splat(cp));
    if (exact && ASC_FEATURE_RELAXED_SIMD) {
      c0 = fma4(f32x4.convert_i32x4_s(sums), d4, c0);
    } else if (exact) {
      // |sum| <= 32*8*128: exact in f32, so straight to f64
      const p0 = f64x2.mul(f64x2.convert_low_i32x4_s(sums), lo_f64(d4));
      const p1 = f64x2.mul(f64x2.convert_low_i32x4_s(i32x4.shuffle(sums, sums, 2, 3, 0, 1)), hi_f64(d4));
      const s0 = f64x2.add(p0, c0), s1 = f64x2.add(p1, c1);
      const m = i64x2.splat(0x1fffffff), t = i64x2.splat(0x10000000);
      if (v128.any_true(v128.or(i64x2.eq(v128.and(s0, m), t), i64x2.eq(v128.and(s1, m), t)))) {
        c0 = fma2_tie(p0, c0); c1 = fma2_tie(p1, c1);
      } else {
        c0 = round2(s0); c1 = round2(s1);
      }
    } else {
      c0 = f32x4.add(c0, f32x4.mul(f32x4.convert_i32x4_s(sums), d4));
    }
    w += 72; ap += 64; aq += 34; cp += 16; dp += 4;
  }
  store<u32>(y, t);
  v128.store(y, q4r4_result(c0, c1, exact));
}
// the four specializations through functions of their own: written as one inlined if/else on the flag,
// Binaryen folds the two scale variants back into one loop that tests the flag every block (seen in the
// wasm and in perf); through these functions (which it inlines later) the loops stay apart
function dot4_q4_0r4_en(w: usize, a: usize, ax: usize, nb: i32, y: usize, tl: usize): void { dot4_q4_0r4_s(w, a, ax, nb, y, true, true, tl); }
function dot4_q4_0r4_ea(w: usize, a: usize, ax: usize, nb: i32, y: usize, tl: usize): void { dot4_q4_0r4_s(w, a, ax, nb, y, true, false, tl); }
function dot4_q4_0r4_fn(w: usize, a: usize, ax: usize, nb: i32, y: usize, tl: usize): void { dot4_q4_0r4_s(w, a, ax, nb, y, false, true, tl); }
function dot4_q4_0r4_fa(w: usize, a: usize, ax: usize, nb: i32, y: usize, tl: usize): void { dot4_q4_0r4_s(w, a, ax, nb, y, false, false, tl); }
@inline function dot4_q4_0r4(w: usize, a: usize, ax: usize, nb: i32, y: usize, exact: bool, tl: usize): void {
  if (ASC_FEATURE_RELAXED_SIMD && Q4R4_TOUCH == 0) {
    // nearly every group has normal scales: test them on the way, and redo the rare group that has not
    if (exact) {
      if (!dot4_q4_0r4_ec(w, a, ax, nb, y)) dot4_q4_0r4_ea(w, a, ax, nb, y, tl);
    } else {
      if (!dot4_q4_0r4_fc(w, a, ax, nb, y)) dot4_q4_0r4_fa(w, a, ax, nb, y, tl);
    }
    return;
  }
  const normal = scales4_normal(w, nb, 72);
  if (exact) {
    if (normal) dot4_q4_0r4_en(w, a, ax, nb, y, tl); else dot4_q4_0r4_ea(w, a, ax, nb, y, tl);
  } else {
    if (normal) dot4_q4_0r4_fn(w, a, ax, nb, y, tl); else dot4_q4_0r4_fa(w, a, ax, nb, y, tl);
  }
}
// nibbles split on u16 lanes (l0, l1 low, h0, h1 high) . 32 widened activations at x -> i32x4 partial sums
@inline function q4r_dot(l0: v128, l1: v128, h0: v128, h1: v128, x: usize): v128 {
  return i32x4.add(
    i32x4.add(i32x4.dot_i16x8_s(l0, v128.load(x)), i32x4.dot_i16x8_s(l1, v128.load(x, 16))),
    i32x4.add(i32x4.dot_i16x8_s(h0, v128.load(x, 32)), i32x4.dot_i16x8_s(h1, v128.load(x, 48))));
}
// dot4_q4_0r4 for two activation rows (tokens) at once, for prefill: each row's nibbles are split once for
// both tokens, and every token keeps its own accumulators (the same float order as dot4_q4_0r4)
@inline function dot4x2_q4_0r4(w: usize, a: usize, as: usize, ax: usize, axs: usize, nb: i32, y: usize, ys: usize, exact: bool): void {
  let c0 = f64x2.splat(0), c1 = c0, e0 = c0, e1 = c0;
  let cp = ax + (<usize>nb << 2), dp = ax, ap = ax + <usize>nb * 20, aq = a + 2;
  const m = i16x8.splat(0x0f);
  const we = w + <usize>nb * 72;
  while (w < we) {
    let sa: v128, sb: v128;
    if (ASC_FEATURE_RELAXED_SIMD) {
      sa = q4r4_sums(w, 0, aq);
      sb = q4r4_sums(w, 0, aq + as);
    } else {
      let u0 = v128.load8x8_u(w, 8), u1 = v128.load8x8_u(w, 16);
      let l0 = v128.and(u0, m), l1 = v128.and(u1, m), h0 = i16x8.shr_u(u0, 4), h1 = i16x8.shr_u(u1, 4);
      const a0 = q4r_dot(l0, l1, h0, h1, ap), b0 = q4r_dot(l0, l1, h0, h1, ap + axs);
      u0 = v128.load8x8_u(w, 24); u1 = v128.load8x8_u(w, 32);
      l0 = v128.and(u0, m); l1 = v128.and(u1, m); h0 = i16x8.shr_u(u0, 4); h1 = i16x8.shr_u(u1, 4);
      const a01 = hs2_i32(a0, q4r_dot(l0, l1, h0, h1, ap)), b01 = hs2_i32(b0, q4r_dot(l0, l1, h0, h1, ap + axs));
      u0 = v128.load8x8_u(w, 40); u1 = v128.load8x8_u(w, 48);
      l0 = v128.and(u0, m); l1 = v128.and(u1, m); h0 = i16x8.shr_u(u0, 4); h1 = i16x8.shr_u(u1, 4);
      const a2 = q4r_dot(l0, l1, h0, h1, ap), b2 = q4r_dot(l0, l1, h0, h1, ap + axs);
      u0 = v128.load8x8_u(w, 56); u1 = v128.load8x8_u(w, 64);
      l0 = v128.and(u0, m); l1 = v128.and(u1, m); h0 = i16x8.shr_u(u0, 4); h1 = i16x8.shr_u(u1, 4);
      const a23 = hs2_i32(a2, q4r_dot(l0, l1, h0, h1, ap)), b23 = hs2_i32(b2, q4r_dot(l0, l1, h0, h1, ap + axs));
      sa = hs4_i32(a01, a23); sb = hs4_i32(b01, b23);
    }
    // the same integers as dot4_q4_0r4's sums - 8*sum(q)
    sa = i32x4.sub(sa, i32x4.splat(load<i32>(cp)));
    sb = i32x4.sub(sb, i32x4.splat(load<i32>(cp + axs)));
    const hd = h2f4(v128.load16x4_u(w));
    const da = f32x4.mul(hd, f32x4.splat(load<f32>(dp))), db = f32x4.mul(hd, f32x4.splat(load<f32>(dp + axs)));
    if (exact && ASC_FEATURE_RELAXED_SIMD) {
      c0 = fma4(f32x4.convert_i32x4_s(sa), da, c0);
      e0 = fma4(f32x4.convert_i32x4_s(sb), db, e0);
    } else if (exact) {
      const p0 = f64x2.mul(f64x2.convert_low_i32x4_s(sa), lo_f64(da));
      const p1 = f64x2.mul(f64x2.convert_low_i32x4_s(i32x4.shuffle(sa, sa, 2, 3, 0, 1)), hi_f64(da));
      const p2 = f64x2.mul(f64x2.convert_low_i32x4_s(sb), lo_f64(db));
      const p3 = f64x2.mul(f64x2.convert_low_i32x4_s(i32x4.shuffle(sb, sb, 2, 3, 0, 1)), hi_f64(db));
      const s0 = f64x2.add(p0, c0), s1 = f64x2.add(p1, c1), s2 = f64x2.add(p2, e0), s3 = f64x2.add(p3, e1);
      if (tie_any(s0, s1, s2, s3)) {
        c0 = fma2_tie(p0, c0); c1 = fma2_tie(p1, c1); e0 = fma2_tie(p2, e0); e1 = fma2_tie(p3, e1);
      } else {
        c0 = round2(s0); c1 = round2(s1); e0 = round2(s2); e1 = round2(s3);
      }
    } else {
      c0 = f32x4.add(c0, f32x4.mul(f32x4.convert_i32x4_s(sa), da));
      e0 = f32x4.add(e0, f32x4.mul(f32x4.convert_i32x4_s(sb), db));
    }
    w += 72; ap += 64; aq += 34; cp += 16; dp += 4;
  }
  v128.store(y, q4r4_result(c0, c1, exact));
  v128.store(y + ys, q4r4_result(e0, e1, exact));
}
// 4 weight rows x 8 tokens per pass (fast numerics, relaxed SIMD): the block's 4 rows are transposed once
// into 4-byte lanes (lane = row, 4 consecutive values), so one pmaddubsw against a splat of the token's
// matching 4 quants serves all 4 rows: no horizontal sums, and the nibbles are split once for 8 tokens
// (8 tokens beat 4 by ~17% though V8 then keeps some accumulators on the stack: each is touched once per
// block). The integers are those of q4r4_sums and each token's f32 chain is dot4_q4_0r4's fast one: same bits.
@inline function tok4_q4_0r4(c: v128, aq: usize, cp: usize, dp: usize, d4: v128, l0: v128, l1: v128, l2: v128, l3: v128, h0: v128, h1: v128, h2: v128, h3: v128): v128 {
  // i16 pair sums (pmaddubsw): |15 * 127 * 2| per dot, 8 of them < 2^15, so the i16 adds cannot wrap
  let p = i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(aq), l0);
  p = i16x8.add(p, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(aq, 16), h0));
  p = i16x8.add(p, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(aq, 4), l1));
  p = i16x8.add(p, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(aq, 20), h1));
  p = i16x8.add(p, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(aq, 8), l2));
  p = i16x8.add(p, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(aq, 24), h2));
  p = i16x8.add(p, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(aq, 12), l3));
  p = i16x8.add(p, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(aq, 28), h3));
  const s = i32x4.sub(i32x4.extadd_pairwise_i16x8_s(p), v128.load32_splat(cp));
  return f32x4.add(c, f32x4.mul(f32x4.convert_i32x4_s(s), f32x4.mul(d4, v128.load32_splat(dp))));
}
@inline function tile4x8_q4_0r4(w: usize, a: usize, as: usize, ax: usize, axs: usize, nb: i32, y: usize, ys: usize): void {
  let c0 = f32x4.splat(0), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0, c6 = c0, c7 = c0;
  let cp = ax + (<usize>nb << 2), dp = ax, aq = a + 2;
  const m = i8x16.splat(0x0f);
  const we = w + <usize>nb * 72;
  while (w < we) {
    const r0 = v128.load(w, 8), r1 = v128.load(w, 24), r2 = v128.load(w, 40), r3 = v128.load(w, 56);
    const t0 = i32x4.shuffle(r0, r1, 0, 4, 1, 5), t1 = i32x4.shuffle(r2, r3, 0, 4, 1, 5);
    const t2 = i32x4.shuffle(r0, r1, 2, 6, 3, 7), t3 = i32x4.shuffle(r2, r3, 2, 6, 3, 7);
    // lane r of vk: row r's bytes 4k..4k+3 (low nibbles: values 4k.., high nibbles: values 16+4k..)
    const v0 = i32x4.shuffle(t0, t1, 0, 1, 4, 5), v1 = i32x4.shuffle(t0, t1, 2, 3, 6, 7);
    const v2 = i32x4.shuffle(t2, t3, 0, 1, 4, 5), v3 = i32x4.shuffle(t2, t3, 2, 3, 6, 7);
    const l0 = v128.and(v0, m), l1 = v128.and(v1, m), l2 = v128.and(v2, m), l3 = v128.and(v3, m);
    const h0 = v128.and(i16x8.shr_u(v0, 4), m), h1 = v128.and(i16x8.shr_u(v1, 4), m);
    const h2 = v128.and(i16x8.shr_u(v2, 4), m), h3 = v128.and(i16x8.shr_u(v3, 4), m);
    const d4 = h2f4(v128.load16x4_u(w));
    c0 = tok4_q4_0r4(c0, aq, cp, dp, d4, l0, l1, l2, l3, h0, h1, h2, h3);
    c1 = tok4_q4_0r4(c1, aq + as, cp + axs, dp + axs, d4, l0, l1, l2, l3, h0, h1, h2, h3);
    c2 = tok4_q4_0r4(c2, aq + 2 * as, cp + 2 * axs, dp + 2 * axs, d4, l0, l1, l2, l3, h0, h1, h2, h3);
    c3 = tok4_q4_0r4(c3, aq + 3 * as, cp + 3 * axs, dp + 3 * axs, d4, l0, l1, l2, l3, h0, h1, h2, h3);
    c4 = tok4_q4_0r4(c4, aq + 4 * as, cp + 4 * axs, dp + 4 * axs, d4, l0, l1, l2, l3, h0, h1, h2, h3);
    c5 = tok4_q4_0r4(c5, aq + 5 * as, cp + 5 * axs, dp + 5 * axs, d4, l0, l1, l2, l3, h0, h1, h2, h3);
    c6 = tok4_q4_0r4(c6, aq + 6 * as, cp + 6 * axs, dp + 6 * axs, d4, l0, l1, l2, l3, h0, h1, h2, h3);
    c7 = tok4_q4_0r4(c7, aq + 7 * as, cp + 7 * axs, dp + 7 * axs, d4, l0, l1, l2, l3, h0, h1, h2, h3);
    w += 72; aq += 34; cp += 16; dp += 4;
  }
  v128.store(y, c0); v128.store(y + ys, c1); v128.store(y + 2 * ys, c2); v128.store(y + 3 * ys, c3);
  v128.store(y + 4 * ys, c4); v128.store(y + 5 * ys, c5); v128.store(y + 6 * ys, c6); v128.store(y + 7 * ys, c7);
}
// tokens per cache block of the 4x8 tiles: their Q8_0 rows and side tables (64 x ~2.2 KiB per 1024 columns)
// stay in L2 while the thread's weight rows pass over them once per block
const TOK_BLOCK = 64;
// rows [r0, r1) are whole groups of 4 (dispatched with align 4); tokens in pairs, then the odd one alone
@inline function mm_q4_0r4_any(r0: i32, r1: i32, w: usize, ws: usize, a: usize, as: usize, nTok: i32, y: usize, ys: usize, nb: i32, ax: usize, axs: usize, exact: bool): void {
  let t0 = 0;
  if (ASC_FEATURE_RELAXED_SIMD && !exact) {
    const n8 = nTok & ~7;
    for (let tb = 0; tb < n8; tb += TOK_BLOCK) {
      const te = min(tb + TOK_BLOCK, n8);
      for (let r = r0; r < r1; r += 4) {
        const wr = w + <usize>r * ws, yr = y + (<usize>r << 2);
        for (let t = tb; t < te; t += 8) tile4x8_q4_0r4(wr, a + <usize>t * as, as, ax + <usize>t * axs, axs, nb, yr + <usize>t * ys, ys);
      }
    }
    t0 = n8;
  }
  // computed after the tiles: live across them it costs the tile a register (62 vs 90 GFLOP/s)
  const wend = w + <usize>r1 * ws;
  for (let rt = r0; rt < r1; rt += ROW_TILE) {
    const re = min(rt + ROW_TILE, r1);
    let t = t0;
    for (; t + 2 <= nTok; t += 2) {
      const xt = ax + <usize>t * axs, yt = y + <usize>t * ys;
      for (let r = rt; r < re; r += 4) dot4x2_q4_0r4(w + <usize>r * ws, a + <usize>t * as, as, xt, axs, nb, yt + (<usize>r << 2), ys, exact);
    }
    for (; t < nTok; t++) {
      const xt = ax + <usize>t * axs, yt = y + <usize>t * ys;
      for (let r = rt; r < re; r += 4) dot4_q4_0r4(w + <usize>r * ws, a + <usize>t * as, xt, nb, yt + (<usize>r << 2), exact, wend - 68);
    }
  }
}
export function mm_q4_0r4(r0: i32, r1: i32, w: usize, ws: usize, a: usize, as: usize, nTok: i32, y: usize, ys: usize, nb: i32, ax: usize, axs: usize): void {
  mm_q4_0r4_any(r0, r1, w, ws, a, as, nTok, y, ys, nb, ax, axs, true);
}
// free-order ('fast' numerics)
export function mmf_q4_0r4(r0: i32, r1: i32, w: usize, ws: usize, a: usize, as: usize, nTok: i32, y: usize, ys: usize, nb: i32, ax: usize, axs: usize): void {
  mm_q4_0r4_any(r0, r1, w, ws, a, as, nTok, y, ys, nb, ax, axs, false);
}
