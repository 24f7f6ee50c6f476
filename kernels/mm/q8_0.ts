import { h2f, h2f4 } from '../common/f16';
import { fma2_tie, fma4_dd, hsum_float_8, lanes4, round2, tie_any } from '../common/fmaf';
import { g4, hsum4_i32, hsum_f32x4 } from '../common/simd';
import { ROW_TILE } from './tile';
import { Q8R4_TOUCH } from './touch';

// ggml_vec_dot_q8_0_q8_0 on x86 (and tinyBLAS_Q0_AVX, same arithmetic): 8 int32 lanes per block (lane l =
// values 4l..4l+3), each fused-multiply-added by d = d_w*d_a into its own f32 accumulator, hsum_float_8.
// The lane sums (|s| <= 4*127*128) convert to f64 exactly.
@inline export function q8_0_lanes(w: usize, a: usize): v128 {
  return g4(i32x4.dot_i16x8_s(v128.load8x8_s(w, 2), v128.load8x8_s(a, 2)), i32x4.dot_i16x8_s(v128.load8x8_s(w, 10), v128.load8x8_s(a, 10)));
}
@inline export function q8_0_lanes_hi(w: usize, a: usize): v128 {
  return g4(i32x4.dot_i16x8_s(v128.load8x8_s(w, 18), v128.load8x8_s(a, 18)), i32x4.dot_i16x8_s(v128.load8x8_s(w, 26), v128.load8x8_s(a, 26)));
}
@inline function dot_q8_0(w: usize, a: usize, ax: usize, nb: i32): f32 {
  let c0 = f64x2.splat(0), c1 = c0, c2 = c0, c3 = c0;
  let dp = ax;
  const we = w + <usize>nb * 34;
  while (w < we) {
    const dd = f64x2.splat(<f64>(h2f(load<u16>(w)) * load<f32>(dp)));
    const lo = q8_0_lanes(w, a), hi = q8_0_lanes_hi(w, a);
    if (ASC_FEATURE_RELAXED_SIMD) {
      c0 = fma4_dd(f32x4.convert_i32x4_s(lo), dd, c0); c2 = fma4_dd(f32x4.convert_i32x4_s(hi), dd, c2);
      w += 34; a += 34; dp += 4;
      continue;
    }
    const p0 = f64x2.mul(f64x2.convert_low_i32x4_s(lo), dd), p1 = f64x2.mul(f64x2.convert_low_i32x4_s(i32x4.shuffle(lo, lo, 2, 3, 0, 1)), dd);
    const p2 = f64x2.mul(f64x2.convert_low_i32x4_s(hi), dd), p3 = f64x2.mul(f64x2.convert_low_i32x4_s(i32x4.shuffle(hi, hi, 2, 3, 0, 1)), dd);
    const s0 = f64x2.add(p0, c0), s1 = f64x2.add(p1, c1), s2 = f64x2.add(p2, c2), s3 = f64x2.add(p3, c3);
    if (tie_any(s0, s1, s2, s3)) {
      c0 = fma2_tie(p0, c0); c1 = fma2_tie(p1, c1); c2 = fma2_tie(p2, c2); c3 = fma2_tie(p3, c3);
    } else {
      c0 = round2(s0); c1 = round2(s1); c2 = round2(s2); c3 = round2(s3);
    }
    w += 34; a += 34; dp += 4;
  }
  return hsum_float_8(lanes4(c0, c1), lanes4(c2, c3));
}
export function mm_q8_0(r0: i32, r1: i32, w: usize, ws: usize, a: usize, as: usize, nTok: i32, y: usize, ys: usize, nb: i32, ax: usize, axs: usize): void {
  // tiles of ROW_TILE rows stay in L1 while each activation row passes over them
  for (let rt = r0; rt < r1; rt += ROW_TILE) {
    const re = min(rt + ROW_TILE, r1);
    for (let t = 0; t < nTok; t++) {
      const at = a + <usize>t * as, xt = ax + <usize>t * axs, yt = y + <usize>t * ys;
      for (let r = rt; r < re; r++) store<f32>(yt + (<usize>r << 2), dot_q8_0(w + <usize>r * ws, at, xt, nb));
    }
  }
}
// ---- Q8_0 (activations: Q8_0 aux table, i16 quants at ax + 20*nb, f32 d at ax) ----
@inline function q8f_dot(w: usize, ap: usize): v128 {
  return i32x4.add(
    i32x4.add(i32x4.dot_i16x8_s(v128.load8x8_s(w, 2), v128.load(ap)), i32x4.dot_i16x8_s(v128.load8x8_s(w, 10), v128.load(ap, 16))),
    i32x4.add(i32x4.dot_i16x8_s(v128.load8x8_s(w, 18), v128.load(ap, 32)), i32x4.dot_i16x8_s(v128.load8x8_s(w, 26), v128.load(ap, 48))));
}
// one row . one token (plain Q8_0 layout: only weights with rows % 4 != 0 stay in it in fast numerics)
@inline function dot1r_q8_0f(w: usize, ax: usize, nb: i32): f32 {
  let c0 = f32x4.splat(0);
  let dp = ax, ap = ax + <usize>nb * 20;
  const we = w + <usize>nb * 34;
  while (w < we) {
    c0 = f32x4.add(c0, f32x4.mul(f32x4.convert_i32x4_s(q8f_dot(w, ap)), f32x4.splat(h2f(load<u16>(w)) * load<f32>(dp))));
    w += 34; dp += 4; ap += 64;
  }
  return hsum_f32x4(c0);
}
export function mmf_q8_0(r0: i32, r1: i32, w: usize, ws: usize, a: usize, as: usize, nTok: i32, y: usize, ys: usize, nb: i32, ax: usize, axs: usize): void {
  for (let rt = r0; rt < r1; rt += ROW_TILE) {
    const re = min(rt + ROW_TILE, r1);
    for (let t = 0; t < nTok; t++) {
      const xt = ax + <usize>t * axs, yt = y + <usize>t * ys;
      for (let r = rt; r < re; r++) store<f32>(yt + (<usize>r << 2), dot1r_q8_0f(w + <usize>r * ws, xt, nb));
    }
  }
}
// ---- Q8_0 with 4 rows interleaved (Q8_0r4, [4 x f16 d][4 x 32 B quants] per block): one contiguous
// weight stream per 4 rows (4 separate short row streams defeat the hardware prefetcher at ~1 KiB rows) ----
// one Q8_0r4 block (4 rows x 32 int8 at w + 8) . 32 activations widened to i16 at ap: the 4 rows' integer sums
@inline function q8r4_block_sums(w: usize, ap: usize): v128 {
  let p0 = i32x4.splat(0), p1 = p0, p2 = p0, p3 = p0;
  for (let k: usize = 0; k < 32; k += 8) {
    const a0 = v128.load(ap + (k << 1));
    p0 = i32x4.add(p0, i32x4.dot_i16x8_s(v128.load8x8_s(w + 8 + k), a0));
    p1 = i32x4.add(p1, i32x4.dot_i16x8_s(v128.load8x8_s(w + 40 + k), a0));
    p2 = i32x4.add(p2, i32x4.dot_i16x8_s(v128.load8x8_s(w + 72 + k), a0));
    p3 = i32x4.add(p3, i32x4.dot_i16x8_s(v128.load8x8_s(w + 104 + k), a0));
  }
  return hsum4_i32(p0, p1, p2, p3);
}
@inline function dot4_q8_0r4f_exact(w: usize, ax: usize, nb: i32, y: usize): void {
  let c = f32x4.splat(0);
  let dp = ax, ap = ax + <usize>nb * 20;
  const we = w + <usize>nb * 136;
  while (w < we) {
    c = f32x4.add(c, f32x4.mul(f32x4.convert_i32x4_s(q8r4_block_sums(w, ap)), f32x4.mul(h2f4(v128.load16x4_u(w)), f32x4.splat(load<f32>(dp)))));
    w += 136; dp += 4; ap += 64;
  }
  v128.store(y, c);
}
// tl: the last address a touch-ahead load may start at minus 64 (two u32 loads per block, Q8R4_TOUCH
// ahead, spread over the blocks: a burst of a group's touches at its start stalled the window on the misses)
// the 4 f16 scales by shifts (exact for finite halves: ((h << 16) >> 3) with bits
// 30..28 cleared is the f32 with the half's bits, 2^112 rebiases, subnormals included); an inf/NaN scale (top
// of h << 17 at or above 0xf8000000) reruns the group with the exact conversion
@inline function dot4_q8_0r4f(w: usize, ax: usize, nb: i32, y: usize, tl: usize): void {
  let c = f32x4.splat(0);
  let t: u32 = 0;
  let hm = i32x4.splat(0);
  const wg = w;
  let dp = ax, ap = ax + <usize>nb * 20;
  const we = w + <usize>nb * 136;
  while (w < we) {
    const q = min(w + Q8R4_TOUCH, tl);
    if (Q8R4_TOUCH != 0) t |= load<u32>(q) | load<u32>(q, 64);
    const hs = i32x4.shl(v128.load16x4_u(w), 16);
    hm = i32x4.max_u(hm, i32x4.add(hs, hs));
    const dw = f32x4.mul(v128.and(i32x4.shr_s(hs, 3), i32x4.splat(0x8fffffff)), f32x4.splat(reinterpret<f32>(0x77800000)));
    c = f32x4.add(c, f32x4.mul(f32x4.convert_i32x4_s(q8r4_block_sums(w, ap)), f32x4.mul(dw, f32x4.splat(load<f32>(dp)))));
    w += 136; dp += 4; ap += 64;
  }
  store<u32>(y, t);
  v128.store(y, c);
  if (v128.any_true(i32x4.ge_u(hm, i32x4.splat(0xf8000000)))) dot4_q8_0r4f_exact(wg, ax, nb, y);
}
// 4 rows x 2 tokens
@inline function dot4x2_q8_0r4f(w: usize, ax: usize, axs: usize, nb: i32, y: usize, ys: usize): void {
  let c0 = f32x4.splat(0), c1 = c0;
  let dp = ax, ap = ax + <usize>nb * 20;
  const we = w + <usize>nb * 136;
  while (w < we) {
    let p00 = i32x4.splat(0), p10 = p00, p20 = p00, p30 = p00, p01 = p00, p11 = p00, p21 = p00, p31 = p00;
    for (let k: usize = 0; k < 32; k += 8) {
      const a0 = v128.load(ap + (k << 1)), a1 = v128.load(ap + axs + (k << 1));
      const w0 = v128.load8x8_s(w + 8 + k), w1 = v128.load8x8_s(w + 40 + k);
      const w2 = v128.load8x8_s(w + 72 + k), w3 = v128.load8x8_s(w + 104 + k);
      p00 = i32x4.add(p00, i32x4.dot_i16x8_s(w0, a0)); p01 = i32x4.add(p01, i32x4.dot_i16x8_s(w0, a1));
      p10 = i32x4.add(p10, i32x4.dot_i16x8_s(w1, a0)); p11 = i32x4.add(p11, i32x4.dot_i16x8_s(w1, a1));
      p20 = i32x4.add(p20, i32x4.dot_i16x8_s(w2, a0)); p21 = i32x4.add(p21, i32x4.dot_i16x8_s(w2, a1));
      p30 = i32x4.add(p30, i32x4.dot_i16x8_s(w3, a0)); p31 = i32x4.add(p31, i32x4.dot_i16x8_s(w3, a1));
    }
    const dw = h2f4(v128.load16x4_u(w));
    c0 = f32x4.add(c0, f32x4.mul(f32x4.convert_i32x4_s(hsum4_i32(p00, p10, p20, p30)), f32x4.mul(dw, f32x4.splat(load<f32>(dp)))));
    c1 = f32x4.add(c1, f32x4.mul(f32x4.convert_i32x4_s(hsum4_i32(p01, p11, p21, p31)), f32x4.mul(dw, f32x4.splat(load<f32>(dp + axs)))));
    w += 136; dp += 4; ap += 64;
  }
  v128.store(y, c0);
  v128.store(y + ys, c1);
}
// h2f4's bits in 8 ops instead of ~19 (the GEMM converts each block's 4 scales once per 4 tokens): sign,
// exponent and mantissa moved into f32 position by shifts, rebiased by an exact multiply by 2^112 (f16
// subnormals become exact f32 products; they are rare as Q8_0 scales), exponent 31 (inf/nan) forced to 255
@inline function h2f4_q8(hv: v128): v128 {
  const f = f32x4.mul(v128.and(i32x4.shr_s(i32x4.shl(hv, 16), 3), i32x4.splat(0x8fffffff)), f32x4.splat(reinterpret<f32>(0x77800000)));
  return v128.or(f, v128.and(i32x4.eq(v128.and(hv, i32x4.splat(0x7c00)), i32x4.splat(0x7c00)), i32x4.splat(0x7f800000)));
}
// rows [r0, r1) are whole groups of 4 (dispatched with align 4)
// 4 rows x 4 tokens: per 4 values, 2 rows' quants side by side widened to i16 ([r0 x4][r1 x4]: one shuffle and
// two widenings per 16 bytes, shared by the 4 tokens) . a splat of the token's 4 widened quants: i32 lanes
// [r0, r0, r1, r1], pair-summed at the block's end. The same exact integers and f32 chain as dot4x2_q8_0r4f.
// blocks [b0, b1) of the rows; b0 > 0 continues the chains from the partial results at y (f32, so the same chain)
@inline function dot4x4_q8_0r4f(w: usize, ax: usize, axs: usize, nb: i32, b0: i32, b1: i32, y: usize, ys: usize): void {
  let c0 = f32x4.splat(0), c1 = c0, c2 = c0, c3 = c0;
  if (b0 > 0) { c0 = v128.load(y); c1 = v128.load(y + ys); c2 = v128.load(y + 2 * ys); c3 = v128.load(y + 3 * ys); }
  let dp = ax + (<usize>b0 << 2), ap = ax + <usize>nb * 20 + (<usize>b0 << 6);
  const we = w + <usize>b1 * 136;
  w += <usize>b0 * 136;
  while (w < we) {
    let a0 = i32x4.splat(0), a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0, b2 = a0, b3 = a0;
    let r0: v128, r1: v128, r2: v128, r3: v128, s01: v128, s23: v128, wa: v128, wb: v128, at: v128;
    r0 = v128.load(w, 8); r1 = v128.load(w, 40); r2 = v128.load(w, 72); r3 = v128.load(w, 104);
    s01 = i8x16.shuffle(r0, r1, 0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23); s23 = i8x16.shuffle(r2, r3, 0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23);
    wa = i16x8.extend_low_i8x16_s(s01); wb = i16x8.extend_low_i8x16_s(s23);
    at = v128.load64_splat(ap + 0 * axs, 0); a0 = i32x4.add(a0, i32x4.dot_i16x8_s(wa, at)); b0 = i32x4.add(b0, i32x4.dot_i16x8_s(wb, at));
    at = v128.load64_splat(ap + 1 * axs, 0); a1 = i32x4.add(a1, i32x4.dot_i16x8_s(wa, at)); b1 = i32x4.add(b1, i32x4.dot_i16x8_s(wb, at));
    at = v128.load64_splat(ap + 2 * axs, 0); a2 = i32x4.add(a2, i32x4.dot_i16x8_s(wa, at)); b2 = i32x4.add(b2, i32x4.dot_i16x8_s(wb, at));
    at = v128.load64_splat(ap + 3 * axs, 0); a3 = i32x4.add(a3, i32x4.dot_i16x8_s(wa, at)); b3 = i32x4.add(b3, i32x4.dot_i16x8_s(wb, at));
    wa = i16x8.extend_high_i8x16_s(s01); wb = i16x8.extend_high_i8x16_s(s23);
    at = v128.load64_splat(ap + 0 * axs, 8); a0 = i32x4.add(a0, i32x4.dot_i16x8_s(wa, at)); b0 = i32x4.add(b0, i32x4.dot_i16x8_s(wb, at));
    at = v128.load64_splat(ap + 1 * axs, 8); a1 = i32x4.add(a1, i32x4.dot_i16x8_s(wa, at)); b1 = i32x4.add(b1, i32x4.dot_i16x8_s(wb, at));
    at = v128.load64_splat(ap + 2 * axs, 8); a2 = i32x4.add(a2, i32x4.dot_i16x8_s(wa, at)); b2 = i32x4.add(b2, i32x4.dot_i16x8_s(wb, at));
    at = v128.load64_splat(ap + 3 * axs, 8); a3 = i32x4.add(a3, i32x4.dot_i16x8_s(wa, at)); b3 = i32x4.add(b3, i32x4.dot_i16x8_s(wb, at));
    s01 = i8x16.shuffle(r0, r1, 8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31); s23 = i8x16.shuffle(r2, r3, 8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31);
    wa = i16x8.extend_low_i8x16_s(s01); wb = i16x8.extend_low_i8x16_s(s23);
    at = v128.load64_splat(ap + 0 * axs, 16); a0 = i32x4.add(a0, i32x4.dot_i16x8_s(wa, at)); b0 = i32x4.add(b0, i32x4.dot_i16x8_s(wb, at));
    at = v128.load64_splat(ap + 1 * axs, 16); a1 = i32x4.add(a1, i32x4.dot_i16x8_s(wa, at)); b1 = i32x4.add(b1, i32x4.dot_i16x8_s(wb, at));
    at = v128.load64_splat(ap + 2 * axs, 16); a2 = i32x4.add(a2, i32x4.dot_i16x8_s(wa, at)); b2 = i32x4.add(b2, i32x4.dot_i16x8_s(wb, at));
    at = v128.load64_splat(ap + 3 * axs, 16); a3 = i32x4.add(a3, i32x4.dot_i16x8_s(wa, at)); b3 = i32x4.add(b3, i32x4.dot_i16x8_s(wb, at));
    wa = i16x8.extend_high_i8x16_s(s01); wb = i16x8.extend_high_i8x16_s(s23);
    at = v128.load64_splat(ap + 0 * axs, 24); a0 = i32x4.add(a0, i32x4.dot_i16x8_s(wa, at)); b0 = i32x4.add(b0, i32x4.dot_i16x8_s(wb, at));
    at = v128.load64_splat(ap + 1 * axs, 24); a1 = i32x4.add(a1, i32x4.dot_i16x8_s(wa, at)); b1 = i32x4.add(b1, i32x4.dot_i16x8_s(wb, at));
    at = v128.load64_splat(ap + 2 * axs, 24); a2 = i32x4.add(a2, i32x4.dot_i16x8_s(wa, at)); b2 = i32x4.add(b2, i32x4.dot_i16x8_s(wb, at));
    at = v128.load64_splat(ap + 3 * axs, 24); a3 = i32x4.add(a3, i32x4.dot_i16x8_s(wa, at)); b3 = i32x4.add(b3, i32x4.dot_i16x8_s(wb, at));
    r0 = v128.load(w, 24); r1 = v128.load(w, 56); r2 = v128.load(w, 88); r3 = v128.load(w, 120);
    s01 = i8x16.shuffle(r0, r1, 0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23); s23 = i8x16.shuffle(r2, r3, 0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23);
    wa = i16x8.extend_low_i8x16_s(s01); wb = i16x8.extend_low_i8x16_s(s23);
    at = v128.load64_splat(ap + 0 * axs, 32); a0 = i32x4.add(a0, i32x4.dot_i16x8_s(wa, at)); b0 = i32x4.add(b0, i32x4.dot_i16x8_s(wb, at));
    at = v128.load64_splat(ap + 1 * axs, 32); a1 = i32x4.add(a1, i32x4.dot_i16x8_s(wa, at)); b1 = i32x4.add(b1, i32x4.dot_i16x8_s(wb, at));
    at = v128.load64_splat(ap + 2 * axs, 32); a2 = i32x4.add(a2, i32x4.dot_i16x8_s(wa, at)); b2 = i32x4.add(b2, i32x4.dot_i16x8_s(wb, at));
    at = v128.load64_splat(ap + 3 * axs, 32); a3 = i32x4.add(a3, i32x4.dot_i16x8_s(wa, at)); b3 = i32x4.add(b3, i32x4.dot_i16x8_s(wb, at));
    wa = i16x8.extend_high_i8x16_s(s01); wb = i16x8.extend_high_i8x16_s(s23);
    at = v128.load64_splat(ap + 0 * axs, 40); a0 = i32x4.add(a0, i32x4.dot_i16x8_s(wa, at)); b0 = i32x4.add(b0, i32x4.dot_i16x8_s(wb, at));
    at = v128.load64_splat(ap + 1 * axs, 40); a1 = i32x4.add(a1, i32x4.dot_i16x8_s(wa, at)); b1 = i32x4.add(b1, i32x4.dot_i16x8_s(wb, at));
    at = v128.load64_splat(ap + 2 * axs, 40); a2 = i32x4.add(a2, i32x4.dot_i16x8_s(wa, at)); b2 = i32x4.add(b2, i32x4.dot_i16x8_s(wb, at));
    at = v128.load64_splat(ap + 3 * axs, 40); a3 = i32x4.add(a3, i32x4.dot_i16x8_s(wa, at)); b3 = i32x4.add(b3, i32x4.dot_i16x8_s(wb, at));
    s01 = i8x16.shuffle(r0, r1, 8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31); s23 = i8x16.shuffle(r2, r3, 8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31);
    wa = i16x8.extend_low_i8x16_s(s01); wb = i16x8.extend_low_i8x16_s(s23);
    at = v128.load64_splat(ap + 0 * axs, 48); a0 = i32x4.add(a0, i32x4.dot_i16x8_s(wa, at)); b0 = i32x4.add(b0, i32x4.dot_i16x8_s(wb, at));
    at = v128.load64_splat(ap + 1 * axs, 48); a1 = i32x4.add(a1, i32x4.dot_i16x8_s(wa, at)); b1 = i32x4.add(b1, i32x4.dot_i16x8_s(wb, at));
    at = v128.load64_splat(ap + 2 * axs, 48); a2 = i32x4.add(a2, i32x4.dot_i16x8_s(wa, at)); b2 = i32x4.add(b2, i32x4.dot_i16x8_s(wb, at));
    at = v128.load64_splat(ap + 3 * axs, 48); a3 = i32x4.add(a3, i32x4.dot_i16x8_s(wa, at)); b3 = i32x4.add(b3, i32x4.dot_i16x8_s(wb, at));
    wa = i16x8.extend_high_i8x16_s(s01); wb = i16x8.extend_high_i8x16_s(s23);
    at = v128.load64_splat(ap + 0 * axs, 56); a0 = i32x4.add(a0, i32x4.dot_i16x8_s(wa, at)); b0 = i32x4.add(b0, i32x4.dot_i16x8_s(wb, at));
    at = v128.load64_splat(ap + 1 * axs, 56); a1 = i32x4.add(a1, i32x4.dot_i16x8_s(wa, at)); b1 = i32x4.add(b1, i32x4.dot_i16x8_s(wb, at));
    at = v128.load64_splat(ap + 2 * axs, 56); a2 = i32x4.add(a2, i32x4.dot_i16x8_s(wa, at)); b2 = i32x4.add(b2, i32x4.dot_i16x8_s(wb, at));
    at = v128.load64_splat(ap + 3 * axs, 56); a3 = i32x4.add(a3, i32x4.dot_i16x8_s(wa, at)); b3 = i32x4.add(b3, i32x4.dot_i16x8_s(wb, at));
    const dw = h2f4_q8(v128.load16x4_u(w));
    c0 = f32x4.add(c0, f32x4.mul(f32x4.convert_i32x4_s(i32x4.add(i32x4.shuffle(a0, b0, 0, 2, 4, 6), i32x4.shuffle(a0, b0, 1, 3, 5, 7))), f32x4.mul(dw, v128.load32_splat(dp + 0 * axs))));
    c1 = f32x4.add(c1, f32x4.mul(f32x4.convert_i32x4_s(i32x4.add(i32x4.shuffle(a1, b1, 0, 2, 4, 6), i32x4.shuffle(a1, b1, 1, 3, 5, 7))), f32x4.mul(dw, v128.load32_splat(dp + 1 * axs))));
    c2 = f32x4.add(c2, f32x4.mul(f32x4.convert_i32x4_s(i32x4.add(i32x4.shuffle(a2, b2, 0, 2, 4, 6), i32x4.shuffle(a2, b2, 1, 3, 5, 7))), f32x4.mul(dw, v128.load32_splat(dp + 2 * axs))));
    c3 = f32x4.add(c3, f32x4.mul(f32x4.convert_i32x4_s(i32x4.add(i32x4.shuffle(a3, b3, 0, 2, 4, 6), i32x4.shuffle(a3, b3, 1, 3, 5, 7))), f32x4.mul(dw, v128.load32_splat(dp + 3 * axs))));
    w += 136; dp += 4; ap += 64;
  }
  v128.store(y, c0); v128.store(y + ys, c1); v128.store(y + 2 * ys, c2); v128.store(y + 3 * ys, c3);
}
// tokens per cache block in the GEMM: their side tables (64 x 2.6 KiB per 1024 columns) stay in L2 while the
// thread's weight rows pass over them once per block
const TOK_BLOCK = 64;
const K_BLOCK = 32;
export function mmf_q8_0r4(r0: i32, r1: i32, w: usize, ws: usize, a: usize, as: usize, nTok: i32, y: usize, ys: usize, nb: i32, ax: usize, axs: usize): void {
  const n4 = nTok & ~3;
  for (let tb = 0; tb < n4; tb += TOK_BLOCK) {
    const te = min(tb + TOK_BLOCK, n4);
    // columns in chunks of K_BLOCK blocks: 4 tokens' side tables (2.6 KiB per 32 blocks each) and 4 rows
    // stay within L1 (a 4x4 tile over 3072 columns at once ran at 0.85x the 4x2 kernel)
    for (let k0 = 0; k0 < nb; k0 += K_BLOCK) {
      const k1 = min(k0 + K_BLOCK, nb);
      for (let r = r0; r < r1; r += 4) {
        const wr = w + <usize>r * ws, yr = y + (<usize>r << 2);
        for (let t = tb; t < te; t += 4) dot4x4_q8_0r4f(wr, ax + <usize>t * axs, axs, nb, k0, k1, yr + <usize>t * ys, ys);
      }
    }
  }
  // after the tiles, so it is not live across them
  const wend = w + <usize>r1 * ws;
  for (let rt = r0; rt < r1; rt += ROW_TILE) {
    const re = min(rt + ROW_TILE, r1);
    let t = n4;
    for (; t + 2 <= nTok; t += 2) {
      const xt = ax + <usize>t * axs, yt = y + <usize>t * ys;
      for (let r = rt; r < re; r += 4) dot4x2_q8_0r4f(w + <usize>r * ws, xt, axs, nb, yt + (<usize>r << 2), ys);
    }
    for (; t < nTok; t++) {
      const xt = ax + <usize>t * axs, yt = y + <usize>t * ys;
      for (let r = rt; r < re; r += 4) {
        dot4_q8_0r4f(w + <usize>r * ws, xt, nb, yt + (<usize>r << 2), wend - 68);
      }
    }
  }
}
