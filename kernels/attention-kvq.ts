import { AG_GQA, AG_HEAD_DIM, AG_K, AG_KV_Q4, AG_KV_STRIDE, AG_N_HEAD, AG_OUT, AG_OUT_STRIDE, AG_POSITIONS, AG_Q, AG_Q_STRIDE, AG_SCALE, AG_SCRATCH, AG_SCRATCH_BYTES, AG_SEQ_STRIDE, AG_SLICE, AG_SOFTCAP, AG_V, AG_WINDOW } from './abi';
import { q8_0_block } from './act/quantize';
import { h2f } from './common/f16';
import { f32x4_of, fma2, fma2_tie, hi_f64, hsum_float_8, lo_f64, round2, tie_any } from './common/fmaf';
import { expf_glibc } from './common/glibc';
import { tanhf } from './common/libm';
import { window_start } from './common/window';
import { q8_0_lanes, q8_0_lanes_hi } from './mm/q8_0';

// ---------------------------------------------------------------------------------------------
// Flash attention over a q8_0 (or q4_0: AG_KV_Q4) K and V cache with llama.cpp's numerics (one-chunk kernel, x86 build; the
// TypeScript twin is src/backends/reference/attention-kvq.ts flashAttentionKvq), one work item = (query token,
// head): the query head quantized to q8_0 as quantize_row_q8_0 (x86); per cache row j of [window start, own
// position]: s = ggml_vec_dot_q8_0_q8_0(K_j, Q) (8 int32 lanes per block, an FMA chain per lane, hsum_float_8)
// * scale (softcap: scale / cap, then cap * tanhf); online softmax with glibc expf; a new maximum rescales the
// f32 accumulator (plain multiplies), V_j dequantized (q * d, exact) and fused-multiply-added by vs; S = S*ms + vs
// in two roundings. Output VKQ * f32(1 / S). A q4_0 block is first unpacked to a q8_0-shaped block of
// nibble - 8 values (ggml's x86 q4_0 dot has the same lanes). Same parameter block as attn_flash (AG_*;
// AG_KV_STRIDE = bytes per cache row). Head size % 32 == 0. Scratch per thread: the quantized query (head/32 *
// 34 bytes, rounded to 16), a K row unpacked from q4_0 (the same size) and the accumulator (head f32).
export function attn_flash_q8(r0: i32, r1: i32, pp: usize): void {
  const q = <usize>load<i32>(pp, AG_Q), qs = <usize>load<i32>(pp, AG_Q_STRIDE), k = <usize>load<i32>(pp, AG_K), v = <usize>load<i32>(pp, AG_V);
  const kvs = <usize>load<i32>(pp, AG_KV_STRIDE), o = <usize>load<i32>(pp, AG_OUT), os = <usize>load<i32>(pp, AG_OUT_STRIDE);
  const nHead = load<i32>(pp, AG_N_HEAD), gqa = load<i32>(pp, AG_GQA), hd = load<i32>(pp, AG_HEAD_DIM);
  const window = load<i32>(pp, AG_WINDOW), pos = <usize>load<i32>(pp, AG_POSITIONS), slice = load<i32>(pp, AG_SLICE);
  const stride = load<i32>(pp, AG_SEQ_STRIDE);
  const cap = load<f32>(pp, AG_SOFTCAP);
  const scale: f32 = cap > 0 ? load<f32>(pp, AG_SCALE) / cap : load<f32>(pp, AG_SCALE);
  const q4 = load<i32>(pp, AG_KV_Q4) != 0, bb: usize = q4 ? 18 : 34;
  const nb = hd >> 5, headBytes = <usize>nb * bb, qBytes = <usize>nb * 34;
  const scr = <usize>load<i32>(pp, AG_SCRATCH) + <usize>(r0 / slice) * <usize>load<i32>(pp, AG_SCRATCH_BYTES);
  const qb = (qBytes + 15) & ~15, qq = scr, ub = scr + qb, acc = ub + qb;
  const hb = <usize>hd << 2;
  for (let r = r0; r < r1; r++) {
    const t = r / nHead, h = r - t * nHead;
    const kvo = <usize>(h / gqa) * headBytes;
    const p0 = load<i32>(pos + (<usize>t << 2));
    const lo = window_start(p0, stride, window);
    const qp = q + <usize>t * qs + <usize>h * hb;
    for (let b: usize = 0; b < <usize>nb; b++) q8_0_block(qp + (b << 7), qq + b * 34, false);
    for (let i: usize = 0; i < hb; i += 16) v128.store(acc + i, f32x4.splat(0));
    let m: f32 = -Infinity, sum: f32 = 0;
    for (let j = lo; j <= p0; j++) {
      let s = (q4 ? dot_q4_0_q8_0(k + <usize>j * kvs + kvo, qq, nb, ub) : dot_q8_0_q8_0(k + <usize>j * kvs + kvo, qq, nb)) * scale;
      if (cap > 0) s = cap * tanhf(s);
      let ms: f32 = 1, vs: f32 = 1;
      if (s > m) {
        ms = expf_glibc(m - s);
        m = s;
        const mv = f32x4.splat(ms);
        for (let i: usize = 0; i < hb; i += 16) v128.store(acc + i, f32x4.mul(v128.load(acc + i), mv));
      } else {
        vs = expf_glibc(s - m);
      }
      // VKQ = fmaf(q * d, vs, VKQ): q * d is exact in f32 (8 x 11 bits), its product by vs exact in f64
      let vp = v + <usize>j * kvs + kvo, ap = acc;
      const vd = f64x2.splat(<f64>vs), vs4 = f32x4.splat(vs);
      for (let b = 0; b < nb; b++) {
        const d = f32x4.splat(h2f(load<u16>(vp)));
        const qp = q4 ? unpack_q4_0(vp, ub) : vp;
        for (let g: usize = 0; g < 32; g += 4) {
          const vv = f32x4.mul(f32x4.convert_i32x4_s(i32x4.extend_low_i16x8_s(i16x8.extend_low_i8x16_s(v128.load32_zero(qp + 2 + g)))), d);
          const a = v128.load(ap);
          // relaxed build: relaxed_madd is fused (checked at start-up): fmaf on 4 lanes, the same bits
          if (ASC_FEATURE_RELAXED_SIMD) v128.store(ap, f32x4.relaxed_madd(vv, vs4, a));
          else v128.store(ap, f32x4_of(fma2(f64x2.mul(lo_f64(vv), vd), lo_f64(a)), fma2(f64x2.mul(hi_f64(vv), vd), hi_f64(a))));
          ap += 16;
        }
        vp += bb;
      }
      sum = sum * ms + vs;
    }
    const inv = f32x4.splat(sum == 0 ? <f32>0 : <f32>1 / sum);
    const op = o + <usize>t * os + <usize>h * hb;
    for (let i: usize = 0; i < hb; i += 16) v128.store(op + i, f32x4.mul(v128.load(acc + i), inv));
  }
}
// ggml_vec_dot_q8_0_q8_0 (x86) of a K row and the quantized query, both scales f16 (mm/q8_0.ts dot_q8_0's lanes)
@inline function dot_q8_0_q8_0(w: usize, a: usize, nb: i32): f32 {
  let c0 = f64x2.splat(0), c1 = c0, c2 = c0, c3 = c0;
  const we = w + <usize>nb * 34;
  while (w < we) {
    const dd = f64x2.splat(<f64>(h2f(load<u16>(w)) * h2f(load<u16>(a))));
    const lo = q8_0_lanes(w, a), hi = q8_0_lanes_hi(w, a);
    const p0 = f64x2.mul(f64x2.convert_low_i32x4_s(lo), dd), p1 = f64x2.mul(f64x2.convert_low_i32x4_s(i32x4.shuffle(lo, lo, 2, 3, 0, 1)), dd);
    const p2 = f64x2.mul(f64x2.convert_low_i32x4_s(hi), dd), p3 = f64x2.mul(f64x2.convert_low_i32x4_s(i32x4.shuffle(hi, hi, 2, 3, 0, 1)), dd);
    const s0 = f64x2.add(p0, c0), s1 = f64x2.add(p1, c1), s2 = f64x2.add(p2, c2), s3 = f64x2.add(p3, c3);
    if (tie_any(s0, s1, s2, s3)) {
      c0 = fma2_tie(p0, c0); c1 = fma2_tie(p1, c1); c2 = fma2_tie(p2, c2); c3 = fma2_tie(p3, c3);
    } else {
      c0 = round2(s0); c1 = round2(s1); c2 = round2(s2); c3 = round2(s3);
    }
    w += 34; a += 34;
  }
  return hsum_float_8(f32x4_of(c0, c1), f32x4_of(c2, c3));
}
// a q4_0 block as a q8_0-shaped one at u (the f16 scale copied, then the 32 values nibble - 8: the low nibbles
// are values 0..15, the high ones 16..31); returns u
@inline function unpack_q4_0(w: usize, u: usize): usize {
  store<u16>(u, load<u16>(w));
  const raw = v128.load(w, 2), eight = i8x16.splat(8);
  v128.store(u + 2, i8x16.sub(v128.and(raw, i8x16.splat(0x0f)), eight));
  v128.store(u + 18, i8x16.sub(i8x16.shr_u(raw, 4), eight));
  return u;
}
// ggml_vec_dot_q4_0_q8_0 (x86): the same lanes as the q8_0 dot, on the row's blocks unpacked to q8_0 shape at u
@inline function dot_q4_0_q8_0(w: usize, a: usize, nb: i32, u: usize): f32 {
  for (let b: usize = 0; b < <usize>nb; b++) unpack_q4_0(w + b * 18, u + b * 34);
  return dot_q8_0_q8_0(u, a, nb);
}
