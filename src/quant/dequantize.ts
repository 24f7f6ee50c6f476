// Row dequantization, bit-exact with ggml's dequantize_row_* (ggml-quants.c; checked against
// ggml's own binary in test/quant/golden.test.ts).
//
// Exactness: ggml computes each value in f32 as e.g. `dl * q - ml` with dl = d * sc already a
// float. For every type here those partial products fit in 24 bits (an 11-bit f16 scale times a
// few-bit integer), so they are exact both in f32 and in double; the only rounding is the final
// add (or the last product for Q6_K / IQ4_XS / Q8_K), and a single double operation on exact
// operands rounded to f32 (the Float32Array store) is the correctly rounded f32 result. So plain
// JS arithmetic here gives ggml's bits without Math.fround at every step.

import { GgmlType, ggmlTypeName } from '../gguf/ggml-types.js';
import {
  IQ4_NL_BYTES, IQ4_XS_BYTES, IQ4XS_QS, IQ4XS_SCALES_H, IQ4XS_SCALES_L, KVALUES_IQ4NL, Q2_K_BYTES, Q2K_D, Q2K_DMIN,
  Q2K_QS, Q2K_SCALES, Q3_K_BYTES, Q3K_D, Q3K_HMASK, Q3K_QS, Q3K_SCALES, Q4_0_BYTES, Q4_1_BYTES, Q4_K_BYTES, Q4K_D,
  Q4K_DMIN, Q4K_QS, Q4K_SCALES, Q5_0_BYTES, Q5_1_BYTES, Q5_K_BYTES, Q5K_D, Q5K_DMIN, Q5K_QH, Q5K_QS, Q5K_SCALES,
  Q6_K_BYTES, Q6K_D, Q6K_QH, Q6K_QL, Q6K_SCALES, Q8_0_BYTES, Q8_1_BYTES, Q8_K_BYTES, Q8K_D, Q8K_QS, QK, QK_K, scaleMinK4, scaleQ3K,
} from './blocks.js';
import { DataViewCache, checkBlocks, readF16, readU16, readU32 } from './bytes.js';
import { F16_TO_F32, bf16ToF32 } from './float16.js';

export type DequantizeFn = (src: Uint8Array, so: number, dst: Float32Array, d0: number, n: number) => void;

const srcView = new DataViewCache();

function deqF32(src: Uint8Array, so: number, dst: Float32Array, d0: number, n: number): void {
  const dv = srcView.of(src);
  const base = src.byteOffset + so;
  for (let i = 0; i < n; i++) dst[d0 + i] = dv.getFloat32(base + 4 * i, true);
}

function deqF16(src: Uint8Array, so: number, dst: Float32Array, d0: number, n: number): void {
  for (let i = 0; i < n; i++) dst[d0 + i] = F16_TO_F32[src[so + 2 * i]! | (src[so + 2 * i + 1]! << 8)]!;
}

function deqBF16(src: Uint8Array, so: number, dst: Float32Array, d0: number, n: number): void {
  for (let i = 0; i < n; i++) dst[d0 + i] = bf16ToF32(src[so + 2 * i]! | (src[so + 2 * i + 1]! << 8));
}

function deqQ4_0(src: Uint8Array, so: number, dst: Float32Array, d0: number, n: number): void {
  const nb = checkBlocks('Q4_0', n, QK);
  for (let i = 0, o = so, y = d0; i < nb; i++, o += Q4_0_BYTES, y += QK) {
    const d = readF16(src, o);
    for (let j = 0; j < 16; j++) {
      const b = src[o + 2 + j]!;
      dst[y + j] = ((b & 0xf) - 8) * d;
      dst[y + j + 16] = ((b >> 4) - 8) * d;
    }
  }
}

function deqQ4_1(src: Uint8Array, so: number, dst: Float32Array, d0: number, n: number): void {
  const nb = checkBlocks('Q4_1', n, QK);
  for (let i = 0, o = so, y = d0; i < nb; i++, o += Q4_1_BYTES, y += QK) {
    const d = readF16(src, o);
    const m = readF16(src, o + 2);
    for (let j = 0; j < 16; j++) {
      const b = src[o + 4 + j]!;
      dst[y + j] = (b & 0xf) * d + m;
      dst[y + j + 16] = (b >> 4) * d + m;
    }
  }
}

function deqQ5_0(src: Uint8Array, so: number, dst: Float32Array, d0: number, n: number): void {
  const nb = checkBlocks('Q5_0', n, QK);
  for (let i = 0, o = so, y = d0; i < nb; i++, o += Q5_0_BYTES, y += QK) {
    const d = readF16(src, o);
    const qh = readU32(src, o + 2); // bit j = 5th bit of value j
    for (let j = 0; j < 16; j++) {
      const b = src[o + 6 + j]!;
      const h0 = ((qh >>> j) << 4) & 0x10;
      const h1 = (qh >>> (j + 12)) & 0x10;
      dst[y + j] = (((b & 0xf) | h0) - 16) * d;
      dst[y + j + 16] = (((b >> 4) | h1) - 16) * d;
    }
  }
}

function deqQ5_1(src: Uint8Array, so: number, dst: Float32Array, d0: number, n: number): void {
  const nb = checkBlocks('Q5_1', n, QK);
  for (let i = 0, o = so, y = d0; i < nb; i++, o += Q5_1_BYTES, y += QK) {
    const d = readF16(src, o);
    const m = readF16(src, o + 2);
    const qh = readU32(src, o + 4);
    for (let j = 0; j < 16; j++) {
      const b = src[o + 8 + j]!;
      const h0 = ((qh >>> j) << 4) & 0x10;
      const h1 = (qh >>> (j + 12)) & 0x10;
      dst[y + j] = ((b & 0xf) | h0) * d + m;
      dst[y + j + 16] = ((b >> 4) | h1) * d + m;
    }
  }
}

function deqQ8_0(src: Uint8Array, so: number, dst: Float32Array, d0: number, n: number): void {
  const nb = checkBlocks('Q8_0', n, QK);
  for (let i = 0, o = so, y = d0; i < nb; i++, o += Q8_0_BYTES, y += QK) {
    const d = readF16(src, o);
    for (let j = 0; j < 32; j++) dst[y + j] = ((src[o + 2 + j]! << 24) >> 24) * d;
  }
}

// ggml has no dequantize_row_q8_1 (Q8_1 only ever holds activations); this is the obvious d*q,
// handy for checking activation rounding.
function deqQ8_1(src: Uint8Array, so: number, dst: Float32Array, d0: number, n: number): void {
  const nb = checkBlocks('Q8_1', n, QK);
  for (let i = 0, o = so, y = d0; i < nb; i++, o += Q8_1_BYTES, y += QK) {
    const d = readF16(src, o);
    for (let j = 0; j < 32; j++) dst[y + j] = ((src[o + 4 + j]! << 24) >> 24) * d;
  }
}

function deqIQ4_NL(src: Uint8Array, so: number, dst: Float32Array, d0: number, n: number): void {
  const nb = checkBlocks('IQ4_NL', n, QK);
  for (let i = 0, o = so, y = d0; i < nb; i++, o += IQ4_NL_BYTES, y += QK) {
    const d = readF16(src, o);
    for (let j = 0; j < 16; j++) {
      const b = src[o + 2 + j]!;
      dst[y + j] = d * KVALUES_IQ4NL[b & 0xf]!;
      dst[y + j + 16] = d * KVALUES_IQ4NL[b >> 4]!;
    }
  }
}

function deqQ2_K(src: Uint8Array, so: number, dst: Float32Array, d0: number, n: number): void {
  const nb = checkBlocks('Q2_K', n, QK_K);
  for (let i = 0, o = so, y = d0; i < nb; i++, o += Q2_K_BYTES) {
    const d = readF16(src, o + Q2K_D);
    const dmin = readF16(src, o + Q2K_DMIN);
    // Two halves of 128 values; each byte of qs holds 4 values 32 apart (2 bits each), and
    // every 16 values have their own 4-bit scale (low nibble) and 4-bit min (high nibble).
    let is = 0;
    for (let half = 0; half < 2; half++) {
      const q = o + Q2K_QS + 32 * half;
      for (let shift = 0; shift < 8; shift += 2) {
        for (let part = 0; part < 2; part++, is++) {
          const sc = src[o + Q2K_SCALES + is]!;
          const dl = d * (sc & 0xf);
          const ml = dmin * (sc >> 4);
          const qp = q + 16 * part;
          for (let l = 0; l < 16; l++) dst[y++] = dl * ((src[qp + l]! >> shift) & 3) - ml;
        }
      }
    }
  }
}

function deqQ3_K(src: Uint8Array, so: number, dst: Float32Array, d0: number, n: number): void {
  const nb = checkBlocks('Q3_K', n, QK_K);
  for (let i = 0, o = so, y = d0; i < nb; i++, o += Q3_K_BYTES) {
    const dAll = readF16(src, o + Q3K_D);
    // Low 2 bits as in Q2_K; the 3rd bit comes from hmask (bit hb of byte l for value l of
    // the hb-th 32-value group), and a cleared bit means "subtract 4".
    let is = 0;
    let hb = 0; // hmask bit of the current 32-value group
    for (let half = 0; half < 2; half++) {
      const q = o + Q3K_QS + 32 * half;
      for (let shift = 0; shift < 8; shift += 2, hb++) {
        for (let part = 0; part < 2; part++, is++) {
          const dl = dAll * scaleQ3K(is, src, o + Q3K_SCALES);
          const qp = q + 16 * part;
          const hp = o + Q3K_HMASK + 16 * part;
          for (let l = 0; l < 16; l++) {
            dst[y++] = dl * (((src[qp + l]! >> shift) & 3) - 4 + (((src[hp + l]! >> hb) & 1) << 2));
          }
        }
      }
    }
  }
}

function deqQ4_K(src: Uint8Array, so: number, dst: Float32Array, d0: number, n: number): void {
  const nb = checkBlocks('Q4_K', n, QK_K);
  for (let i = 0, o = so, y = d0; i < nb; i++, o += Q4_K_BYTES) {
    // (the f16 table read inline: through readF16 the scales came back boxed here, a few heap numbers per
    // decoded token when the cpu device looks up Q4_K token embeddings)
    const d = F16_TO_F32[src[o + Q4K_D]! | (src[o + Q4K_D + 1]! << 8)]!;
    const dmin = F16_TO_F32[src[o + Q4K_DMIN]! | (src[o + Q4K_DMIN + 1]! << 8)]!;
    // 4 chunks of 64 values: 32 bytes each, low nibbles first then high nibbles,
    // with one (scale, min) pair per 32 values.
    for (let c = 0; c < 4; c++) {
      const sm1 = scaleMinK4(2 * c, src, o + Q4K_SCALES);
      const sm2 = scaleMinK4(2 * c + 1, src, o + Q4K_SCALES);
      const d1 = d * (sm1 & 0xff), m1 = dmin * (sm1 >> 8);
      const d2 = d * (sm2 & 0xff), m2 = dmin * (sm2 >> 8);
      const q = o + Q4K_QS + 32 * c;
      for (let l = 0; l < 32; l++) dst[y + l] = d1 * (src[q + l]! & 0xf) - m1;
      for (let l = 0; l < 32; l++) dst[y + 32 + l] = d2 * (src[q + l]! >> 4) - m2;
      y += 64;
    }
  }
}

function deqQ5_K(src: Uint8Array, so: number, dst: Float32Array, d0: number, n: number): void {
  const nb = checkBlocks('Q5_K', n, QK_K);
  for (let i = 0, o = so, y = d0; i < nb; i++, o += Q5_K_BYTES) {
    const d = readF16(src, o + Q5K_D);
    const dmin = readF16(src, o + Q5K_DMIN);
    // As Q4_K, plus a 5th bit per value from qh: bit 2c for the low-nibble half of chunk c,
    // bit 2c+1 for the high-nibble half.
    for (let c = 0; c < 4; c++) {
      const sm1 = scaleMinK4(2 * c, src, o + Q5K_SCALES);
      const sm2 = scaleMinK4(2 * c + 1, src, o + Q5K_SCALES);
      const d1 = d * (sm1 & 0xff), m1 = dmin * (sm1 >> 8);
      const d2 = d * (sm2 & 0xff), m2 = dmin * (sm2 >> 8);
      const b1 = 2 * c, b2 = 2 * c + 1; // qh bit of each half
      const q = o + Q5K_QS + 32 * c;
      const h = o + Q5K_QH;
      for (let l = 0; l < 32; l++) dst[y + l] = d1 * ((src[q + l]! & 0xf) | (((src[h + l]! >> b1) & 1) << 4)) - m1;
      for (let l = 0; l < 32; l++) dst[y + 32 + l] = d2 * ((src[q + l]! >> 4) | (((src[h + l]! >> b2) & 1) << 4)) - m2;
      y += 64;
    }
  }
}

function deqQ6_K(src: Uint8Array, so: number, dst: Float32Array, d0: number, n: number): void {
  const nb = checkBlocks('Q6_K', n, QK_K);
  for (let i = 0, o = so, y = d0; i < nb; i++, o += Q6_K_BYTES) {
    const d = readF16(src, o + Q6K_D);
    // Two halves of 128 values. For l in 0..31: ql[l] low/high nibbles give values l and l+64,
    // ql[l+32] gives l+32 and l+96; qh[l] holds the top 2 bits of all four. Scales (int8) cover 16.
    for (let half = 0; half < 2; half++) {
      const ql = o + Q6K_QL + 64 * half;
      const qh = o + Q6K_QH + 32 * half;
      const sc = o + Q6K_SCALES + 8 * half;
      for (let l = 0; l < 32; l++) {
        const is = l >> 4;
        const a = src[ql + l]!, b = src[ql + l + 32]!, h = src[qh + l]!;
        const q1 = ((a & 0xf) | ((h & 3) << 4)) - 32;
        const q2 = ((b & 0xf) | (((h >> 2) & 3) << 4)) - 32;
        const q3 = ((a >> 4) | (((h >> 4) & 3) << 4)) - 32;
        const q4 = ((b >> 4) | (((h >> 6) & 3) << 4)) - 32;
        // d * sc is exact in f32 (11 x 8 bits); the product with q is then rounded once.
        dst[y + l] = d * ((src[sc + is]! << 24) >> 24) * q1;
        dst[y + l + 32] = d * ((src[sc + is + 2]! << 24) >> 24) * q2;
        dst[y + l + 64] = d * ((src[sc + is + 4]! << 24) >> 24) * q3;
        dst[y + l + 96] = d * ((src[sc + is + 6]! << 24) >> 24) * q4;
      }
      y += 128;
    }
  }
}

function deqQ8_K(src: Uint8Array, so: number, dst: Float32Array, d0: number, n: number): void {
  const nb = checkBlocks('Q8_K', n, QK_K);
  const dv = srcView.of(src);
  for (let i = 0, o = so, y = d0; i < nb; i++, o += Q8_K_BYTES, y += QK_K) {
    const d = dv.getFloat32(src.byteOffset + o + Q8K_D, true);
    for (let j = 0; j < QK_K; j++) dst[y + j] = d * ((src[o + Q8K_QS + j]! << 24) >> 24);
  }
}

function deqIQ4_XS(src: Uint8Array, so: number, dst: Float32Array, d0: number, n: number): void {
  const nb = checkBlocks('IQ4_XS', n, QK_K);
  for (let i = 0, o = so, y = d0; i < nb; i++, o += IQ4_XS_BYTES) {
    const d = readF16(src, o);
    const sh = readU16(src, o + IQ4XS_SCALES_H);
    // 8 sub-blocks of 32: a 6-bit scale (low nibble from scales_l, top 2 bits from scales_h),
    // biased by 32; values as IQ4_NL (16 bytes, low nibbles then high nibbles).
    for (let ib = 0; ib < 8; ib++) {
      const ls = ((src[o + IQ4XS_SCALES_L + (ib >> 1)]! >> (4 * (ib & 1))) & 0xf) | (((sh >> (2 * ib)) & 3) << 4);
      const dl = d * (ls - 32);
      const q = o + IQ4XS_QS + 16 * ib;
      for (let j = 0; j < 16; j++) {
        const b = src[q + j]!;
        dst[y + j] = dl * KVALUES_IQ4NL[b & 0xf]!;
        dst[y + j + 16] = dl * KVALUES_IQ4NL[b >> 4]!;
      }
      y += 32;
    }
  }
}

const table = new Map<number, DequantizeFn>([
  [GgmlType.F32, deqF32],
  [GgmlType.F16, deqF16],
  [GgmlType.BF16, deqBF16],
  [GgmlType.Q4_0, deqQ4_0],
  [GgmlType.Q4_1, deqQ4_1],
  [GgmlType.Q5_0, deqQ5_0],
  [GgmlType.Q5_1, deqQ5_1],
  [GgmlType.Q8_0, deqQ8_0],
  [GgmlType.Q8_1, deqQ8_1],
  [GgmlType.Q2_K, deqQ2_K],
  [GgmlType.Q3_K, deqQ3_K],
  [GgmlType.Q4_K, deqQ4_K],
  [GgmlType.Q5_K, deqQ5_K],
  [GgmlType.Q6_K, deqQ6_K],
  [GgmlType.Q8_K, deqQ8_K],
  [GgmlType.IQ4_NL, deqIQ4_NL],
  [GgmlType.IQ4_XS, deqIQ4_XS],
]);

/** Whether dequantizeRow handles this ggml type id. */
export function isSupportedType(type: number): boolean {
  return table.has(type);
}

/** The specialised row decoder for a type (for callers that want to hoist the dispatch). */
export function dequantizer(type: number): DequantizeFn {
  const fn = table.get(type);
  if (!fn) throw new Error(`dequantize: unsupported ggml type ${ggmlTypeName(type)} (${type})`);
  return fn;
}

/**
 * Decode n values of `type` starting at byte src[srcOffset] into dst[dstOffset..dstOffset+n).
 * n must be a multiple of the type's block size. src may sit at any byte alignment.
 */
export function dequantizeRow(type: number, src: Uint8Array, srcOffset: number, dst: Float32Array, dstOffset: number, n: number): void {
  dequantizer(type)(src, srcOffset, dst, dstOffset, n);
}
