import { f2h, f2h4, h2f, h2f4 } from '../common/f16';
import { hmax_f32x4, hsum_i32x4 } from '../common/simd';

// element conversions (element ranges)
export function cvt_f32_f16(i0: i32, i1: i32, x: usize, y: usize): void {
  let i = i0;
  for (; i + 8 <= i1; i += 8) {
    const a = f2h4(v128.load(x + (<usize>i << 2)));
    const b = f2h4(v128.load(x + (<usize>i << 2), 16));
    v128.store(y + (<usize>i << 1), i16x8.narrow_i32x4_u(a, b));
  }
  for (; i < i1; i++) store<u16>(y + (<usize>i << 1), <u16>f2h(load<f32>(x + (<usize>i << 2))));
}
// y = f32(f16(x)): activations as ggml sees them when it converts them to f16 for an F16 matmul
export function round_f16(i0: i32, i1: i32, x: usize, y: usize): void {
  let i = i0;
  for (; i + 4 <= i1; i += 4) v128.store(y + (<usize>i << 2), h2f4(f2h4(v128.load(x + (<usize>i << 2)))));
  for (; i < i1; i++) store<f32>(y + (<usize>i << 2), h2f(f2h(load<f32>(x + (<usize>i << 2)))));
}

// ---------------------------------------------------------------------------------------------
// activation quantizers; rows [r0, r1) of n values, x row stride xs bytes, y row stride ys bytes
// Q8_0 as ggml-cpu's x86 quantize_row_q8_0: d = amax/127 stored as f16, q = nearest_even(x * 127/amax)
@inline export function q8_0_block(x: usize, y: usize, sum: bool): void {
  const v0 = v128.load(x), v1 = v128.load(x, 16), v2 = v128.load(x, 32), v3 = v128.load(x, 48);
  const v4 = v128.load(x, 64), v5 = v128.load(x, 80), v6 = v128.load(x, 96), v7 = v128.load(x, 112);
  let m = f32x4.max(f32x4.max(f32x4.abs(v0), f32x4.abs(v1)), f32x4.max(f32x4.abs(v2), f32x4.abs(v3)));
  m = f32x4.max(m, f32x4.max(f32x4.max(f32x4.abs(v4), f32x4.abs(v5)), f32x4.max(f32x4.abs(v6), f32x4.abs(v7))));
  const amax = hmax_f32x4(m);
  const d: f32 = amax / 127.0;
  const id: f32 = amax != 0 ? <f32>127.0 / amax : 0;
  store<u16>(y, <u16>f2h(d));
  const s = f32x4.splat(id);
  const q0 = i32x4.trunc_sat_f32x4_s(f32x4.nearest(f32x4.mul(v0, s)));
  const q1 = i32x4.trunc_sat_f32x4_s(f32x4.nearest(f32x4.mul(v1, s)));
  const q2 = i32x4.trunc_sat_f32x4_s(f32x4.nearest(f32x4.mul(v2, s)));
  const q3 = i32x4.trunc_sat_f32x4_s(f32x4.nearest(f32x4.mul(v3, s)));
  const q4 = i32x4.trunc_sat_f32x4_s(f32x4.nearest(f32x4.mul(v4, s)));
  const q5 = i32x4.trunc_sat_f32x4_s(f32x4.nearest(f32x4.mul(v5, s)));
  const q6 = i32x4.trunc_sat_f32x4_s(f32x4.nearest(f32x4.mul(v6, s)));
  const q7 = i32x4.trunc_sat_f32x4_s(f32x4.nearest(f32x4.mul(v7, s)));
  const a = i16x8.narrow_i32x4_s(q0, q1), b = i16x8.narrow_i32x4_s(q2, q3);
  const c = i16x8.narrow_i32x4_s(q4, q5), e = i16x8.narrow_i32x4_s(q6, q7);
  const off: usize = sum ? 4 : 2;
  v128.store(y + off, i8x16.narrow_i16x8_s(a, b));
  v128.store(y + off, i8x16.narrow_i16x8_s(c, e), 16);
  if (sum) {
    const t = i32x4.add(i32x4.add(i32x4.add(q0, q1), i32x4.add(q2, q3)), i32x4.add(i32x4.add(q4, q5), i32x4.add(q6, q7)));
    store<u16>(y, <u16>f2h(d * <f32>hsum_i32x4(t)), 2);
  }
}
export function quantize_q8_0(r0: i32, r1: i32, x: usize, xs: usize, y: usize, ys: usize, n: i32): void {
  for (let r = r0; r < r1; r++) {
    let xp = x + <usize>r * xs, yp = y + <usize>r * ys;
    const end = xp + (<usize>n << 2);
    while (xp < end) { q8_0_block(xp, yp, false); xp += 128; yp += 34; }
  }
}
// Q8_1 as ggml-cpu's x86 quantize_row_q8_1: as Q8_0 plus s = f16(d * sum(q))
export function quantize_q8_1(r0: i32, r1: i32, x: usize, xs: usize, y: usize, ys: usize, n: i32): void {
  for (let r = r0; r < r1; r++) {
    let xp = x + <usize>r * xs, yp = y + <usize>r * ys;
    const end = xp + (<usize>n << 2);
    while (xp < end) { q8_0_block(xp, yp, true); xp += 128; yp += 36; }
  }
}
// Q8_K as ggml's quantize_row_q8_K_ref: max = the first value of largest magnitude, iscale = -127/max,
// q = min(127, nearest_even(iscale*x)), d = 1/iscale, bsums = sums of 16
// Rows r < tieRows follow ggml_quantize_mat_q8_K_4x8 (the repacked Q4_K GEMM's quantizer), which takes
// max = +amax whenever +amax occurs in the block.
export function quantize_q8_K(r0: i32, r1: i32, x: usize, xs: usize, y: usize, ys: usize, n: i32, tieRows: i32): void {
  for (let r = r0; r < r1; r++) {
    let xp = x + <usize>r * xs, yp = y + <usize>r * ys;
    const end = xp + (<usize>n << 2);
    while (xp < end) {
      let m = f32x4.splat(0);
      for (let j: usize = 0; j < 1024; j += 16) m = f32x4.max(m, f32x4.abs(v128.load(xp + j)));
      const amax = hmax_f32x4(m);
      if (amax == 0) {
        store<f32>(yp, 0);
        memory.fill(yp + 4, 0, 288);
      } else {
        let mx: f32 = 0;
        for (let j: usize = 0; j < 1024; j += 4) { const v = load<f32>(xp + j); if (Mathf.abs(v) == amax) { mx = v; break; } }
        if (r < tieRows && mx < 0) for (let j: usize = 0; j < 1024; j += 4) if (load<f32>(xp + j) == amax) { mx = amax; break; }
        const iscale: f32 = <f32>-127.0 / mx;
        const s = f32x4.splat(iscale);
        const lim = i32x4.splat(127);
        for (let j: usize = 0; j < 16; j++) {
          const p = xp + (j << 6);
          const q0 = i32x4.min_s(i32x4.trunc_sat_f32x4_s(f32x4.nearest(f32x4.mul(v128.load(p), s))), lim);
          const q1 = i32x4.min_s(i32x4.trunc_sat_f32x4_s(f32x4.nearest(f32x4.mul(v128.load(p, 16), s))), lim);
          const q2 = i32x4.min_s(i32x4.trunc_sat_f32x4_s(f32x4.nearest(f32x4.mul(v128.load(p, 32), s))), lim);
          const q3 = i32x4.min_s(i32x4.trunc_sat_f32x4_s(f32x4.nearest(f32x4.mul(v128.load(p, 48), s))), lim);
          v128.store(yp + 4 + (j << 4), i8x16.narrow_i16x8_s(i16x8.narrow_i32x4_s(q0, q1), i16x8.narrow_i32x4_s(q2, q3)));
          store<i16>(yp + 260 + (j << 1), <i16>hsum_i32x4(i32x4.add(i32x4.add(q0, q1), i32x4.add(q2, q3))));
        }
        store<f32>(yp, <f32>1.0 / iscale);
      }
      xp += 1024; yp += 292;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// quantized matmul: y[t][r] = dot(w row r, a row t) for r in [r0, r1), t in [0, nTok)
// w: weight rows (ws bytes apart), a: quantized activations (as bytes apart), y: f32 (ys bytes per token)
// nb: blocks per row
// Q8_0 activation side table ("aux"), per activation row (20*nb bytes): f32 d[nb] (the f16 scale widened),
// then per block an i32x4 (8*sum(q), 0, 0, 0), so the kernels convert no activation scales and fold Q4_0's
// -8 offset out of the inner loop (one vector subtract per block instead of an offset per value).
export function q8_0_aux(r0: i32, r1: i32, a: usize, as: usize, ax: usize, axs: usize, nb: i32): void {
  for (let r = r0; r < r1; r++) {
    let ap = a + <usize>r * as;
    const xp = ax + <usize>r * axs;
    for (let b: usize = 0; b < <usize>nb; b++) {
      store<f32>(xp + (b << 2), h2f(load<u16>(ap)));
      const q0 = v128.load(ap, 2), q1 = v128.load(ap, 18);
      const s16 = i16x8.add(i16x8.extadd_pairwise_i8x16_s(q0), i16x8.extadd_pairwise_i8x16_s(q1));
      v128.store(xp + (<usize>nb << 2) + (b << 4), i32x4.replace_lane(i32x4.splat(0), 0, hsum_i32x4(i32x4.extadd_pairwise_i16x8_s(s16)) << 3));
      const wp = xp + (<usize>nb * 20) + (b << 6);
      v128.store(wp, i16x8.extend_low_i8x16_s(q0)); v128.store(wp, i16x8.extend_high_i8x16_s(q0), 16);
      v128.store(wp, i16x8.extend_low_i8x16_s(q1), 32); v128.store(wp, i16x8.extend_high_i8x16_s(q1), 48);
      ap += 34;
    }
  }
}
// Q8_K activation side table: the 256 quants of each block widened to i16 (512 B per block), so the
// K-quant kernels load activations as plain vectors
export function q8_K_aux(r0: i32, r1: i32, a: usize, as: usize, ax: usize, axs: usize, nb: i32): void {
  // per activation row: the quants widened to i16 (512 B per block), then per block the sums of every 2
  // consecutive quants times -4 as i16 (256 B per block, at nb * 512): Q3_K's -4 offset per AVX2 i16 pair
  for (let r = r0; r < r1; r++) {
    let ap = a + <usize>r * as + 4, xp = ax + <usize>r * axs, op = xp + (<usize>nb << 9);
    for (let b = 0; b < nb; b++) {
      for (let j: usize = 0; j < 256; j += 16) {
        const v = v128.load(ap + j);
        const lo = i16x8.extend_low_i8x16_s(v), hi = i16x8.extend_high_i8x16_s(v);
        v128.store(xp + (j << 1), lo);
        v128.store(xp + (j << 1), hi, 16);
        v128.store(op + j, i16x8.mul(i16x8.extadd_pairwise_i8x16_s(v), i16x8.splat(-4)));
      }
      ap += 292; xp += 512; op += 256;
    }
  }
}
// Q8_K rows of 4 tokens interleaved (the relaxed build's Q4_K GEMM, mm/q4_k.ts dot8t_q4_K_x): groups [g0, g1)
// of 4 activation rows (token 4g + i at a + (4g + i) * as), group g at x + g * nb * 1104, per block 1104 B:
// f32 d[4] (lane = token), then per 64-value chunk c 16 B of i16 [B(2c), B(2c+1)] per token (B(j): the sum
// of sub-block j's two bsums, |B| <= 4096), then per 4 values p (64) 16 B: token i's quants 4p..4p+3 in i32 lane i
export function q8_K_x4(g0: i32, g1: i32, a: usize, as: usize, x: usize, nb: i32): void {
  for (let g = g0; g < g1; g++) {
    let a0 = a + <usize>(g << 2) * as, xp = x + <usize>g * <usize>nb * 1104;
    const a1 = a0 + as, a2 = a1 + as, a3 = a2 + as;
    for (let b = 0; b < nb; b++) {
      const o = <usize>b * 292;
      v128.store(xp, v128.load32_lane(a3 + o, v128.load32_lane(a2 + o, v128.load32_lane(a1 + o, v128.load32_zero(a0 + o), 1), 2), 3));
      // B(j) per token, i32 lane c = [B(2c), B(2c+1)]
      const b0 = i16x8.add(i8x16.shuffle(v128.load(a0 + o, 260), v128.load(a0 + o, 276), 0, 1, 4, 5, 8, 9, 12, 13, 16, 17, 20, 21, 24, 25, 28, 29), i8x16.shuffle(v128.load(a0 + o, 260), v128.load(a0 + o, 276), 2, 3, 6, 7, 10, 11, 14, 15, 18, 19, 22, 23, 26, 27, 30, 31));
      const b1 = i16x8.add(i8x16.shuffle(v128.load(a1 + o, 260), v128.load(a1 + o, 276), 0, 1, 4, 5, 8, 9, 12, 13, 16, 17, 20, 21, 24, 25, 28, 29), i8x16.shuffle(v128.load(a1 + o, 260), v128.load(a1 + o, 276), 2, 3, 6, 7, 10, 11, 14, 15, 18, 19, 22, 23, 26, 27, 30, 31));
      const b2 = i16x8.add(i8x16.shuffle(v128.load(a2 + o, 260), v128.load(a2 + o, 276), 0, 1, 4, 5, 8, 9, 12, 13, 16, 17, 20, 21, 24, 25, 28, 29), i8x16.shuffle(v128.load(a2 + o, 260), v128.load(a2 + o, 276), 2, 3, 6, 7, 10, 11, 14, 15, 18, 19, 22, 23, 26, 27, 30, 31));
      const b3 = i16x8.add(i8x16.shuffle(v128.load(a3 + o, 260), v128.load(a3 + o, 276), 0, 1, 4, 5, 8, 9, 12, 13, 16, 17, 20, 21, 24, 25, 28, 29), i8x16.shuffle(v128.load(a3 + o, 260), v128.load(a3 + o, 276), 2, 3, 6, 7, 10, 11, 14, 15, 18, 19, 22, 23, 26, 27, 30, 31));
      x4_transpose(xp + 16, b0, b1, b2, b3);
      for (let j: usize = 0; j < 256; j += 16) {
        x4_transpose(xp + 80 + (j << 2), v128.load(a0 + o + 4 + j), v128.load(a1 + o + 4 + j), v128.load(a2 + o + 4 + j), v128.load(a3 + o + 4 + j));
      }
      xp += 1104;
    }
  }
}
// 4x4 transpose of i32 lanes: row k of the output (at y + 16k) = lane k of v0..v3
@inline function x4_transpose(y: usize, v0: v128, v1: v128, v2: v128, v3: v128): void {
  const u0 = i32x4.shuffle(v0, v1, 0, 4, 1, 5), u1 = i32x4.shuffle(v2, v3, 0, 4, 1, 5);
  const u2 = i32x4.shuffle(v0, v1, 2, 6, 3, 7), u3 = i32x4.shuffle(v2, v3, 2, 6, 3, 7);
  v128.store(y, v128.shuffle<u64>(u0, u1, 0, 2));
  v128.store(y, v128.shuffle<u64>(u0, u1, 1, 3), 16);
  v128.store(y, v128.shuffle<u64>(u2, u3, 0, 2), 32);
  v128.store(y, v128.shuffle<u64>(u2, u3, 1, 3), 48);
}
// Q8_1 activation side table, per activation row (8*nb bytes): f32 d[nb], then f32 s[nb] (the f16 fields widened)
export function q8_1_aux(r0: i32, r1: i32, a: usize, as: usize, ax: usize, axs: usize, nb: i32): void {
  for (let r = r0; r < r1; r++) {
    let ap = a + <usize>r * as;
    const xp = ax + <usize>r * axs;
    for (let b: usize = 0; b < <usize>nb; b++) {
      store<f32>(xp + (b << 2), h2f(load<u16>(ap)));
      store<f32>(xp + (<usize>nb << 2) + (b << 2), h2f(load<u16>(ap, 2)));
      ap += 36;
    }
  }
}
// y = f32(bf16(x)) with round to nearest even (NaN kept quiet), as ggml's f32 -> bf16
export function round_bf16(i0: i32, i1: i32, x: usize, y: usize): void {
  for (let i = i0; i < i1; i++) {
    const u = load<u32>(x + (<usize>i << 2));
    let h: u32;
    if ((u & 0x7fffffff) > 0x7f800000) h = ((u >> 16) | 64) & 0xffff;
    else h = (u + 0x7fff + ((u >> 16) & 1)) >> 16;
    store<u32>(y + (<usize>i << 2), h << 16);
  }
}

// F32 and F16 weights, in the two orders of llama.cpp's x86 build (src/backends/reference/matmul.ts):
// - a batch (nTok >= 2, n % 16 == 0): llamafile's tinyBLAS, 16 lanes (lane l: elements l, l+16, ...)
//   accumulated with FMA, then _mm512_reduce_add_ps;
// - one token: ggml_vec_dot_f32/_f16, 64 lanes (4 accumulators x 16) over 64-element steps, combined
//   as (0+2)+(1+3), reduce_add, then the tail (f32 for F32, double for F16).
// F16 x f16-rounded activations: the products are exact in f32, so FMA = an f32 add of the product.
