import { h2f } from '../common/f16';
import { f32x4_of, fma2, fma2_tie, hi_f64, hsum_float_8, lo_f64, round2, tie_any } from '../common/fmaf';
import { g4 } from '../common/simd';
import { g8_tokens, ROW_TILE } from './tile';
import { Q6K_TOUCH, touch_ahead } from './touch';

// 16 values (u8, < 64) . their activations -> sums of 4 consecutive values (i32x4): widened activations at a
// (SIMD128) or one relaxed dot product with the int8 activations at aq (the values are the 7-bit operand)
@inline function dot16_g4x(u: v128, a: usize, aq: usize): v128 {
  if (ASC_FEATURE_RELAXED_SIMD) return i32x4.relaxed_dot_i8x16_i7x16_add_s(v128.load(aq), u, i32x4.splat(0));
  return dot16_g4(u, a);
}
// 16 unsigned bytes . 16 widened activations at a -> sums of 4 consecutive values (i32x4)
@inline function dot16_g4(u: v128, a: usize): v128 {
  return g4(i32x4.dot_i16x8_s(i16x8.extend_low_i8x16_u(u), v128.load(a)), i32x4.dot_i16x8_s(i16x8.extend_high_i8x16_u(u), v128.load(a, 16)));
}
// relaxed SIMD: 4 x 16 values (x1..x4, < 64: the 7-bit operand) . their int8 activations at aq, +32, +64, +96,
// each times its 16-value scale (i16 lanes 0..3 of u) -> sums of 4 consecutive values (i32x4), as dot16_g4x
// times the scale: pair products on i16 lanes (pmaddubsw, |.| <= 2*63*128), then pmaddwd by the scale splat
@inline function q6_k1(u: v128): v128 { return i8x16.shuffle(u, u, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1); }
@inline function q6_k2(u: v128): v128 { return i8x16.shuffle(u, u, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3); }
@inline function q6_k3(u: v128): v128 { return i8x16.shuffle(u, u, 4, 5, 4, 5, 4, 5, 4, 5, 4, 5, 4, 5, 4, 5, 4, 5); }
@inline function q6_k4(u: v128): v128 { return i8x16.shuffle(u, u, 6, 7, 6, 7, 6, 7, 6, 7, 6, 7, 6, 7, 6, 7, 6, 7); }
@inline function q6_p16(x1: v128, x2: v128, x3: v128, x4: v128, aq: usize, k1: v128, k2: v128, k3: v128, k4: v128): v128 {
  return i32x4.add(
    i32x4.add(i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq), x1), k1), i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq, 32), x2), k2)),
    i32x4.add(i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq, 64), x3), k3), i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq, 96), x4), k4)));
}
// ggml_vec_dot_q6_K_q8_K (AVX2; Q6_K is not repacked): 8 int32 lanes per super-block (lane l = values
// 4l..4l+3 of every 32, times their 16-value scale, minus 32*(sc[2l]*bsum[2l] + sc[2l+1]*bsum[2l+1])),
// each converted to f32 and fused-multiply-added by d into its own accumulator, hsum_float_8
@inline function dot_q6_K(w: usize, a: usize, ax: usize, nb: i32): f32 {
  let c0 = f64x2.splat(0), c1 = c0, c2 = c0, c3 = c0;
  // relaxed SIMD: the 8 lanes in two f32x4, fmaf = relaxed_madd (checked fused at start-up)
  let r0 = f32x4.splat(0), r1 = r0;
  const m4 = i8x16.splat(0x0f), m30 = i8x16.splat(0x30);
  const end = w + <usize>nb * 210;
  while (w < end) {
    const df = load<f32>(a) * h2f(load<u16>(w, 208));
    const dd = f64x2.splat(<f64>df);
    const scv = v128.load(w, 192);
    const s16l = i16x8.extend_low_i8x16_s(scv), s16h = i16x8.extend_high_i8x16_s(scv);
    let l0 = i32x4.mul(i32x4.dot_i16x8_s(s16l, v128.load(a, 260)), i32x4.splat(-32));
    let l1 = i32x4.mul(i32x4.dot_i16x8_s(s16h, v128.load(a, 276)), i32x4.splat(-32));
    // step k = (half n, l/16) uses scales 8n + l/16 + {0, 2, 4, 6}; even steps feed lanes 0..3, odd 4..7
    const ev = i8x16.shuffle(s16l, s16h, 0, 1, 4, 5, 8, 9, 12, 13, 16, 17, 20, 21, 24, 25, 28, 29);
    const od = i8x16.shuffle(s16l, s16h, 2, 3, 6, 7, 10, 11, 14, 15, 18, 19, 22, 23, 26, 27, 30, 31);
    let v0 = i32x4.extend_low_i16x8_s(ev), v1 = i32x4.extend_low_i16x8_s(od);
    let v2 = i32x4.extend_high_i16x8_s(ev), v3 = i32x4.extend_high_i16x8_s(od);
    let ql = w, qh = w + 128, q8 = ax, aq = a + 4;
    // relaxed SIMD: the 16-value scales as i16 splats for pmaddwd (q6_p16); u0..u3 rotate as v0..v3
    let u0 = ev, u1 = od, u2 = i8x16.shuffle(ev, ev, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7), u3 = i8x16.shuffle(od, od, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7);
    for (let k = 0; k < 4; k++) {
      const qa = v128.load(ql), qb = v128.load(ql, 32), h = v128.load(qh);
      const x1 = v128.or(v128.and(qa, m4), v128.and(i16x8.shl(h, 4), m30));
      const x2 = v128.or(v128.and(qb, m4), v128.and(i16x8.shl(h, 2), m30));
      const x3 = v128.or(v128.and(i16x8.shr_u(qa, 4), m4), v128.and(h, m30));
      const x4 = v128.or(v128.and(i16x8.shr_u(qb, 4), m4), v128.and(i16x8.shr_u(h, 2), m30));
      if (ASC_FEATURE_RELAXED_SIMD) {
        const p = q6_p16(x1, x2, x3, x4, aq, q6_k1(u0), q6_k2(u0), q6_k3(u0), q6_k4(u0));
        if (k & 1) l1 = i32x4.add(l1, p); else l0 = i32x4.add(l0, p);
        const tu = u0; u0 = u1; u1 = u2; u2 = u3; u3 = tu;
        const step: usize = (k & 1) ? 48 : 16;
        ql += step; qh += 16; aq += (k & 1) ? 112 : 16;
        continue;
      }
      const p = i32x4.add(
        i32x4.add(i32x4.mul(dot16_g4x(x1, q8, aq), i32x4.shuffle(v0, v0, 0, 0, 0, 0)), i32x4.mul(dot16_g4x(x2, q8 + 64, aq + 32), i32x4.shuffle(v0, v0, 1, 1, 1, 1))),
        i32x4.add(i32x4.mul(dot16_g4x(x3, q8 + 128, aq + 64), i32x4.shuffle(v0, v0, 2, 2, 2, 2)), i32x4.mul(dot16_g4x(x4, q8 + 192, aq + 96), i32x4.shuffle(v0, v0, 3, 3, 3, 3))));
      if (k & 1) l1 = i32x4.add(l1, p); else l0 = i32x4.add(l0, p);
      const t = v0; v0 = v1; v1 = v2; v2 = v3; v3 = t;
      // k: 0 -> (ql 0, qh 0, q8 0), 1 -> (16, 16, 16), 2 -> (64, 32, 128), 3 -> (80, 48, 144)
      const step: usize = (k & 1) ? 48 : 16;
      ql += step; qh += 16; q8 += (k & 1) ? 224 : 32; aq += (k & 1) ? 112 : 16;
    }
    const f0 = f32x4.convert_i32x4_s(l0), f1 = f32x4.convert_i32x4_s(l1);
    if (ASC_FEATURE_RELAXED_SIMD) {
      const ddf = f32x4.splat(df);
      r0 = f32x4.relaxed_madd(f0, ddf, r0);
      r1 = f32x4.relaxed_madd(f1, ddf, r1);
    } else {
      c0 = fma2(f64x2.mul(lo_f64(f0), dd), c0);
      c1 = fma2(f64x2.mul(hi_f64(f0), dd), c1);
      c2 = fma2(f64x2.mul(lo_f64(f1), dd), c2);
      c3 = fma2(f64x2.mul(hi_f64(f1), dd), c3);
    }
    w += 210; a += 292; ax += 512;
  }
  if (ASC_FEATURE_RELAXED_SIMD) return hsum_float_8(r0, r1);
  return hsum_float_8(f32x4_of(c0, c1), f32x4_of(c2, c3));
}
// relaxed SIMD, one token: dot_q6_K's integers and f32 chain, the 4 steps unrolled with immediate offsets
// (the loop's rotations, branches and address arithmetic were a third of its instructions, and V8 spilled its
// accumulators). d0..d3: the 16 scales as i16, each twice ([s0 s0 s1 s1 ..]), so a 16-value group's scale
// splat is one pshufd. ggml's mins term goes once per block (-32 * x as -(x << 5), no i32 multiply). The
// store of a lane into the result slot (overwritten by the result) after each step pins the step's loads
// after the previous step's arithmetic: V8 would otherwise hoist all loads of the block and spill them.
// tl: the last address a touch-ahead load may start at minus 192 (four u32 loads per block, Q6K_TOUCH
// ahead, spread over the blocks: a burst of a row's touches at its start stalled the window on the misses;
// OR-ed into the result slot's pinning stores). clamp false (a row whose touches all stay below the range's
// end, i.e. all but a range's last few rows): no per-block min (6 fewer instructions per block in V8's code).
@inline function dot_q6_K_rx(w: usize, a: usize, nb: i32, y: usize, tl: usize, clamp: bool): f32 {
  let r0 = f32x4.splat(0), r1 = r0;
  const m4 = i8x16.splat(0x0f), m30 = i8x16.splat(0x30);
  const end = w + <usize>nb * 210;
  while (w < end) {
    // clamp false: the caller checked that the row's touches stay below tl
    const q = clamp ? min(w + Q6K_TOUCH, tl) : w + Q6K_TOUCH;
    // Q6K_TOUCH 0: no touch-ahead loads at all
    const t: u32 = Q6K_TOUCH == 0 ? 0 : load<u32>(q) | load<u32>(q, 64) | load<u32>(q, 128) | load<u32>(q, 192);
    const scv = v128.load(w, 192);
    const s16l = i16x8.extend_low_i8x16_s(scv), s16h = i16x8.extend_high_i8x16_s(scv);
    // ggml's mins term first (the i32 lane sums are exact, so the order of their adds does not matter): the
    // scales are then dead before the steps, which V8 otherwise kept spilled across the block
    const n0 = i32x4.dot_i16x8_s(i16x8.shl(s16l, 5), v128.load(a, 260));
    const n1 = i32x4.dot_i16x8_s(i16x8.shl(s16h, 5), v128.load(a, 276));
    const d0 = i8x16.shuffle(s16l, s16l, 0, 1, 0, 1, 2, 3, 2, 3, 4, 5, 4, 5, 6, 7, 6, 7);
    const d1 = i8x16.shuffle(s16l, s16l, 8, 9, 8, 9, 10, 11, 10, 11, 12, 13, 12, 13, 14, 15, 14, 15);
    const d2 = i8x16.shuffle(s16h, s16h, 0, 1, 0, 1, 2, 3, 2, 3, 4, 5, 4, 5, 6, 7, 6, 7);
    const d3 = i8x16.shuffle(s16h, s16h, 8, 9, 8, 9, 10, 11, 10, 11, 12, 13, 12, 13, 14, 15, 14, 15);
    let l0: v128, l1: v128;
    {
      const qa = v128.load(w, 0), qb = v128.load(w, 32), h = v128.load(w, 128);
      const x1 = v128.or(v128.and(qa, m4), v128.and(i16x8.shl(h, 4), m30)), x2 = v128.or(v128.and(qb, m4), v128.and(i16x8.shl(h, 2), m30));
      const x3 = v128.or(v128.and(i16x8.shr_u(qa, 4), m4), v128.and(h, m30)), x4 = v128.or(v128.and(i16x8.shr_u(qb, 4), m4), v128.and(i16x8.shr_u(h, 2), m30));
      l0 = i32x4.sub(i32x4.add(i32x4.add(i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(a, 4), x1), i32x4.shuffle(d0, d0, 0, 0, 0, 0)), i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(a, 36), x2), i32x4.shuffle(d0, d0, 2, 2, 2, 2))),
        i32x4.add(i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(a, 68), x3), i32x4.shuffle(d1, d1, 0, 0, 0, 0)), i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(a, 100), x4), i32x4.shuffle(d1, d1, 2, 2, 2, 2)))), n0);
      store<i32>(y, i32x4.extract_lane(l0, 0) | t);
    }
    {
      const qa = v128.load(w, 16), qb = v128.load(w, 48), h = v128.load(w, 144);
      const x1 = v128.or(v128.and(qa, m4), v128.and(i16x8.shl(h, 4), m30)), x2 = v128.or(v128.and(qb, m4), v128.and(i16x8.shl(h, 2), m30));
      const x3 = v128.or(v128.and(i16x8.shr_u(qa, 4), m4), v128.and(h, m30)), x4 = v128.or(v128.and(i16x8.shr_u(qb, 4), m4), v128.and(i16x8.shr_u(h, 2), m30));
      l1 = i32x4.sub(i32x4.add(i32x4.add(i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(a, 20), x1), i32x4.shuffle(d0, d0, 1, 1, 1, 1)), i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(a, 52), x2), i32x4.shuffle(d0, d0, 3, 3, 3, 3))),
        i32x4.add(i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(a, 84), x3), i32x4.shuffle(d1, d1, 1, 1, 1, 1)), i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(a, 116), x4), i32x4.shuffle(d1, d1, 3, 3, 3, 3)))), n1);
      store<i32>(y, i32x4.extract_lane(l1, 0));
    }
    {
      const qa = v128.load(w, 64), qb = v128.load(w, 96), h = v128.load(w, 160);
      const x1 = v128.or(v128.and(qa, m4), v128.and(i16x8.shl(h, 4), m30)), x2 = v128.or(v128.and(qb, m4), v128.and(i16x8.shl(h, 2), m30));
      const x3 = v128.or(v128.and(i16x8.shr_u(qa, 4), m4), v128.and(h, m30)), x4 = v128.or(v128.and(i16x8.shr_u(qb, 4), m4), v128.and(i16x8.shr_u(h, 2), m30));
      l0 = i32x4.add(l0, i32x4.add(i32x4.add(i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(a, 132), x1), i32x4.shuffle(d2, d2, 0, 0, 0, 0)), i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(a, 164), x2), i32x4.shuffle(d2, d2, 2, 2, 2, 2))),
        i32x4.add(i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(a, 196), x3), i32x4.shuffle(d3, d3, 0, 0, 0, 0)), i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(a, 228), x4), i32x4.shuffle(d3, d3, 2, 2, 2, 2)))));
      store<i32>(y, i32x4.extract_lane(l0, 0));
    }
    {
      const qa = v128.load(w, 80), qb = v128.load(w, 112), h = v128.load(w, 176);
      const x1 = v128.or(v128.and(qa, m4), v128.and(i16x8.shl(h, 4), m30)), x2 = v128.or(v128.and(qb, m4), v128.and(i16x8.shl(h, 2), m30));
      const x3 = v128.or(v128.and(i16x8.shr_u(qa, 4), m4), v128.and(h, m30)), x4 = v128.or(v128.and(i16x8.shr_u(qb, 4), m4), v128.and(i16x8.shr_u(h, 2), m30));
      l1 = i32x4.add(l1, i32x4.add(i32x4.add(i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(a, 148), x1), i32x4.shuffle(d2, d2, 1, 1, 1, 1)), i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(a, 180), x2), i32x4.shuffle(d2, d2, 3, 3, 3, 3))),
        i32x4.add(i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(a, 212), x3), i32x4.shuffle(d3, d3, 1, 1, 1, 1)), i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(a, 244), x4), i32x4.shuffle(d3, d3, 3, 3, 3, 3)))));
      store<i32>(y, i32x4.extract_lane(l1, 0));
    }
    const ddf = f32x4.splat(load<f32>(a) * h2f(load<u16>(w, 208)));
    r0 = f32x4.relaxed_madd(f32x4.convert_i32x4_s(l0), ddf, r0);
    r1 = f32x4.relaxed_madd(f32x4.convert_i32x4_s(l1), ddf, r1);
    w += 210; a += 292;
  }
  return hsum_float_8(r0, r1);
}
// ggml_vec_dot_q6_K_q8_K's order for two activation rows (tokens) at once, for prefill: the 6-bit values
// are decoded once for both tokens with their 16-value scale folded in (q * sc on i16 lanes, |.| <= 63*128),
// so each token's lane sums are plain i16 dot products giving the same exact integers as dot_q6_K's
// (|lane| <= 32 * 8064 * 128 < 2^31); ggml's mins term stays per sub-block pair as there. Each token keeps
// its own 8 fmaf lanes and hsum_float_8. a/ax: token 0's Q8_K row and widened quants, token 1's as/axs on.
// 16 scaled weights (i16, two vectors) . 16 widened activations at o -> sums of 4 consecutive values
@inline function q6w_g4(wl: v128, wh: v128, o: usize): v128 {
  return g4(i32x4.dot_i16x8_s(wl, v128.load(o)), i32x4.dot_i16x8_s(wh, v128.load(o, 16)));
}
@inline function dot2t_q6_K(w: usize, a: usize, as: usize, ax: usize, axs: usize, nb: i32, y: usize, ys: usize): void {
  let c0 = f64x2.splat(0), c1 = c0, c2 = c0, c3 = c0;
  let e0 = c0, e1 = c0, e2 = c0, e3 = c0;
  // relaxed SIMD: each token's 8 lanes in two f32x4, fmaf = relaxed_madd (checked fused at start-up)
  let r0 = f32x4.splat(0), r1 = r0, r2 = r0, r3 = r0;
  const m4 = i8x16.splat(0x0f), m30 = i8x16.splat(0x30);
  const end = w + <usize>nb * 210;
  while (w < end) {
    const dw = h2f(load<u16>(w, 208));
    const df0 = load<f32>(a) * dw, df1 = load<f32>(a + as) * dw;
    const dd0 = f64x2.splat(<f64>df0), dd1 = f64x2.splat(<f64>df1);
    const scv = v128.load(w, 192);
    // step k uses scales 8*(k>>1) + (k&1) + {0, 2, 4, 6}: lanes 0, 2, 4, 6 of ss0, rotated per step
    const s16l = i16x8.extend_low_i8x16_s(scv), s16h = i16x8.extend_high_i8x16_s(scv);
    let ss0 = s16l, ss1 = i8x16.shuffle(s16l, s16l, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1);
    let ss2 = s16h, ss3 = i8x16.shuffle(s16h, s16h, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1);
    // ggml's mins term per lane: -32 * (sc[2l]*bsum[2l] + sc[2l+1]*bsum[2l+1]) (sub-block pairs, not the lanes' values)
    let l0 = i32x4.mul(i32x4.dot_i16x8_s(s16l, v128.load(a, 260)), i32x4.splat(-32));
    let l1 = i32x4.mul(i32x4.dot_i16x8_s(s16h, v128.load(a, 276)), i32x4.splat(-32));
    let k0 = i32x4.mul(i32x4.dot_i16x8_s(s16l, v128.load(a + as, 260)), i32x4.splat(-32));
    let k1 = i32x4.mul(i32x4.dot_i16x8_s(s16h, v128.load(a + as, 276)), i32x4.splat(-32));
    let ql = w, qh = w + 128, q8 = ax;
    for (let k = 0; k < 4; k++) {
      const ss = ss0;
      ss0 = ss1; ss1 = ss2; ss2 = ss3;
      const qa = v128.load(ql), qb = v128.load(ql, 32), h = v128.load(qh);
      // x1..x4 (16 values each, at activation offsets 0, 64, 128, 192 bytes of i16) times their scale
      const x1 = (v128.or(v128.and(qa, m4), v128.and(i16x8.shl(h, 4), m30)));
      const x2 = (v128.or(v128.and(qb, m4), v128.and(i16x8.shl(h, 2), m30)));
      const x3 = (v128.or(v128.and(i16x8.shr_u(qa, 4), m4), v128.and(h, m30)));
      const x4 = (v128.or(v128.and(i16x8.shr_u(qb, 4), m4), v128.and(i16x8.shr_u(h, 2), m30)));
      const sc1 = i8x16.shuffle(ss, ss, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1);
      const sc2 = i8x16.shuffle(ss, ss, 4, 5, 4, 5, 4, 5, 4, 5, 4, 5, 4, 5, 4, 5, 4, 5);
      const sc3 = i8x16.shuffle(ss, ss, 8, 9, 8, 9, 8, 9, 8, 9, 8, 9, 8, 9, 8, 9, 8, 9);
      const sc4 = i8x16.shuffle(ss, ss, 12, 13, 12, 13, 12, 13, 12, 13, 12, 13, 12, 13, 12, 13, 12, 13);
      const w1l = i16x8.mul(i16x8.extend_low_i8x16_s(x1), sc1), w1h = i16x8.mul(i16x8.extend_high_i8x16_s(x1), sc1);
      const w2l = i16x8.mul(i16x8.extend_low_i8x16_s(x2), sc2), w2h = i16x8.mul(i16x8.extend_high_i8x16_s(x2), sc2);
      const w3l = i16x8.mul(i16x8.extend_low_i8x16_s(x3), sc3), w3h = i16x8.mul(i16x8.extend_high_i8x16_s(x3), sc3);
      const w4l = i16x8.mul(i16x8.extend_low_i8x16_s(x4), sc4), w4h = i16x8.mul(i16x8.extend_high_i8x16_s(x4), sc4);
      const p = i32x4.add(i32x4.add(q6w_g4(w1l, w1h, q8), q6w_g4(w2l, w2h, q8 + 64)), i32x4.add(q6w_g4(w3l, w3h, q8 + 128), q6w_g4(w4l, w4h, q8 + 192)));
      const q8b = q8 + axs;
      const r = i32x4.add(i32x4.add(q6w_g4(w1l, w1h, q8b), q6w_g4(w2l, w2h, q8b + 64)), i32x4.add(q6w_g4(w3l, w3h, q8b + 128), q6w_g4(w4l, w4h, q8b + 192)));
      if (k & 1) { l1 = i32x4.add(l1, p); k1 = i32x4.add(k1, r); } else { l0 = i32x4.add(l0, p); k0 = i32x4.add(k0, r); }
      // k: 0 -> (ql 0, qh 0, q8 0), 1 -> (16, 16, 16), 2 -> (64, 32, 128), 3 -> (80, 48, 144)
      const step: usize = (k & 1) ? 48 : 16;
      ql += step; qh += 16; q8 += (k & 1) ? 224 : 32;
    }
    const f0 = f32x4.convert_i32x4_s(l0), f1 = f32x4.convert_i32x4_s(l1);
    const g0 = f32x4.convert_i32x4_s(k0), g1 = f32x4.convert_i32x4_s(k1);
    if (ASC_FEATURE_RELAXED_SIMD) {
      const d0 = f32x4.splat(df0), d1 = f32x4.splat(df1);
      r0 = f32x4.relaxed_madd(f0, d0, r0); r1 = f32x4.relaxed_madd(f1, d0, r1);
      r2 = f32x4.relaxed_madd(g0, d1, r2); r3 = f32x4.relaxed_madd(g1, d1, r3);
      w += 210; a += 292; ax += 512;
      continue;
    }
    const p0 = f64x2.mul(lo_f64(f0), dd0), p1 = f64x2.mul(hi_f64(f0), dd0), p2 = f64x2.mul(lo_f64(f1), dd0), p3 = f64x2.mul(hi_f64(f1), dd0);
    const s0 = f64x2.add(p0, c0), s1 = f64x2.add(p1, c1), s2 = f64x2.add(p2, c2), s3 = f64x2.add(p3, c3);
    if (tie_any(s0, s1, s2, s3)) {
      c0 = fma2_tie(p0, c0); c1 = fma2_tie(p1, c1); c2 = fma2_tie(p2, c2); c3 = fma2_tie(p3, c3);
    } else {
      c0 = round2(s0); c1 = round2(s1); c2 = round2(s2); c3 = round2(s3);
    }
    const q0 = f64x2.mul(lo_f64(g0), dd1), q1 = f64x2.mul(hi_f64(g0), dd1), q2 = f64x2.mul(lo_f64(g1), dd1), q3 = f64x2.mul(hi_f64(g1), dd1);
    const t0 = f64x2.add(q0, e0), t1 = f64x2.add(q1, e1), t2 = f64x2.add(q2, e2), t3 = f64x2.add(q3, e3);
    if (tie_any(t0, t1, t2, t3)) {
      e0 = fma2_tie(q0, e0); e1 = fma2_tie(q1, e1); e2 = fma2_tie(q2, e2); e3 = fma2_tie(q3, e3);
    } else {
      e0 = round2(t0); e1 = round2(t1); e2 = round2(t2); e3 = round2(t3);
    }
    w += 210; a += 292; ax += 512;
  }
  if (ASC_FEATURE_RELAXED_SIMD) {
    store<f32>(y, hsum_float_8(r0, r1));
    store<f32>(y + ys, hsum_float_8(r2, r3));
    return;
  }
  store<f32>(y, hsum_float_8(f32x4_of(c0, c1), f32x4_of(c2, c3)));
  store<f32>(y + ys, hsum_float_8(f32x4_of(e0, e1), f32x4_of(e2, e3)));
}
// one 16-value group (x: the 6-bit values, the 7-bit operand) of one token: its i8 x i7 pair products summed
// on i16 lanes (|.| <= 2*63*128 = 16128: q <= 63 and |a| <= 128, Q8_K's -128 included), times the group's
// scale (k: an i16 splat) and pair-summed on i32 lanes (pmaddwd)
@inline function q6_g(x: v128, k: v128, aq: usize): v128 {
  return i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq), x), k);
}
// dot_q6_K_rx's integers and f32 chain for 4 activation rows (tokens) at once: the 6-bit values decoded once
// for the 4, every token's 8 lanes the same exact integers (i32 sums in another order: exact, wrapping or not)
// and the same f32 operations per lane. The even steps (ggml's lanes 0..3) of all 4 tokens run first, then the
// odd steps (lanes 4..7): 4 integer accumulators live at a time instead of 8. Per half-block: ggml's mins term
// first (-(sc << 5) . bsums, folded into the first group's sums, so the scales die there); e0 / e1 = the half's
// 8 scales as i16, each twice ([s0 s0 s2 s2 ..], pshuflw + pshufhw from load8x8_s), so a group's scale splat
// is one pshufd; the half's fmaf right after it, pinned by stores of the 4 new f32 accumulators (V8 had sunk
// half 0's mins and fmaf to the block end and kept its 4 integer accumulators spilled across half 1). Every
// token's sum is pinned by a store of its lane 0 into the result slot (overwritten at the end) after each group,
// so the next token's activation load waits for it: V8 would otherwise hoist a block's activation loads and spill
// them. V8's code per block (tok=4): 591 -> 547 instructions, 74 -> 35 spill-slot accesses; tok=3 472 -> 438 /
// 49 -> 22; tok=2 358 -> 332 / 29 -> 9 (BENCHMARKS.md, "Q6_K 2-/3-/4-token decode").
@inline function dot4v_q6_K(w: usize, a: usize, as: usize, nb: i32, y: usize, ys: usize): void {
  let c0l = f32x4.splat(0), c0h = f32x4.splat(0), c1l = f32x4.splat(0), c1h = f32x4.splat(0), c2l = f32x4.splat(0), c2h = f32x4.splat(0), c3l = f32x4.splat(0), c3h = f32x4.splat(0);
  const m4 = i8x16.splat(0x0f), m30 = i8x16.splat(0x30);
  const end = w + <usize>nb * 210;
  let a0 = a, a1 = a + as, a2 = a + 2 * as, a3 = a + 3 * as;
  while (w < end) {
    const dw = h2f(load<u16>(w, 208));
    // half 0 (ggml's lanes 0..3): steps 0 and 2, the mins term first
    {
      const s16l = v128.load8x8_s(w, 192), s16h = v128.load8x8_s(w, 200);
      const e0 = i8x16.shuffle(s16l, s16l, 0, 1, 0, 1, 4, 5, 4, 5, 8, 9, 8, 9, 12, 13, 12, 13), e1 = i8x16.shuffle(s16h, s16h, 0, 1, 0, 1, 4, 5, 4, 5, 8, 9, 8, 9, 12, 13, 12, 13);
      const ms = i16x8.shl(s16l, 5);
      let t0: v128, t1: v128, t2: v128, t3: v128;
      {
        const qa = v128.load(w, 0), hb = v128.load(w, 128);
        {
          const x = v128.or(v128.and(qa, m4), v128.and(i16x8.shl(hb, 4), m30)), k = i32x4.shuffle(e0, e0, 0, 0, 0, 0);
          t0 = i32x4.sub(q6_g(x, k, a0 + 4), i32x4.dot_i16x8_s(ms, v128.load(a0, 260))); t1 = i32x4.sub(q6_g(x, k, a1 + 4), i32x4.dot_i16x8_s(ms, v128.load(a1, 260))); t2 = i32x4.sub(q6_g(x, k, a2 + 4), i32x4.dot_i16x8_s(ms, v128.load(a2, 260))); t3 = i32x4.sub(q6_g(x, k, a3 + 4), i32x4.dot_i16x8_s(ms, v128.load(a3, 260))); v128.store32_lane(y, t0, 0); v128.store32_lane(y, t1, 0); v128.store32_lane(y, t2, 0); v128.store32_lane(y, t3, 0);
        }
        {
          const x = v128.or(v128.and(i16x8.shr_u(qa, 4), m4), v128.and(hb, m30)), k = i32x4.shuffle(e0, e0, 2, 2, 2, 2);
          t0 = i32x4.add(t0, q6_g(x, k, a0 + 68)); t1 = i32x4.add(t1, q6_g(x, k, a1 + 68)); t2 = i32x4.add(t2, q6_g(x, k, a2 + 68)); t3 = i32x4.add(t3, q6_g(x, k, a3 + 68)); v128.store32_lane(y, t0, 0); v128.store32_lane(y, t1, 0); v128.store32_lane(y, t2, 0); v128.store32_lane(y, t3, 0);
        }
        const qb = v128.load(w, 32);
        {
          const x = v128.or(v128.and(qb, m4), v128.and(i16x8.shl(hb, 2), m30)), k = i32x4.shuffle(e0, e0, 1, 1, 1, 1);
          t0 = i32x4.add(t0, q6_g(x, k, a0 + 36)); t1 = i32x4.add(t1, q6_g(x, k, a1 + 36)); t2 = i32x4.add(t2, q6_g(x, k, a2 + 36)); t3 = i32x4.add(t3, q6_g(x, k, a3 + 36)); v128.store32_lane(y, t0, 0); v128.store32_lane(y, t1, 0); v128.store32_lane(y, t2, 0); v128.store32_lane(y, t3, 0);
        }
        {
          const x = v128.or(v128.and(i16x8.shr_u(qb, 4), m4), v128.and(i16x8.shr_u(hb, 2), m30)), k = i32x4.shuffle(e0, e0, 3, 3, 3, 3);
          t0 = i32x4.add(t0, q6_g(x, k, a0 + 100)); t1 = i32x4.add(t1, q6_g(x, k, a1 + 100)); t2 = i32x4.add(t2, q6_g(x, k, a2 + 100)); t3 = i32x4.add(t3, q6_g(x, k, a3 + 100)); v128.store32_lane(y, t0, 0); v128.store32_lane(y, t1, 0); v128.store32_lane(y, t2, 0); v128.store32_lane(y, t3, 0);
        }
      }
      {
        const qa = v128.load(w, 64), hb = v128.load(w, 160);
        {
          const x = v128.or(v128.and(qa, m4), v128.and(i16x8.shl(hb, 4), m30)), k = i32x4.shuffle(e1, e1, 0, 0, 0, 0);
          t0 = i32x4.add(t0, q6_g(x, k, a0 + 132)); t1 = i32x4.add(t1, q6_g(x, k, a1 + 132)); t2 = i32x4.add(t2, q6_g(x, k, a2 + 132)); t3 = i32x4.add(t3, q6_g(x, k, a3 + 132)); v128.store32_lane(y, t0, 0); v128.store32_lane(y, t1, 0); v128.store32_lane(y, t2, 0); v128.store32_lane(y, t3, 0);
        }
        {
          const x = v128.or(v128.and(i16x8.shr_u(qa, 4), m4), v128.and(hb, m30)), k = i32x4.shuffle(e1, e1, 2, 2, 2, 2);
          t0 = i32x4.add(t0, q6_g(x, k, a0 + 196)); t1 = i32x4.add(t1, q6_g(x, k, a1 + 196)); t2 = i32x4.add(t2, q6_g(x, k, a2 + 196)); t3 = i32x4.add(t3, q6_g(x, k, a3 + 196)); v128.store32_lane(y, t0, 0); v128.store32_lane(y, t1, 0); v128.store32_lane(y, t2, 0); v128.store32_lane(y, t3, 0);
        }
        const qb = v128.load(w, 96);
        {
          const x = v128.or(v128.and(qb, m4), v128.and(i16x8.shl(hb, 2), m30)), k = i32x4.shuffle(e1, e1, 1, 1, 1, 1);
          t0 = i32x4.add(t0, q6_g(x, k, a0 + 164)); t1 = i32x4.add(t1, q6_g(x, k, a1 + 164)); t2 = i32x4.add(t2, q6_g(x, k, a2 + 164)); t3 = i32x4.add(t3, q6_g(x, k, a3 + 164)); v128.store32_lane(y, t0, 0); v128.store32_lane(y, t1, 0); v128.store32_lane(y, t2, 0); v128.store32_lane(y, t3, 0);
        }
        {
          const x = v128.or(v128.and(i16x8.shr_u(qb, 4), m4), v128.and(i16x8.shr_u(hb, 2), m30)), k = i32x4.shuffle(e1, e1, 3, 3, 3, 3);
          t0 = i32x4.add(t0, q6_g(x, k, a0 + 228)); t1 = i32x4.add(t1, q6_g(x, k, a1 + 228)); t2 = i32x4.add(t2, q6_g(x, k, a2 + 228)); t3 = i32x4.add(t3, q6_g(x, k, a3 + 228)); v128.store32_lane(y, t0, 0); v128.store32_lane(y, t1, 0); v128.store32_lane(y, t2, 0); v128.store32_lane(y, t3, 0);
        }
      }
      c0l = f32x4.relaxed_madd(f32x4.convert_i32x4_s(t0), f32x4.splat(load<f32>(a0) * dw), c0l);
      c1l = f32x4.relaxed_madd(f32x4.convert_i32x4_s(t1), f32x4.splat(load<f32>(a1) * dw), c1l);
      c2l = f32x4.relaxed_madd(f32x4.convert_i32x4_s(t2), f32x4.splat(load<f32>(a2) * dw), c2l);
      c3l = f32x4.relaxed_madd(f32x4.convert_i32x4_s(t3), f32x4.splat(load<f32>(a3) * dw), c3l);
      v128.store32_lane(y, c0l, 0); v128.store32_lane(y, c1l, 0); v128.store32_lane(y, c2l, 0); v128.store32_lane(y, c3l, 0);
    }
    // half 1 (ggml's lanes 4..7): steps 1 and 3, the mins term first
    {
      const s16l = v128.load8x8_s(w, 192), s16h = v128.load8x8_s(w, 200);
      const e0 = i8x16.shuffle(s16l, s16l, 2, 3, 2, 3, 6, 7, 6, 7, 10, 11, 10, 11, 14, 15, 14, 15), e1 = i8x16.shuffle(s16h, s16h, 2, 3, 2, 3, 6, 7, 6, 7, 10, 11, 10, 11, 14, 15, 14, 15);
      const ms = i16x8.shl(s16h, 5);
      let t0: v128, t1: v128, t2: v128, t3: v128;
      {
        const qa = v128.load(w, 16), hb = v128.load(w, 144);
        {
          const x = v128.or(v128.and(qa, m4), v128.and(i16x8.shl(hb, 4), m30)), k = i32x4.shuffle(e0, e0, 0, 0, 0, 0);
          t0 = i32x4.sub(q6_g(x, k, a0 + 20), i32x4.dot_i16x8_s(ms, v128.load(a0, 276))); t1 = i32x4.sub(q6_g(x, k, a1 + 20), i32x4.dot_i16x8_s(ms, v128.load(a1, 276))); t2 = i32x4.sub(q6_g(x, k, a2 + 20), i32x4.dot_i16x8_s(ms, v128.load(a2, 276))); t3 = i32x4.sub(q6_g(x, k, a3 + 20), i32x4.dot_i16x8_s(ms, v128.load(a3, 276))); v128.store32_lane(y, t0, 0); v128.store32_lane(y, t1, 0); v128.store32_lane(y, t2, 0); v128.store32_lane(y, t3, 0);
        }
        {
          const x = v128.or(v128.and(i16x8.shr_u(qa, 4), m4), v128.and(hb, m30)), k = i32x4.shuffle(e0, e0, 2, 2, 2, 2);
          t0 = i32x4.add(t0, q6_g(x, k, a0 + 84)); t1 = i32x4.add(t1, q6_g(x, k, a1 + 84)); t2 = i32x4.add(t2, q6_g(x, k, a2 + 84)); t3 = i32x4.add(t3, q6_g(x, k, a3 + 84)); v128.store32_lane(y, t0, 0); v128.store32_lane(y, t1, 0); v128.store32_lane(y, t2, 0); v128.store32_lane(y, t3, 0);
        }
        const qb = v128.load(w, 48);
        {
          const x = v128.or(v128.and(qb, m4), v128.and(i16x8.shl(hb, 2), m30)), k = i32x4.shuffle(e0, e0, 1, 1, 1, 1);
          t0 = i32x4.add(t0, q6_g(x, k, a0 + 52)); t1 = i32x4.add(t1, q6_g(x, k, a1 + 52)); t2 = i32x4.add(t2, q6_g(x, k, a2 + 52)); t3 = i32x4.add(t3, q6_g(x, k, a3 + 52)); v128.store32_lane(y, t0, 0); v128.store32_lane(y, t1, 0); v128.store32_lane(y, t2, 0); v128.store32_lane(y, t3, 0);
        }
        {
          const x = v128.or(v128.and(i16x8.shr_u(qb, 4), m4), v128.and(i16x8.shr_u(hb, 2), m30)), k = i32x4.shuffle(e0, e0, 3, 3, 3, 3);
          t0 = i32x4.add(t0, q6_g(x, k, a0 + 116)); t1 = i32x4.add(t1, q6_g(x, k, a1 + 116)); t2 = i32x4.add(t2, q6_g(x, k, a2 + 116)); t3 = i32x4.add(t3, q6_g(x, k, a3 + 116)); v128.store32_lane(y, t0, 0); v128.store32_lane(y, t1, 0); v128.store32_lane(y, t2, 0); v128.store32_lane(y, t3, 0);
        }
      }
      {
        const qa = v128.load(w, 80), hb = v128.load(w, 176);
        {
          const x = v128.or(v128.and(qa, m4), v128.and(i16x8.shl(hb, 4), m30)), k = i32x4.shuffle(e1, e1, 0, 0, 0, 0);
          t0 = i32x4.add(t0, q6_g(x, k, a0 + 148)); t1 = i32x4.add(t1, q6_g(x, k, a1 + 148)); t2 = i32x4.add(t2, q6_g(x, k, a2 + 148)); t3 = i32x4.add(t3, q6_g(x, k, a3 + 148)); v128.store32_lane(y, t0, 0); v128.store32_lane(y, t1, 0); v128.store32_lane(y, t2, 0); v128.store32_lane(y, t3, 0);
        }
        {
          const x = v128.or(v128.and(i16x8.shr_u(qa, 4), m4), v128.and(hb, m30)), k = i32x4.shuffle(e1, e1, 2, 2, 2, 2);
          t0 = i32x4.add(t0, q6_g(x, k, a0 + 212)); t1 = i32x4.add(t1, q6_g(x, k, a1 + 212)); t2 = i32x4.add(t2, q6_g(x, k, a2 + 212)); t3 = i32x4.add(t3, q6_g(x, k, a3 + 212)); v128.store32_lane(y, t0, 0); v128.store32_lane(y, t1, 0); v128.store32_lane(y, t2, 0); v128.store32_lane(y, t3, 0);
        }
        const qb = v128.load(w, 112);
        {
          const x = v128.or(v128.and(qb, m4), v128.and(i16x8.shl(hb, 2), m30)), k = i32x4.shuffle(e1, e1, 1, 1, 1, 1);
          t0 = i32x4.add(t0, q6_g(x, k, a0 + 180)); t1 = i32x4.add(t1, q6_g(x, k, a1 + 180)); t2 = i32x4.add(t2, q6_g(x, k, a2 + 180)); t3 = i32x4.add(t3, q6_g(x, k, a3 + 180)); v128.store32_lane(y, t0, 0); v128.store32_lane(y, t1, 0); v128.store32_lane(y, t2, 0); v128.store32_lane(y, t3, 0);
        }
        {
          const x = v128.or(v128.and(i16x8.shr_u(qb, 4), m4), v128.and(i16x8.shr_u(hb, 2), m30)), k = i32x4.shuffle(e1, e1, 3, 3, 3, 3);
          t0 = i32x4.add(t0, q6_g(x, k, a0 + 244)); t1 = i32x4.add(t1, q6_g(x, k, a1 + 244)); t2 = i32x4.add(t2, q6_g(x, k, a2 + 244)); t3 = i32x4.add(t3, q6_g(x, k, a3 + 244)); v128.store32_lane(y, t0, 0); v128.store32_lane(y, t1, 0); v128.store32_lane(y, t2, 0); v128.store32_lane(y, t3, 0);
        }
      }
      c0h = f32x4.relaxed_madd(f32x4.convert_i32x4_s(t0), f32x4.splat(load<f32>(a0) * dw), c0h);
      c1h = f32x4.relaxed_madd(f32x4.convert_i32x4_s(t1), f32x4.splat(load<f32>(a1) * dw), c1h);
      c2h = f32x4.relaxed_madd(f32x4.convert_i32x4_s(t2), f32x4.splat(load<f32>(a2) * dw), c2h);
      c3h = f32x4.relaxed_madd(f32x4.convert_i32x4_s(t3), f32x4.splat(load<f32>(a3) * dw), c3h);
    }
    w += 210; a0 += 292; a1 += 292; a2 += 292; a3 += 292;
  }
  store<f32>(y, hsum_float_8(c0l, c0h));
  store<f32>(y + ys, hsum_float_8(c1l, c1h));
  store<f32>(y + 2 * ys, hsum_float_8(c2l, c2h));
  store<f32>(y + 3 * ys, hsum_float_8(c3l, c3h));
}
// dot4v_q6_K for 2 or 3 sequences' decode tokens (partial batches of -np 4), the same code with the absent
// tokens removed: the same integer lanes and f32 chains per token (so dot_q6_K_rx's bits), the 6-bit values
// decoded once for all the tokens
@inline function dot3v_q6_K(w: usize, a: usize, as: usize, nb: i32, y: usize, ys: usize): void {
  let c0l = f32x4.splat(0), c0h = f32x4.splat(0), c1l = f32x4.splat(0), c1h = f32x4.splat(0), c2l = f32x4.splat(0), c2h = f32x4.splat(0);
  const m4 = i8x16.splat(0x0f), m30 = i8x16.splat(0x30);
  const end = w + <usize>nb * 210;
  let a0 = a, a1 = a + as, a2 = a + 2 * as;
  while (w < end) {
    const dw = h2f(load<u16>(w, 208));
    // half 0 (ggml's lanes 0..3): steps 0 and 2, the mins term first
    {
      const s16l = v128.load8x8_s(w, 192), s16h = v128.load8x8_s(w, 200);
      const e0 = i8x16.shuffle(s16l, s16l, 0, 1, 0, 1, 4, 5, 4, 5, 8, 9, 8, 9, 12, 13, 12, 13), e1 = i8x16.shuffle(s16h, s16h, 0, 1, 0, 1, 4, 5, 4, 5, 8, 9, 8, 9, 12, 13, 12, 13);
      const ms = i16x8.shl(s16l, 5);
      let t0: v128, t1: v128, t2: v128;
      {
        const qa = v128.load(w, 0), hb = v128.load(w, 128);
        {
          const x = v128.or(v128.and(qa, m4), v128.and(i16x8.shl(hb, 4), m30)), k = i32x4.shuffle(e0, e0, 0, 0, 0, 0);
          t0 = i32x4.sub(q6_g(x, k, a0 + 4), i32x4.dot_i16x8_s(ms, v128.load(a0, 260))); t1 = i32x4.sub(q6_g(x, k, a1 + 4), i32x4.dot_i16x8_s(ms, v128.load(a1, 260))); t2 = i32x4.sub(q6_g(x, k, a2 + 4), i32x4.dot_i16x8_s(ms, v128.load(a2, 260))); v128.store32_lane(y, t0, 0); v128.store32_lane(y, t1, 0); v128.store32_lane(y, t2, 0);
        }
        {
          const x = v128.or(v128.and(i16x8.shr_u(qa, 4), m4), v128.and(hb, m30)), k = i32x4.shuffle(e0, e0, 2, 2, 2, 2);
          t0 = i32x4.add(t0, q6_g(x, k, a0 + 68)); t1 = i32x4.add(t1, q6_g(x, k, a1 + 68)); t2 = i32x4.add(t2, q6_g(x, k, a2 + 68)); v128.store32_lane(y, t0, 0); v128.store32_lane(y, t1, 0); v128.store32_lane(y, t2, 0);
        }
        const qb = v128.load(w, 32);
        {
          const x = v128.or(v128.and(qb, m4), v128.and(i16x8.shl(hb, 2), m30)), k = i32x4.shuffle(e0, e0, 1, 1, 1, 1);
          t0 = i32x4.add(t0, q6_g(x, k, a0 + 36)); t1 = i32x4.add(t1, q6_g(x, k, a1 + 36)); t2 = i32x4.add(t2, q6_g(x, k, a2 + 36)); v128.store32_lane(y, t0, 0); v128.store32_lane(y, t1, 0); v128.store32_lane(y, t2, 0);
        }
        {
          const x = v128.or(v128.and(i16x8.shr_u(qb, 4), m4), v128.and(i16x8.shr_u(hb, 2), m30)), k = i32x4.shuffle(e0, e0, 3, 3, 3, 3);
          t0 = i32x4.add(t0, q6_g(x, k, a0 + 100)); t1 = i32x4.add(t1, q6_g(x, k, a1 + 100)); t2 = i32x4.add(t2, q6_g(x, k, a2 + 100)); v128.store32_lane(y, t0, 0); v128.store32_lane(y, t1, 0); v128.store32_lane(y, t2, 0);
        }
      }
      {
        const qa = v128.load(w, 64), hb = v128.load(w, 160);
        {
          const x = v128.or(v128.and(qa, m4), v128.and(i16x8.shl(hb, 4), m30)), k = i32x4.shuffle(e1, e1, 0, 0, 0, 0);
          t0 = i32x4.add(t0, q6_g(x, k, a0 + 132)); t1 = i32x4.add(t1, q6_g(x, k, a1 + 132)); t2 = i32x4.add(t2, q6_g(x, k, a2 + 132)); v128.store32_lane(y, t0, 0); v128.store32_lane(y, t1, 0); v128.store32_lane(y, t2, 0);
        }
        {
          const x = v128.or(v128.and(i16x8.shr_u(qa, 4), m4), v128.and(hb, m30)), k = i32x4.shuffle(e1, e1, 2, 2, 2, 2);
          t0 = i32x4.add(t0, q6_g(x, k, a0 + 196)); t1 = i32x4.add(t1, q6_g(x, k, a1 + 196)); t2 = i32x4.add(t2, q6_g(x, k, a2 + 196)); v128.store32_lane(y, t0, 0); v128.store32_lane(y, t1, 0); v128.store32_lane(y, t2, 0);
        }
        const qb = v128.load(w, 96);
        {
          const x = v128.or(v128.and(qb, m4), v128.and(i16x8.shl(hb, 2), m30)), k = i32x4.shuffle(e1, e1, 1, 1, 1, 1);
          t0 = i32x4.add(t0, q6_g(x, k, a0 + 164)); t1 = i32x4.add(t1, q6_g(x, k, a1 + 164)); t2 = i32x4.add(t2, q6_g(x, k, a2 + 164)); v128.store32_lane(y, t0, 0); v128.store32_lane(y, t1, 0); v128.store32_lane(y, t2, 0);
        }
        {
          const x = v128.or(v128.and(i16x8.shr_u(qb, 4), m4), v128.and(i16x8.shr_u(hb, 2), m30)), k = i32x4.shuffle(e1, e1, 3, 3, 3, 3);
          t0 = i32x4.add(t0, q6_g(x, k, a0 + 228)); t1 = i32x4.add(t1, q6_g(x, k, a1 + 228)); t2 = i32x4.add(t2, q6_g(x, k, a2 + 228)); v128.store32_lane(y, t0, 0); v128.store32_lane(y, t1, 0); v128.store32_lane(y, t2, 0);
        }
      }
      c0l = f32x4.relaxed_madd(f32x4.convert_i32x4_s(t0), f32x4.splat(load<f32>(a0) * dw), c0l);
      c1l = f32x4.relaxed_madd(f32x4.convert_i32x4_s(t1), f32x4.splat(load<f32>(a1) * dw), c1l);
      c2l = f32x4.relaxed_madd(f32x4.convert_i32x4_s(t2), f32x4.splat(load<f32>(a2) * dw), c2l);
      v128.store32_lane(y, c0l, 0); v128.store32_lane(y, c1l, 0); v128.store32_lane(y, c2l, 0);
    }
    // half 1 (ggml's lanes 4..7): steps 1 and 3, the mins term first
    {
      const s16l = v128.load8x8_s(w, 192), s16h = v128.load8x8_s(w, 200);
      const e0 = i8x16.shuffle(s16l, s16l, 2, 3, 2, 3, 6, 7, 6, 7, 10, 11, 10, 11, 14, 15, 14, 15), e1 = i8x16.shuffle(s16h, s16h, 2, 3, 2, 3, 6, 7, 6, 7, 10, 11, 10, 11, 14, 15, 14, 15);
      const ms = i16x8.shl(s16h, 5);
      let t0: v128, t1: v128, t2: v128;
      {
        const qa = v128.load(w, 16), hb = v128.load(w, 144);
        {
          const x = v128.or(v128.and(qa, m4), v128.and(i16x8.shl(hb, 4), m30)), k = i32x4.shuffle(e0, e0, 0, 0, 0, 0);
          t0 = i32x4.sub(q6_g(x, k, a0 + 20), i32x4.dot_i16x8_s(ms, v128.load(a0, 276))); t1 = i32x4.sub(q6_g(x, k, a1 + 20), i32x4.dot_i16x8_s(ms, v128.load(a1, 276))); t2 = i32x4.sub(q6_g(x, k, a2 + 20), i32x4.dot_i16x8_s(ms, v128.load(a2, 276))); v128.store32_lane(y, t0, 0); v128.store32_lane(y, t1, 0); v128.store32_lane(y, t2, 0);
        }
        {
          const x = v128.or(v128.and(i16x8.shr_u(qa, 4), m4), v128.and(hb, m30)), k = i32x4.shuffle(e0, e0, 2, 2, 2, 2);
          t0 = i32x4.add(t0, q6_g(x, k, a0 + 84)); t1 = i32x4.add(t1, q6_g(x, k, a1 + 84)); t2 = i32x4.add(t2, q6_g(x, k, a2 + 84)); v128.store32_lane(y, t0, 0); v128.store32_lane(y, t1, 0); v128.store32_lane(y, t2, 0);
        }
        const qb = v128.load(w, 48);
        {
          const x = v128.or(v128.and(qb, m4), v128.and(i16x8.shl(hb, 2), m30)), k = i32x4.shuffle(e0, e0, 1, 1, 1, 1);
          t0 = i32x4.add(t0, q6_g(x, k, a0 + 52)); t1 = i32x4.add(t1, q6_g(x, k, a1 + 52)); t2 = i32x4.add(t2, q6_g(x, k, a2 + 52)); v128.store32_lane(y, t0, 0); v128.store32_lane(y, t1, 0); v128.store32_lane(y, t2, 0);
        }
        {
          const x = v128.or(v128.and(i16x8.shr_u(qb, 4), m4), v128.and(i16x8.shr_u(hb, 2), m30)), k = i32x4.shuffle(e0, e0, 3, 3, 3, 3);
          t0 = i32x4.add(t0, q6_g(x, k, a0 + 116)); t1 = i32x4.add(t1, q6_g(x, k, a1 + 116)); t2 = i32x4.add(t2, q6_g(x, k, a2 + 116)); v128.store32_lane(y, t0, 0); v128.store32_lane(y, t1, 0); v128.store32_lane(y, t2, 0);
        }
      }
      {
        const qa = v128.load(w, 80), hb = v128.load(w, 176);
        {
          const x = v128.or(v128.and(qa, m4), v128.and(i16x8.shl(hb, 4), m30)), k = i32x4.shuffle(e1, e1, 0, 0, 0, 0);
          t0 = i32x4.add(t0, q6_g(x, k, a0 + 148)); t1 = i32x4.add(t1, q6_g(x, k, a1 + 148)); t2 = i32x4.add(t2, q6_g(x, k, a2 + 148)); v128.store32_lane(y, t0, 0); v128.store32_lane(y, t1, 0); v128.store32_lane(y, t2, 0);
        }
        {
          const x = v128.or(v128.and(i16x8.shr_u(qa, 4), m4), v128.and(hb, m30)), k = i32x4.shuffle(e1, e1, 2, 2, 2, 2);
          t0 = i32x4.add(t0, q6_g(x, k, a0 + 212)); t1 = i32x4.add(t1, q6_g(x, k, a1 + 212)); t2 = i32x4.add(t2, q6_g(x, k, a2 + 212)); v128.store32_lane(y, t0, 0); v128.store32_lane(y, t1, 0); v128.store32_lane(y, t2, 0);
        }
        const qb = v128.load(w, 112);
        {
          const x = v128.or(v128.and(qb, m4), v128.and(i16x8.shl(hb, 2), m30)), k = i32x4.shuffle(e1, e1, 1, 1, 1, 1);
          t0 = i32x4.add(t0, q6_g(x, k, a0 + 180)); t1 = i32x4.add(t1, q6_g(x, k, a1 + 180)); t2 = i32x4.add(t2, q6_g(x, k, a2 + 180)); v128.store32_lane(y, t0, 0); v128.store32_lane(y, t1, 0); v128.store32_lane(y, t2, 0);
        }
        {
          const x = v128.or(v128.and(i16x8.shr_u(qb, 4), m4), v128.and(i16x8.shr_u(hb, 2), m30)), k = i32x4.shuffle(e1, e1, 3, 3, 3, 3);
          t0 = i32x4.add(t0, q6_g(x, k, a0 + 244)); t1 = i32x4.add(t1, q6_g(x, k, a1 + 244)); t2 = i32x4.add(t2, q6_g(x, k, a2 + 244)); v128.store32_lane(y, t0, 0); v128.store32_lane(y, t1, 0); v128.store32_lane(y, t2, 0);
        }
      }
      c0h = f32x4.relaxed_madd(f32x4.convert_i32x4_s(t0), f32x4.splat(load<f32>(a0) * dw), c0h);
      c1h = f32x4.relaxed_madd(f32x4.convert_i32x4_s(t1), f32x4.splat(load<f32>(a1) * dw), c1h);
      c2h = f32x4.relaxed_madd(f32x4.convert_i32x4_s(t2), f32x4.splat(load<f32>(a2) * dw), c2h);
    }
    w += 210; a0 += 292; a1 += 292; a2 += 292;
  }
  store<f32>(y, hsum_float_8(c0l, c0h));
  store<f32>(y + ys, hsum_float_8(c1l, c1h));
  store<f32>(y + 2 * ys, hsum_float_8(c2l, c2h));
}
@inline function dot2v_q6_K(w: usize, a: usize, as: usize, nb: i32, y: usize, ys: usize): void {
  let c0l = f32x4.splat(0), c0h = f32x4.splat(0), c1l = f32x4.splat(0), c1h = f32x4.splat(0);
  const m4 = i8x16.splat(0x0f), m30 = i8x16.splat(0x30);
  const end = w + <usize>nb * 210;
  let a0 = a, a1 = a + as;
  while (w < end) {
    const dw = h2f(load<u16>(w, 208));
    // half 0 (ggml's lanes 0..3): steps 0 and 2, the mins term first
    {
      const s16l = v128.load8x8_s(w, 192), s16h = v128.load8x8_s(w, 200);
      const e0 = i8x16.shuffle(s16l, s16l, 0, 1, 0, 1, 4, 5, 4, 5, 8, 9, 8, 9, 12, 13, 12, 13), e1 = i8x16.shuffle(s16h, s16h, 0, 1, 0, 1, 4, 5, 4, 5, 8, 9, 8, 9, 12, 13, 12, 13);
      const ms = i16x8.shl(s16l, 5);
      let t0: v128, t1: v128;
      {
        const qa = v128.load(w, 0), hb = v128.load(w, 128);
        {
          const x = v128.or(v128.and(qa, m4), v128.and(i16x8.shl(hb, 4), m30)), k = i32x4.shuffle(e0, e0, 0, 0, 0, 0);
          t0 = i32x4.sub(q6_g(x, k, a0 + 4), i32x4.dot_i16x8_s(ms, v128.load(a0, 260))); t1 = i32x4.sub(q6_g(x, k, a1 + 4), i32x4.dot_i16x8_s(ms, v128.load(a1, 260))); v128.store32_lane(y, t0, 0); v128.store32_lane(y, t1, 0);
        }
        {
          const x = v128.or(v128.and(i16x8.shr_u(qa, 4), m4), v128.and(hb, m30)), k = i32x4.shuffle(e0, e0, 2, 2, 2, 2);
          t0 = i32x4.add(t0, q6_g(x, k, a0 + 68)); t1 = i32x4.add(t1, q6_g(x, k, a1 + 68)); v128.store32_lane(y, t0, 0); v128.store32_lane(y, t1, 0);
        }
        const qb = v128.load(w, 32);
        {
          const x = v128.or(v128.and(qb, m4), v128.and(i16x8.shl(hb, 2), m30)), k = i32x4.shuffle(e0, e0, 1, 1, 1, 1);
          t0 = i32x4.add(t0, q6_g(x, k, a0 + 36)); t1 = i32x4.add(t1, q6_g(x, k, a1 + 36)); v128.store32_lane(y, t0, 0); v128.store32_lane(y, t1, 0);
        }
        {
          const x = v128.or(v128.and(i16x8.shr_u(qb, 4), m4), v128.and(i16x8.shr_u(hb, 2), m30)), k = i32x4.shuffle(e0, e0, 3, 3, 3, 3);
          t0 = i32x4.add(t0, q6_g(x, k, a0 + 100)); t1 = i32x4.add(t1, q6_g(x, k, a1 + 100)); v128.store32_lane(y, t0, 0); v128.store32_lane(y, t1, 0);
        }
      }
      {
        const qa = v128.load(w, 64), hb = v128.load(w, 160);
        {
          const x = v128.or(v128.and(qa, m4), v128.and(i16x8.shl(hb, 4), m30)), k = i32x4.shuffle(e1, e1, 0, 0, 0, 0);
          t0 = i32x4.add(t0, q6_g(x, k, a0 + 132)); t1 = i32x4.add(t1, q6_g(x, k, a1 + 132)); v128.store32_lane(y, t0, 0); v128.store32_lane(y, t1, 0);
        }
        {
          const x = v128.or(v128.and(i16x8.shr_u(qa, 4), m4), v128.and(hb, m30)), k = i32x4.shuffle(e1, e1, 2, 2, 2, 2);
          t0 = i32x4.add(t0, q6_g(x, k, a0 + 196)); t1 = i32x4.add(t1, q6_g(x, k, a1 + 196)); v128.store32_lane(y, t0, 0); v128.store32_lane(y, t1, 0);
        }
        const qb = v128.load(w, 96);
        {
          const x = v128.or(v128.and(qb, m4), v128.and(i16x8.shl(hb, 2), m30)), k = i32x4.shuffle(e1, e1, 1, 1, 1, 1);
          t0 = i32x4.add(t0, q6_g(x, k, a0 + 164)); t1 = i32x4.add(t1, q6_g(x, k, a1 + 164)); v128.store32_lane(y, t0, 0); v128.store32_lane(y, t1, 0);
        }
        {
          const x = v128.or(v128.and(i16x8.shr_u(qb, 4), m4), v128.and(i16x8.shr_u(hb, 2), m30)), k = i32x4.shuffle(e1, e1, 3, 3, 3, 3);
          t0 = i32x4.add(t0, q6_g(x, k, a0 + 228)); t1 = i32x4.add(t1, q6_g(x, k, a1 + 228)); v128.store32_lane(y, t0, 0); v128.store32_lane(y, t1, 0);
        }
      }
      c0l = f32x4.relaxed_madd(f32x4.convert_i32x4_s(t0), f32x4.splat(load<f32>(a0) * dw), c0l);
      c1l = f32x4.relaxed_madd(f32x4.convert_i32x4_s(t1), f32x4.splat(load<f32>(a1) * dw), c1l);
      v128.store32_lane(y, c0l, 0); v128.store32_lane(y, c1l, 0);
    }
    // half 1 (ggml's lanes 4..7): steps 1 and 3, the mins term first
    {
      const s16l = v128.load8x8_s(w, 192), s16h = v128.load8x8_s(w, 200);
      const e0 = i8x16.shuffle(s16l, s16l, 2, 3, 2, 3, 6, 7, 6, 7, 10, 11, 10, 11, 14, 15, 14, 15), e1 = i8x16.shuffle(s16h, s16h, 2, 3, 2, 3, 6, 7, 6, 7, 10, 11, 10, 11, 14, 15, 14, 15);
      const ms = i16x8.shl(s16h, 5);
      let t0: v128, t1: v128;
      {
        const qa = v128.load(w, 16), hb = v128.load(w, 144);
        {
          const x = v128.or(v128.and(qa, m4), v128.and(i16x8.shl(hb, 4), m30)), k = i32x4.shuffle(e0, e0, 0, 0, 0, 0);
          t0 = i32x4.sub(q6_g(x, k, a0 + 20), i32x4.dot_i16x8_s(ms, v128.load(a0, 276))); t1 = i32x4.sub(q6_g(x, k, a1 + 20), i32x4.dot_i16x8_s(ms, v128.load(a1, 276))); v128.store32_lane(y, t0, 0); v128.store32_lane(y, t1, 0);
        }
        {
          const x = v128.or(v128.and(i16x8.shr_u(qa, 4), m4), v128.and(hb, m30)), k = i32x4.shuffle(e0, e0, 2, 2, 2, 2);
          t0 = i32x4.add(t0, q6_g(x, k, a0 + 84)); t1 = i32x4.add(t1, q6_g(x, k, a1 + 84)); v128.store32_lane(y, t0, 0); v128.store32_lane(y, t1, 0);
        }
        const qb = v128.load(w, 48);
        {
          const x = v128.or(v128.and(qb, m4), v128.and(i16x8.shl(hb, 2), m30)), k = i32x4.shuffle(e0, e0, 1, 1, 1, 1);
          t0 = i32x4.add(t0, q6_g(x, k, a0 + 52)); t1 = i32x4.add(t1, q6_g(x, k, a1 + 52)); v128.store32_lane(y, t0, 0); v128.store32_lane(y, t1, 0);
        }
        {
          const x = v128.or(v128.and(i16x8.shr_u(qb, 4), m4), v128.and(i16x8.shr_u(hb, 2), m30)), k = i32x4.shuffle(e0, e0, 3, 3, 3, 3);
          t0 = i32x4.add(t0, q6_g(x, k, a0 + 116)); t1 = i32x4.add(t1, q6_g(x, k, a1 + 116)); v128.store32_lane(y, t0, 0); v128.store32_lane(y, t1, 0);
        }
      }
      {
        const qa = v128.load(w, 80), hb = v128.load(w, 176);
        {
          const x = v128.or(v128.and(qa, m4), v128.and(i16x8.shl(hb, 4), m30)), k = i32x4.shuffle(e1, e1, 0, 0, 0, 0);
          t0 = i32x4.add(t0, q6_g(x, k, a0 + 148)); t1 = i32x4.add(t1, q6_g(x, k, a1 + 148)); v128.store32_lane(y, t0, 0); v128.store32_lane(y, t1, 0);
        }
        {
          const x = v128.or(v128.and(i16x8.shr_u(qa, 4), m4), v128.and(hb, m30)), k = i32x4.shuffle(e1, e1, 2, 2, 2, 2);
          t0 = i32x4.add(t0, q6_g(x, k, a0 + 212)); t1 = i32x4.add(t1, q6_g(x, k, a1 + 212)); v128.store32_lane(y, t0, 0); v128.store32_lane(y, t1, 0);
        }
        const qb = v128.load(w, 112);
        {
          const x = v128.or(v128.and(qb, m4), v128.and(i16x8.shl(hb, 2), m30)), k = i32x4.shuffle(e1, e1, 1, 1, 1, 1);
          t0 = i32x4.add(t0, q6_g(x, k, a0 + 180)); t1 = i32x4.add(t1, q6_g(x, k, a1 + 180)); v128.store32_lane(y, t0, 0); v128.store32_lane(y, t1, 0);
        }
        {
          const x = v128.or(v128.and(i16x8.shr_u(qb, 4), m4), v128.and(i16x8.shr_u(hb, 2), m30)), k = i32x4.shuffle(e1, e1, 3, 3, 3, 3);
          t0 = i32x4.add(t0, q6_g(x, k, a0 + 244)); t1 = i32x4.add(t1, q6_g(x, k, a1 + 244)); v128.store32_lane(y, t0, 0); v128.store32_lane(y, t1, 0);
        }
      }
      c0h = f32x4.relaxed_madd(f32x4.convert_i32x4_s(t0), f32x4.splat(load<f32>(a0) * dw), c0h);
      c1h = f32x4.relaxed_madd(f32x4.convert_i32x4_s(t1), f32x4.splat(load<f32>(a1) * dw), c1h);
    }
    w += 210; a0 += 292; a1 += 292;
  }
  store<f32>(y, hsum_float_8(c0l, c0h));
  store<f32>(y + ys, hsum_float_8(c1l, c1h));
}
// ggml's mins term of one token's half super-block (hi: sub-blocks 8..15): -32 * (sc . bsums) on i32 lanes
@inline function q6_mins(s16l: v128, s16h: v128, a: usize, hi: bool): v128 {
  return i32x4.mul(i32x4.dot_i16x8_s(hi ? s16h : s16l, v128.load(a + (hi ? 276 : 260))), i32x4.splat(-32));
}
// the prompt-batch GEMM for 8 tokens per weight decode (relaxed SIMD), each token exactly dot4v_q6_K's (and
// dot_q6_K's) integer lanes and f32 chains: the even steps (lanes 0..3) for the 8 tokens, then the odd steps
// (lanes 4..7), so 8 integer accumulators are live at a time; each 16-value group decoded once for the 8,
// every token's accumulator pinned by a store of its lane 0 into the result slot (overwritten at the end;
// pinning only tokens 3 and 7 ran at 0.75x: V8 hoisted the loads and spilled)
@inline function dot8t_q6_K(w: usize, a: usize, as: usize, nb: i32, y0: usize, ys: usize): void {
  let c0l = f32x4.splat(0), c0h = c0l, c1l = c0l, c1h = c0l, c2l = c0l, c2h = c0l, c3l = c0l, c3h = c0l;
  let c4l = c0l, c4h = c0l, c5l = c0l, c5h = c0l, c6l = c0l, c6h = c0l, c7l = c0l, c7h = c0l;
  const m4 = i8x16.splat(0x0f), m30 = i8x16.splat(0x30);
  const a1 = as, a2 = 2 * as, a3 = 3 * as, a4 = 4 * as, a5 = 5 * as, a6 = 6 * as, a7 = 7 * as;
  const y1 = y0 + ys, y2 = y0 + 2 * ys, y3 = y0 + 3 * ys, y4 = y0 + 4 * ys, y5 = y4 + ys, y6 = y4 + 2 * ys, y7 = y4 + 3 * ys;
  const end = w + <usize>nb * 210;
  while (w < end) {
    const dw = h2f(load<u16>(w, 208));
    const scv = v128.load(w, 192);
    const s16l = i16x8.extend_low_i8x16_s(scv), s16h = i16x8.extend_high_i8x16_s(scv);
    const ev = i8x16.shuffle(s16l, s16h, 0, 1, 4, 5, 8, 9, 12, 13, 16, 17, 20, 21, 24, 25, 28, 29);
    const od = i8x16.shuffle(s16l, s16h, 2, 3, 6, 7, 10, 11, 14, 15, 18, 19, 22, 23, 26, 27, 30, 31);
    const ev2 = i8x16.shuffle(ev, ev, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7), od2 = i8x16.shuffle(od, od, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7);
    const d0 = f32x4.splat(load<f32>(a) * dw), d1 = f32x4.splat(load<f32>(a + a1) * dw), d2 = f32x4.splat(load<f32>(a + a2) * dw), d3 = f32x4.splat(load<f32>(a + a3) * dw), d4 = f32x4.splat(load<f32>(a + a4) * dw), d5 = f32x4.splat(load<f32>(a + a5) * dw), d6 = f32x4.splat(load<f32>(a + a6) * dw), d7 = f32x4.splat(load<f32>(a + a7) * dw);
    {
      let s0 = q6_mins(s16l, s16h, a, false), s1 = q6_mins(s16l, s16h, a + a1, false), s2 = q6_mins(s16l, s16h, a + a2, false), s3 = q6_mins(s16l, s16h, a + a3, false), s4 = q6_mins(s16l, s16h, a + a4, false), s5 = q6_mins(s16l, s16h, a + a5, false), s6 = q6_mins(s16l, s16h, a + a6, false), s7 = q6_mins(s16l, s16h, a + a7, false);
      {
        const ql = w + 0, qh = w + 128, aq = a + 4;
        {
          const x = v128.or(v128.and(v128.load(ql), m4), v128.and(i16x8.shl(v128.load(qh), 4), m30)), kk = q6_k1(ev);
          s0 = i32x4.add(s0, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq, 0), x), kk)); v128.store32_lane(y0, s0, 0);
          s1 = i32x4.add(s1, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a1, 0), x), kk)); v128.store32_lane(y0, s1, 0);
          s2 = i32x4.add(s2, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a2, 0), x), kk)); v128.store32_lane(y0, s2, 0);
          s3 = i32x4.add(s3, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a3, 0), x), kk)); v128.store32_lane(y0, s3, 0);
          s4 = i32x4.add(s4, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a4, 0), x), kk)); v128.store32_lane(y0, s4, 0);
          s5 = i32x4.add(s5, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a5, 0), x), kk)); v128.store32_lane(y0, s5, 0);
          s6 = i32x4.add(s6, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a6, 0), x), kk)); v128.store32_lane(y0, s6, 0);
          s7 = i32x4.add(s7, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a7, 0), x), kk)); v128.store32_lane(y0, s7, 0);
        }
        {
          const x = v128.or(v128.and(v128.load(ql, 32), m4), v128.and(i16x8.shl(v128.load(qh), 2), m30)), kk = q6_k2(ev);
          s0 = i32x4.add(s0, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq, 32), x), kk)); v128.store32_lane(y0, s0, 0);
          s1 = i32x4.add(s1, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a1, 32), x), kk)); v128.store32_lane(y0, s1, 0);
          s2 = i32x4.add(s2, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a2, 32), x), kk)); v128.store32_lane(y0, s2, 0);
          s3 = i32x4.add(s3, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a3, 32), x), kk)); v128.store32_lane(y0, s3, 0);
          s4 = i32x4.add(s4, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a4, 32), x), kk)); v128.store32_lane(y0, s4, 0);
          s5 = i32x4.add(s5, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a5, 32), x), kk)); v128.store32_lane(y0, s5, 0);
          s6 = i32x4.add(s6, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a6, 32), x), kk)); v128.store32_lane(y0, s6, 0);
          s7 = i32x4.add(s7, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a7, 32), x), kk)); v128.store32_lane(y0, s7, 0);
        }
        {
          const x = v128.or(v128.and(i16x8.shr_u(v128.load(ql), 4), m4), v128.and(v128.load(qh), m30)), kk = q6_k3(ev);
          s0 = i32x4.add(s0, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq, 64), x), kk)); v128.store32_lane(y0, s0, 0);
          s1 = i32x4.add(s1, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a1, 64), x), kk)); v128.store32_lane(y0, s1, 0);
          s2 = i32x4.add(s2, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a2, 64), x), kk)); v128.store32_lane(y0, s2, 0);
          s3 = i32x4.add(s3, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a3, 64), x), kk)); v128.store32_lane(y0, s3, 0);
          s4 = i32x4.add(s4, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a4, 64), x), kk)); v128.store32_lane(y0, s4, 0);
          s5 = i32x4.add(s5, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a5, 64), x), kk)); v128.store32_lane(y0, s5, 0);
          s6 = i32x4.add(s6, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a6, 64), x), kk)); v128.store32_lane(y0, s6, 0);
          s7 = i32x4.add(s7, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a7, 64), x), kk)); v128.store32_lane(y0, s7, 0);
        }
        {
          const x = v128.or(v128.and(i16x8.shr_u(v128.load(ql, 32), 4), m4), v128.and(i16x8.shr_u(v128.load(qh), 2), m30)), kk = q6_k4(ev);
          s0 = i32x4.add(s0, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq, 96), x), kk)); v128.store32_lane(y0, s0, 0);
          s1 = i32x4.add(s1, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a1, 96), x), kk)); v128.store32_lane(y0, s1, 0);
          s2 = i32x4.add(s2, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a2, 96), x), kk)); v128.store32_lane(y0, s2, 0);
          s3 = i32x4.add(s3, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a3, 96), x), kk)); v128.store32_lane(y0, s3, 0);
          s4 = i32x4.add(s4, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a4, 96), x), kk)); v128.store32_lane(y0, s4, 0);
          s5 = i32x4.add(s5, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a5, 96), x), kk)); v128.store32_lane(y0, s5, 0);
          s6 = i32x4.add(s6, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a6, 96), x), kk)); v128.store32_lane(y0, s6, 0);
          s7 = i32x4.add(s7, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a7, 96), x), kk)); v128.store32_lane(y0, s7, 0);
        }
      }
      {
        const ql = w + 64, qh = w + 160, aq = a + 132;
        {
          const x = v128.or(v128.and(v128.load(ql), m4), v128.and(i16x8.shl(v128.load(qh), 4), m30)), kk = q6_k1(ev2);
          s0 = i32x4.add(s0, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq, 0), x), kk)); v128.store32_lane(y0, s0, 0);
          s1 = i32x4.add(s1, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a1, 0), x), kk)); v128.store32_lane(y0, s1, 0);
          s2 = i32x4.add(s2, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a2, 0), x), kk)); v128.store32_lane(y0, s2, 0);
          s3 = i32x4.add(s3, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a3, 0), x), kk)); v128.store32_lane(y0, s3, 0);
          s4 = i32x4.add(s4, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a4, 0), x), kk)); v128.store32_lane(y0, s4, 0);
          s5 = i32x4.add(s5, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a5, 0), x), kk)); v128.store32_lane(y0, s5, 0);
          s6 = i32x4.add(s6, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a6, 0), x), kk)); v128.store32_lane(y0, s6, 0);
          s7 = i32x4.add(s7, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a7, 0), x), kk)); v128.store32_lane(y0, s7, 0);
        }
        {
          const x = v128.or(v128.and(v128.load(ql, 32), m4), v128.and(i16x8.shl(v128.load(qh), 2), m30)), kk = q6_k2(ev2);
          s0 = i32x4.add(s0, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq, 32), x), kk)); v128.store32_lane(y0, s0, 0);
          s1 = i32x4.add(s1, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a1, 32), x), kk)); v128.store32_lane(y0, s1, 0);
          s2 = i32x4.add(s2, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a2, 32), x), kk)); v128.store32_lane(y0, s2, 0);
          s3 = i32x4.add(s3, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a3, 32), x), kk)); v128.store32_lane(y0, s3, 0);
          s4 = i32x4.add(s4, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a4, 32), x), kk)); v128.store32_lane(y0, s4, 0);
          s5 = i32x4.add(s5, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a5, 32), x), kk)); v128.store32_lane(y0, s5, 0);
          s6 = i32x4.add(s6, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a6, 32), x), kk)); v128.store32_lane(y0, s6, 0);
          s7 = i32x4.add(s7, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a7, 32), x), kk)); v128.store32_lane(y0, s7, 0);
        }
        {
          const x = v128.or(v128.and(i16x8.shr_u(v128.load(ql), 4), m4), v128.and(v128.load(qh), m30)), kk = q6_k3(ev2);
          s0 = i32x4.add(s0, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq, 64), x), kk)); v128.store32_lane(y0, s0, 0);
          s1 = i32x4.add(s1, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a1, 64), x), kk)); v128.store32_lane(y0, s1, 0);
          s2 = i32x4.add(s2, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a2, 64), x), kk)); v128.store32_lane(y0, s2, 0);
          s3 = i32x4.add(s3, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a3, 64), x), kk)); v128.store32_lane(y0, s3, 0);
          s4 = i32x4.add(s4, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a4, 64), x), kk)); v128.store32_lane(y0, s4, 0);
          s5 = i32x4.add(s5, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a5, 64), x), kk)); v128.store32_lane(y0, s5, 0);
          s6 = i32x4.add(s6, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a6, 64), x), kk)); v128.store32_lane(y0, s6, 0);
          s7 = i32x4.add(s7, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a7, 64), x), kk)); v128.store32_lane(y0, s7, 0);
        }
        {
          const x = v128.or(v128.and(i16x8.shr_u(v128.load(ql, 32), 4), m4), v128.and(i16x8.shr_u(v128.load(qh), 2), m30)), kk = q6_k4(ev2);
          s0 = i32x4.add(s0, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq, 96), x), kk)); v128.store32_lane(y0, s0, 0);
          s1 = i32x4.add(s1, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a1, 96), x), kk)); v128.store32_lane(y0, s1, 0);
          s2 = i32x4.add(s2, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a2, 96), x), kk)); v128.store32_lane(y0, s2, 0);
          s3 = i32x4.add(s3, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a3, 96), x), kk)); v128.store32_lane(y0, s3, 0);
          s4 = i32x4.add(s4, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a4, 96), x), kk)); v128.store32_lane(y0, s4, 0);
          s5 = i32x4.add(s5, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a5, 96), x), kk)); v128.store32_lane(y0, s5, 0);
          s6 = i32x4.add(s6, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a6, 96), x), kk)); v128.store32_lane(y0, s6, 0);
          s7 = i32x4.add(s7, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a7, 96), x), kk)); v128.store32_lane(y0, s7, 0);
        }
      }
      c0l = f32x4.relaxed_madd(f32x4.convert_i32x4_s(s0), d0, c0l);
      c1l = f32x4.relaxed_madd(f32x4.convert_i32x4_s(s1), d1, c1l);
      c2l = f32x4.relaxed_madd(f32x4.convert_i32x4_s(s2), d2, c2l);
      c3l = f32x4.relaxed_madd(f32x4.convert_i32x4_s(s3), d3, c3l);
      c4l = f32x4.relaxed_madd(f32x4.convert_i32x4_s(s4), d4, c4l);
      c5l = f32x4.relaxed_madd(f32x4.convert_i32x4_s(s5), d5, c5l);
      c6l = f32x4.relaxed_madd(f32x4.convert_i32x4_s(s6), d6, c6l);
      c7l = f32x4.relaxed_madd(f32x4.convert_i32x4_s(s7), d7, c7l);
    }
    {
      let s0 = q6_mins(s16l, s16h, a, true), s1 = q6_mins(s16l, s16h, a + a1, true), s2 = q6_mins(s16l, s16h, a + a2, true), s3 = q6_mins(s16l, s16h, a + a3, true), s4 = q6_mins(s16l, s16h, a + a4, true), s5 = q6_mins(s16l, s16h, a + a5, true), s6 = q6_mins(s16l, s16h, a + a6, true), s7 = q6_mins(s16l, s16h, a + a7, true);
      {
        const ql = w + 16, qh = w + 144, aq = a + 20;
        {
          const x = v128.or(v128.and(v128.load(ql), m4), v128.and(i16x8.shl(v128.load(qh), 4), m30)), kk = q6_k1(od);
          s0 = i32x4.add(s0, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq, 0), x), kk)); v128.store32_lane(y0, s0, 0);
          s1 = i32x4.add(s1, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a1, 0), x), kk)); v128.store32_lane(y0, s1, 0);
          s2 = i32x4.add(s2, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a2, 0), x), kk)); v128.store32_lane(y0, s2, 0);
          s3 = i32x4.add(s3, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a3, 0), x), kk)); v128.store32_lane(y0, s3, 0);
          s4 = i32x4.add(s4, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a4, 0), x), kk)); v128.store32_lane(y0, s4, 0);
          s5 = i32x4.add(s5, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a5, 0), x), kk)); v128.store32_lane(y0, s5, 0);
          s6 = i32x4.add(s6, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a6, 0), x), kk)); v128.store32_lane(y0, s6, 0);
          s7 = i32x4.add(s7, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a7, 0), x), kk)); v128.store32_lane(y0, s7, 0);
        }
        {
          const x = v128.or(v128.and(v128.load(ql, 32), m4), v128.and(i16x8.shl(v128.load(qh), 2), m30)), kk = q6_k2(od);
          s0 = i32x4.add(s0, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq, 32), x), kk)); v128.store32_lane(y0, s0, 0);
          s1 = i32x4.add(s1, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a1, 32), x), kk)); v128.store32_lane(y0, s1, 0);
          s2 = i32x4.add(s2, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a2, 32), x), kk)); v128.store32_lane(y0, s2, 0);
          s3 = i32x4.add(s3, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a3, 32), x), kk)); v128.store32_lane(y0, s3, 0);
          s4 = i32x4.add(s4, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a4, 32), x), kk)); v128.store32_lane(y0, s4, 0);
          s5 = i32x4.add(s5, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a5, 32), x), kk)); v128.store32_lane(y0, s5, 0);
          s6 = i32x4.add(s6, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a6, 32), x), kk)); v128.store32_lane(y0, s6, 0);
          s7 = i32x4.add(s7, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a7, 32), x), kk)); v128.store32_lane(y0, s7, 0);
        }
        {
          const x = v128.or(v128.and(i16x8.shr_u(v128.load(ql), 4), m4), v128.and(v128.load(qh), m30)), kk = q6_k3(od);
          s0 = i32x4.add(s0, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq, 64), x), kk)); v128.store32_lane(y0, s0, 0);
          s1 = i32x4.add(s1, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a1, 64), x), kk)); v128.store32_lane(y0, s1, 0);
          s2 = i32x4.add(s2, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a2, 64), x), kk)); v128.store32_lane(y0, s2, 0);
          s3 = i32x4.add(s3, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a3, 64), x), kk)); v128.store32_lane(y0, s3, 0);
          s4 = i32x4.add(s4, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a4, 64), x), kk)); v128.store32_lane(y0, s4, 0);
          s5 = i32x4.add(s5, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a5, 64), x), kk)); v128.store32_lane(y0, s5, 0);
          s6 = i32x4.add(s6, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a6, 64), x), kk)); v128.store32_lane(y0, s6, 0);
          s7 = i32x4.add(s7, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a7, 64), x), kk)); v128.store32_lane(y0, s7, 0);
        }
        {
          const x = v128.or(v128.and(i16x8.shr_u(v128.load(ql, 32), 4), m4), v128.and(i16x8.shr_u(v128.load(qh), 2), m30)), kk = q6_k4(od);
          s0 = i32x4.add(s0, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq, 96), x), kk)); v128.store32_lane(y0, s0, 0);
          s1 = i32x4.add(s1, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a1, 96), x), kk)); v128.store32_lane(y0, s1, 0);
          s2 = i32x4.add(s2, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a2, 96), x), kk)); v128.store32_lane(y0, s2, 0);
          s3 = i32x4.add(s3, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a3, 96), x), kk)); v128.store32_lane(y0, s3, 0);
          s4 = i32x4.add(s4, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a4, 96), x), kk)); v128.store32_lane(y0, s4, 0);
          s5 = i32x4.add(s5, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a5, 96), x), kk)); v128.store32_lane(y0, s5, 0);
          s6 = i32x4.add(s6, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a6, 96), x), kk)); v128.store32_lane(y0, s6, 0);
          s7 = i32x4.add(s7, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a7, 96), x), kk)); v128.store32_lane(y0, s7, 0);
        }
      }
      {
        const ql = w + 80, qh = w + 176, aq = a + 148;
        {
          const x = v128.or(v128.and(v128.load(ql), m4), v128.and(i16x8.shl(v128.load(qh), 4), m30)), kk = q6_k1(od2);
          s0 = i32x4.add(s0, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq, 0), x), kk)); v128.store32_lane(y0, s0, 0);
          s1 = i32x4.add(s1, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a1, 0), x), kk)); v128.store32_lane(y0, s1, 0);
          s2 = i32x4.add(s2, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a2, 0), x), kk)); v128.store32_lane(y0, s2, 0);
          s3 = i32x4.add(s3, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a3, 0), x), kk)); v128.store32_lane(y0, s3, 0);
          s4 = i32x4.add(s4, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a4, 0), x), kk)); v128.store32_lane(y0, s4, 0);
          s5 = i32x4.add(s5, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a5, 0), x), kk)); v128.store32_lane(y0, s5, 0);
          s6 = i32x4.add(s6, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a6, 0), x), kk)); v128.store32_lane(y0, s6, 0);
          s7 = i32x4.add(s7, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a7, 0), x), kk)); v128.store32_lane(y0, s7, 0);
        }
        {
          const x = v128.or(v128.and(v128.load(ql, 32), m4), v128.and(i16x8.shl(v128.load(qh), 2), m30)), kk = q6_k2(od2);
          s0 = i32x4.add(s0, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq, 32), x), kk)); v128.store32_lane(y0, s0, 0);
          s1 = i32x4.add(s1, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a1, 32), x), kk)); v128.store32_lane(y0, s1, 0);
          s2 = i32x4.add(s2, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a2, 32), x), kk)); v128.store32_lane(y0, s2, 0);
          s3 = i32x4.add(s3, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a3, 32), x), kk)); v128.store32_lane(y0, s3, 0);
          s4 = i32x4.add(s4, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a4, 32), x), kk)); v128.store32_lane(y0, s4, 0);
          s5 = i32x4.add(s5, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a5, 32), x), kk)); v128.store32_lane(y0, s5, 0);
          s6 = i32x4.add(s6, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a6, 32), x), kk)); v128.store32_lane(y0, s6, 0);
          s7 = i32x4.add(s7, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a7, 32), x), kk)); v128.store32_lane(y0, s7, 0);
        }
        {
          const x = v128.or(v128.and(i16x8.shr_u(v128.load(ql), 4), m4), v128.and(v128.load(qh), m30)), kk = q6_k3(od2);
          s0 = i32x4.add(s0, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq, 64), x), kk)); v128.store32_lane(y0, s0, 0);
          s1 = i32x4.add(s1, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a1, 64), x), kk)); v128.store32_lane(y0, s1, 0);
          s2 = i32x4.add(s2, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a2, 64), x), kk)); v128.store32_lane(y0, s2, 0);
          s3 = i32x4.add(s3, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a3, 64), x), kk)); v128.store32_lane(y0, s3, 0);
          s4 = i32x4.add(s4, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a4, 64), x), kk)); v128.store32_lane(y0, s4, 0);
          s5 = i32x4.add(s5, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a5, 64), x), kk)); v128.store32_lane(y0, s5, 0);
          s6 = i32x4.add(s6, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a6, 64), x), kk)); v128.store32_lane(y0, s6, 0);
          s7 = i32x4.add(s7, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a7, 64), x), kk)); v128.store32_lane(y0, s7, 0);
        }
        {
          const x = v128.or(v128.and(i16x8.shr_u(v128.load(ql, 32), 4), m4), v128.and(i16x8.shr_u(v128.load(qh), 2), m30)), kk = q6_k4(od2);
          s0 = i32x4.add(s0, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq, 96), x), kk)); v128.store32_lane(y0, s0, 0);
          s1 = i32x4.add(s1, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a1, 96), x), kk)); v128.store32_lane(y0, s1, 0);
          s2 = i32x4.add(s2, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a2, 96), x), kk)); v128.store32_lane(y0, s2, 0);
          s3 = i32x4.add(s3, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a3, 96), x), kk)); v128.store32_lane(y0, s3, 0);
          s4 = i32x4.add(s4, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a4, 96), x), kk)); v128.store32_lane(y0, s4, 0);
          s5 = i32x4.add(s5, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a5, 96), x), kk)); v128.store32_lane(y0, s5, 0);
          s6 = i32x4.add(s6, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a6, 96), x), kk)); v128.store32_lane(y0, s6, 0);
          s7 = i32x4.add(s7, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(aq + a7, 96), x), kk)); v128.store32_lane(y0, s7, 0);
        }
      }
      c0h = f32x4.relaxed_madd(f32x4.convert_i32x4_s(s0), d0, c0h);
      c1h = f32x4.relaxed_madd(f32x4.convert_i32x4_s(s1), d1, c1h);
      c2h = f32x4.relaxed_madd(f32x4.convert_i32x4_s(s2), d2, c2h);
      c3h = f32x4.relaxed_madd(f32x4.convert_i32x4_s(s3), d3, c3h);
      c4h = f32x4.relaxed_madd(f32x4.convert_i32x4_s(s4), d4, c4h);
      c5h = f32x4.relaxed_madd(f32x4.convert_i32x4_s(s5), d5, c5h);
      c6h = f32x4.relaxed_madd(f32x4.convert_i32x4_s(s6), d6, c6h);
      c7h = f32x4.relaxed_madd(f32x4.convert_i32x4_s(s7), d7, c7h);
    }
    w += 210; a += 292;
  }
  store<f32>(y0, hsum_float_8(c0l, c0h));
  store<f32>(y1, hsum_float_8(c1l, c1h));
  store<f32>(y2, hsum_float_8(c2l, c2h));
  store<f32>(y3, hsum_float_8(c3l, c3h));
  store<f32>(y4, hsum_float_8(c4l, c4h));
  store<f32>(y5, hsum_float_8(c5l, c5h));
  store<f32>(y6, hsum_float_8(c6l, c6h));
  store<f32>(y7, hsum_float_8(c7l, c7h));
}
export function mm_q6_K(r0: i32, r1: i32, w: usize, ws: usize, a: usize, as: usize, nTok: i32, y: usize, ys: usize, nb: i32, ax: usize, axs: usize): void {
  const wend = w + <usize>r1 * ws;
  // the 8-token GEMM in blocks of g8_tokens(as) tokens: their activation rows stay in L2 while the thread's
  // weight rows pass over them once per block (before, all tokens per 8-row tile: the activations streamed
  // from L3 once per tile)
  let t8 = 0;
  const G8_TOK = g8_tokens(as);
  if (ASC_FEATURE_RELAXED_SIMD) {
    t8 = nTok & ~7;
    for (let tb = 0; tb < t8; tb += G8_TOK) {
      const te = min(tb + G8_TOK, t8);
      for (let rt = r0; rt < r1; rt += ROW_TILE) {
        const re = min(rt + ROW_TILE, r1);
        for (let t = tb; t < te; t += 8) {
          const at = a + <usize>t * as, yt = y + <usize>t * ys;
          for (let r = rt; r < re; r++) dot8t_q6_K(w + <usize>r * ws, at, as, nb, yt + (<usize>r << 2), ys);
        }
      }
    }
  }
  for (let rt = r0; rt < r1; rt += ROW_TILE) {
    const re = min(rt + ROW_TILE, r1);
    let t = t8;
    // relaxed SIMD: 4 tokens per weight decode in dot_q6_K's own order (the pairs' i16 path is slower there)
    if (ASC_FEATURE_RELAXED_SIMD) {
      for (; t + 4 <= nTok; t += 4) {
        const at = a + <usize>t * as, yt = y + <usize>t * ys;
        // no touch-ahead (touch.ts) in the multi-token loops: compute-bound, the hardware prefetcher keeps up
        // (CPU-time A/B on the AMD EPYC from DRAM, 1 thread, without the 16 KiB row bursts: tok=4 1.2-1.45x,
        // tok=2/3 1.4-1.6x; 1-2 KiB ahead measured between the two)
        for (let r = rt; r < re; r++) dot4v_q6_K(w + <usize>r * ws, at, as, nb, yt + (<usize>r << 2), ys);
      }
      if (nTok - t >= 2) {
        const at = a + <usize>t * as, yt = y + <usize>t * ys;
        const three = nTok - t == 3;
        for (let r = rt; r < re; r++) {
          const p = w + <usize>r * ws;
          if (three) dot3v_q6_K(p, at, as, nb, yt + (<usize>r << 2), ys);
          else dot2v_q6_K(p, at, as, nb, yt + (<usize>r << 2), ys);
        }
        t = nTok;
      }
    }
    for (; t + 2 <= nTok; t += 2) {
      const at = a + <usize>t * as, xt = ax + <usize>t * axs, yt = y + <usize>t * ys;
      for (let r = rt; r < re; r++) dot2t_q6_K(w + <usize>r * ws, at, as, xt, axs, nb, yt + (<usize>r << 2), ys);
    }
    for (; t < nTok; t++) {
      const at = a + <usize>t * as, xt = ax + <usize>t * axs, yt = y + <usize>t * ys;
      for (let r = rt; r < re; r++) {
        const p = w + <usize>r * ws;
        if (ASC_FEATURE_RELAXED_SIMD) {
          const yr = yt + (<usize>r << 2);
          // the rows whose touches all stay below the range's end skip the per-block clamp
          if (p + ws + Q6K_TOUCH <= wend) store<f32>(yr, dot_q6_K_rx(p, at, nb, yr, 0, false));
          else store<f32>(yr, dot_q6_K_rx(p, at, nb, yr, wend - 196, true));
          continue;
        }
        store<u32>(yt + (<usize>r << 2), touch_ahead(p, ws, wend));
        store<f32>(yt + (<usize>r << 2), dot_q6_K(p, at, xt, nb));
      }
    }
  }
}
