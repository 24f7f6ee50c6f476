// Flash attention over a quantized KV cache (q8_0 / q4_0 K and V), and the quantized cache store: llama.cpp's
// CPU numerics for `-fa on -ctk q8_0 -ctv q8_0` (../shared/fixtures/parity-kvq8/README.md).
//
// Store (ggml set_rows into a quantized cache): each f32 row through the CPU type's from_float: q8_0 is the x86
// quantize_row_q8_0 (id = 127/amax, ties to even), q4_0 quantize_row_q4_0_ref.
// Attention (ggml_compute_forward_flash_attn_ext_f16_one_chunk): Q converted to the K type's vec_dot_type
// (q8_0 for both), s = ggml_vec_dot_<K>_q8_0(K_j, Q) in the x86 order (8 int32 lanes per block, one f32 FMA
// chain per lane, hsum_float_8); V rows dequantized to f32 (to_float) and accumulated in an f32 VKQ with
// ggml_vec_mad_f32 (FMA), a new maximum rescaling it with ggml_vec_scale_f32 (no f16 rounding anywhere, unlike
// the f16 cache's VKQ16). An f16 (or f32, cast to f16 as llama.cpp does) K or V beside a quantized one keeps its
// f16 path: Q rounded to f16 and ggml_vec_dot_f16, or the f16 accumulator.

import { GgmlType } from '../../gguf/ggml-types.js';
import { F16_TO_F32, f16FromF32Bits, f32ToF16 } from '../../quant/float16.js';
import { fmaf } from '../../quant/rounding.js';
import { quantizeActivations } from '../../quant/vec-dot.js';
import { dotF16Vec } from './f16-dot.js';
import { expf, tanhf } from './libm.js';
import type { AttentionParams } from './ops.js';

const f = Math.fround;

/** A cache as the kernels see it: its ggml type (F32, F16, Q8_0, Q4_0) and its bytes. */
export interface KvCacheView {
  type: number;
  bytes: Uint8Array;
  /** the same memory as f16 bits / f32 values (float caches only) */
  u16: Uint16Array | null;
  f32: Float32Array | null;
}
export function kvCacheView(type: number, bytes: Uint8Array): KvCacheView {
  const float = type === GgmlType.F16 || type === GgmlType.F32;
  return {
    type, bytes,
    u16: float && type === GgmlType.F16 ? new Uint16Array(bytes.buffer, bytes.byteOffset, bytes.byteLength >> 1) : null,
    f32: float && type === GgmlType.F32 ? new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength >> 2) : null,
  };
}

const isQuant = (type: number) => type === GgmlType.Q8_0 || type === GgmlType.Q4_0;
/** bytes of n values of a cache type */
export function kvBytes(type: number, n: number): number {
  return type === GgmlType.Q8_0 ? (n / 32) * 34 : type === GgmlType.Q4_0 ? (n / 32) * 18 : n * (type === GgmlType.F16 ? 2 : 4);
}

// quantize_row_q4_0_ref: d = (the value of largest magnitude) / -8, q = min(15, (int8)(x/d + 8.5)); written out
// here with the f16 bits taken from a scratch word, so a decode step boxes no double (src/quant's quantizer
// passes its scale through calls V8 may not inline)
const f32w = new Float32Array(1), u32w = new Uint32Array(f32w.buffer);
function quantRowQ4_0(x: Float32Array, xo: number, y: Uint8Array, yo: number, n: number): void {
  for (let b = 0; b < n; b += 32, xo += 32, yo += 18) {
    let amax = 0, max = 0;
    for (let j = 0; j < 32; j++) {
      const v = x[xo + j]!;
      if (amax < Math.abs(v)) { amax = Math.abs(v); max = v; }
    }
    const d = f(max / -8);
    const id = d !== 0 ? f(1 / d) : 0;
    f32w[0] = d;
    const h = f16FromF32Bits(u32w[0]!);
    y[yo] = h & 0xff; y[yo + 1] = h >>> 8;
    for (let j = 0; j < 16; j++) {
      // x/d lies in [-8, 8], so x/d + 8.5 > 0 and (int8_t) truncation is | 0
      const q0 = Math.min(15, f(f(x[xo + j]! * id) + 8.5) | 0);
      const q1 = Math.min(15, f(f(x[xo + 16 + j]! * id) + 8.5) | 0);
      y[yo + 2 + j] = q0 | (q1 << 4);
    }
  }
}

/** Writes f32 rows into a quantized cache at rows pos[t] (rowLen values each, whole 32-value blocks). */
export function kvStoreQuant(cache: Uint8Array, type: number, x: Float32Array, rowLen: number, nTok: number, pos: Int32Array): void {
  const rb = kvBytes(type, rowLen);
  for (let t = 0; t < nTok; t++) {
    if (type === GgmlType.Q8_0) quantizeActivations(GgmlType.Q8_0, x, t * rowLen, cache, pos[t]! * rb, rowLen, 'x86');
    else quantRowQ4_0(x, t * rowLen, cache, pos[t]! * rb, rowLen);
  }
}

// ggml_vec_dot_q8_0_q8_0 / ggml_vec_dot_q4_0_q8_0 on x86 (AVX2): lane l sums values 4l..4l+3 in int32 (q4_0: the
// nibbles unpacked to bytes - 8, values 0..15 from the low nibbles, 16..31 from the high ones), an f32 FMA by
// d = x.d*y.d per lane across blocks, hsum_float_8. The result goes to dotOut[0] (a returned double would be
// boxed by a call V8 does not inline: a decode step allocates nothing).
const lanes = new Float64Array(8);
const dotOut = new Float64Array(1);
function dotKQ(q4: boolean, n: number, w: Uint8Array, wo: number, a: Uint8Array, ao: number): void {
  lanes.fill(0);
  const bw = q4 ? 18 : 34;
  for (let ib = 0; ib < n / 32; ib++, wo += bw, ao += 34) {
    const d = f(F16_TO_F32[w[wo]! | (w[wo + 1]! << 8)]! * F16_TO_F32[a[ao]! | (a[ao + 1]! << 8)]!);
    for (let l = 0; l < 8; l++) {
      let s = 0;
      for (let e = 4 * l; e < 4 * l + 4; e++) {
        let x: number;
        if (q4) { const b = w[wo + 2 + (e & 15)]!; x = (e < 16 ? b & 15 : b >> 4) - 8; } else x = (w[wo + 2 + e]! << 24) >> 24;
        s += x * ((a[ao + 2 + e]! << 24) >> 24);
      }
      lanes[l] = fmaf(d, s, lanes[l]!);
    }
  }
  const r0 = f(lanes[0]! + lanes[4]!), r1 = f(lanes[1]! + lanes[5]!), r2 = f(lanes[2]! + lanes[6]!), r3 = f(lanes[3]! + lanes[7]!);
  dotOut[0] = f(f(r0 + r2) + f(r1 + r3));
}

/** dequantize_row_q8_0 / _q4_0 (q * d and (q - 8) * d, exact in f32) of n values into y */
function dequantKV(q4: boolean, src: Uint8Array, o: number, y: Float32Array, n: number): void {
  for (let b = 0; b < n; b += 32) {
    const d = F16_TO_F32[src[o]! | (src[o + 1]! << 8)]!;
    if (q4) {
      for (let j = 0; j < 16; j++) { const v = src[o + 2 + j]!; y[b + j] = ((v & 15) - 8) * d; y[b + 16 + j] = ((v >> 4) - 8) * d; }
      o += 18;
    } else {
      for (let j = 0; j < 32; j++) y[b + j] = ((src[o + 2 + j]! << 24) >> 24) * d;
      o += 34;
    }
  }
}

/** Buffers flashAttentionKvq() works in (reuse them to allocate nothing per call). */
export interface KvqWorkspace { qq: Uint8Array; qh: Float32Array; kr: Float32Array; vf: Float32Array; vkq: Float32Array }
export function kvqWorkspace(p: AttentionParams): KvqWorkspace {
  return { qq: new Uint8Array((p.headDimK / 32) * 34), qh: new Float32Array(p.headDimK), kr: new Float32Array(p.headDimK), vf: new Float32Array(p.headDimV), vkq: new Float32Array(p.headDimV) };
}

/**
 * Flash attention, as src/backends/reference/ops.ts flashAttention (same masking, rows, sequences and online
 * softmax), with a quantized K and/or V: the numerics in this file's header.
 */
export function flashAttentionKvq(q: Float32Array, nTok: number, rows: Int32Array, stride: number, k: KvCacheView, v: KvCacheView, p: AttentionParams, y: Float32Array, ws: KvqWorkspace): void {
  const { nHead, nHeadKv, headDimK: dk, headDimV: dv } = p;
  const group = nHead / nHeadKv;
  const kQuant = isQuant(k.type), vQuant = isQuant(v.type);
  const rowK = kvBytes(k.type, dk * nHeadKv), headK = kvBytes(k.type, dk), rowV = kvBytes(v.type, dv * nHeadKv), headV = kvBytes(v.type, dv);
  const capF = f(p.softcap);
  const scaleF = p.softcap > 0 ? f(f(p.scale) / capF) : f(p.scale);
  const { qq, qh, kr, vf, vkq } = ws;
  for (let t = 0; t < nTok; t++) {
    const r = rows[t]!;
    const base = stride > 0 ? r - (r % stride) : 0;
    const lo = p.window > 0 ? Math.max(base, r - p.window + 1) : base;
    for (let h = 0; h < nHead; h++) {
      const kvh = Math.floor(h / group);
      const qo = t * dk * nHead + h * dk;
      if (kQuant) quantizeActivations(GgmlType.Q8_0, q, qo, qq, 0, dk, 'x86');
      else for (let i = 0; i < dk; i++) qh[i] = F16_TO_F32[f32ToF16(q[qo + i]!)]!;
      vkq.fill(0, 0, dv);
      let m = -Infinity, s = 0;
      for (let j = lo; j <= r; j++) {
        let x: number;
        if (kQuant) {
          const ko = j * rowK + kvh * headK;
          dotKQ(k.type === GgmlType.Q4_0, dk, k.bytes, ko, qq, 0);
          x = dotOut[0]!;
        } else {
          const ko = j * dk * nHeadKv + kvh * dk;
          for (let i = 0; i < dk; i++) kr[i] = k.u16 ? F16_TO_F32[k.u16[ko + i]!]! : F16_TO_F32[f32ToF16(k.f32![ko + i]!)]!;
          x = dotF16Vec(dk, kr, 0, 1, qh, 0);
        }
        x = f(x * scaleF);
        if (p.softcap > 0) x = f(capF * tanhf(x));
        let ms = 1, vs = 1;
        if (x > m) {
          ms = expf(f(m - x));
          m = x;
          if (vQuant) for (let i = 0; i < dv; i++) vkq[i] = f(vkq[i]! * ms);
          else for (let i = 0; i < dv; i++) vkq[i] = F16_TO_F32[f32ToF16(f(vkq[i]! * ms))]!;
        } else {
          vs = expf(f(x - m));
        }
        if (vQuant) {
          dequantKV(v.type === GgmlType.Q4_0, v.bytes, j * rowV + kvh * headV, vf, dv);
          for (let i = 0; i < dv; i++) vkq[i] = fmaf(vf[i]!, vs, vkq[i]!);
        } else {
          const vo = j * dv * nHeadKv + kvh * dv;
          for (let i = 0; i < dv; i++) {
            const vv = v.u16 ? F16_TO_F32[v.u16[vo + i]!]! : F16_TO_F32[f32ToF16(v.f32![vo + i]!)]!;
            vkq[i] = F16_TO_F32[f32ToF16(fmaf(vv, vs, vkq[i]!))]!;
          }
        }
        s = f(f(s * ms) + vs); // two f32 roundings (llama.cpp's build does not contract S*ms + vs)
      }
      const inv = s === 0 ? 0 : f(1 / s);
      const yo = t * dv * nHead + h * dv;
      for (let i = 0; i < dv; i++) y[yo + i] = f(vkq[i]! * inv);
    }
  }
}

// ---------------------------------------------------------------- the rotation of a quantized cache
//
// llama.cpp (llama-kv-cache.cpp attn_rot_k / attn_rot_v, on unless LLAMA_ATTN_ROT_DISABLE; llama-graph.cpp
// build_attn): with a quantized K (V) cache and heads of a multiple of 64 values, Q and K (V) are multiplied by
// an orthonormal Hadamard matrix before K and V are stored, and the attention output by V's matrix again
// (H = H^T = H^-1), so outliers spread over a block before it is quantized. K's block is the largest power of
// two dividing the head size, V's 64 values. The product is a mul_mat with the Hadamard hint, which ggml-cpu
// computes as a fast Walsh-Hadamard transform: each block scaled by 1/sqrtf(n) first, then log2(n) f32
// butterfly stages (a + b, a - b) from pairs 1 apart to pairs n/2 apart. (Checked against the parity-kvq8
// references: the plain matmul order, or the scale applied last, moves them; this order reproduces them.)

/** y = each run of n values of x (count values, n a power of two) times the normalized n x n Hadamard matrix */
export function hadamardRows(x: Float32Array, count: number, n: number, y: Float32Array): void {
  const sc = f(1 / f(Math.sqrt(n))); // ggml_gen_hadamard's h[0] = 1.0/sqrtf(n)
  for (let o = 0; o < count; o += n) {
    for (let j = 0; j < n; j++) y[o + j] = f(x[o + j]! * sc);
    for (let len = 1; len < n; len <<= 1) {
      for (let a = o; a < o + n; a += 2 * len) {
        for (let j = a; j < a + len; j++) {
          const u = y[j]!, v = y[j + len]!;
          y[j] = f(u + v);
          y[j + len] = f(u - v);
        }
      }
    }
  }
}
