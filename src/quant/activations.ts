// Activation quantizers: ggml's quantize_row_q8_0/q8_1/q8_K_ref and the f32/f16/bf16 conversions, the
// from_float of the vec_dot types. Split from quantize.ts (the weight quantizers, for synthetic models and
// tools) so the engine's matmuls load only these. Every float operation is wrapped in Math.fround in the
// C expression's order; no allocation per row.
import { GgmlType } from '../gguf/ggml-types.js';
import { Q8_0_BYTES, Q8_1_BYTES, Q8_K_BYTES, Q8K_BSUMS, Q8K_D, Q8K_QS, QK, QK_K } from './blocks.js';
import { DataViewCache, checkBlocks, writeU16 } from './bytes.js';
import { F16_TO_F32, f32ToBf16, f32ToF16 } from './float16.js';
import { nearestInt, roundf } from './rounding.js';

const f = Math.fround;

/** Store f32 x as f16 at dst[o] and return the f16's value (what dequantization will see). */
export function putF16(dst: Uint8Array, o: number, x: number): number {
  const h = f32ToF16(x);
  writeU16(dst, o, h);
  return F16_TO_F32[h]!;
}

export type QuantizeFn = (src: Float32Array, so: number, dst: Uint8Array, d0: number, n: number) => void;

export function quantQ8_0(x: Float32Array, xo: number, y: Uint8Array, yo: number, n: number): void {
  const nb = checkBlocks('Q8_0', n, QK);
  for (let i = 0; i < nb; i++, xo += QK, yo += Q8_0_BYTES) {
    let amax = 0;
    for (let j = 0; j < QK; j++) amax = Math.max(amax, Math.abs(x[xo + j]!));
    const d = f(amax / 127);
    const id = d !== 0 ? f(1 / d) : 0;
    putF16(y, yo, d);
    for (let j = 0; j < QK; j++) y[yo + 2 + j] = roundf(f(x[xo + j]! * id)) & 0xff;
  }
}

export function quantQ8_1(x: Float32Array, xo: number, y: Uint8Array, yo: number, n: number): void {
  const nb = checkBlocks('Q8_1', n, QK);
  for (let i = 0; i < nb; i++, xo += QK, yo += Q8_1_BYTES) {
    let amax = 0;
    for (let j = 0; j < QK; j++) amax = Math.max(amax, Math.abs(x[xo + j]!));
    const d = f(amax / 127);
    const id = d !== 0 ? f(1 / d) : 0;
    putF16(y, yo, d);
    let sum = 0;
    for (let j = 0; j < QK; j++) {
      const q = roundf(f(x[xo + j]! * id));
      y[yo + 4 + j] = q & 0xff;
      sum += q;
    }
    // s = d * sum(q) lets the Q4_1/Q5_1 dot product fold in the weight's min with one multiply.
    putF16(y, yo + 2, f(sum * d));
  }
}

// ---------------------------------------------------------------- Q8_K (activations of K-quants)

// d is written through a scratch word, not a DataView: callers quantize into several buffers in turn (the cpu
// device's reference matmuls each have their own), and a DataView cache keyed by buffer made a new view each call
const q8kDF32 = new Float32Array(1);
const q8kDBytes = new Uint8Array(q8kDF32.buffer);

export function quantQ8_K(x: Float32Array, xo: number, y: Uint8Array, yo: number, n: number): void {
  const nb = checkBlocks('Q8_K', n, QK_K);
  for (let i = 0; i < nb; i++, xo += QK_K, yo += Q8_K_BYTES) {
    let max = 0, amax = 0;
    for (let j = 0; j < QK_K; j++) {
      const ax = Math.abs(x[xo + j]!);
      if (ax > amax) { amax = ax; max = x[xo + j]!; }
    }
    if (amax === 0) {
      // ggml leaves bsums untouched here; we zero the whole block so output is deterministic.
      y.fill(0, yo, yo + Q8_K_BYTES);
      continue;
    }
    // -127 (not -128) keeps every q in [-127, 127], which the SIMD kernels rely on.
    const iscale = f(-127 / max);
    for (let j = 0; j < QK_K; j++) {
      y[yo + Q8K_QS + j] = Math.min(127, nearestInt(f(iscale * x[xo + j]!))) & 0xff;
    }
    for (let j = 0; j < 16; j++) {
      let sum = 0;
      for (let l = 0; l < 16; l++) sum += (y[yo + Q8K_QS + 16 * j + l]! << 24) >> 24;
      writeU16(y, yo + Q8K_BSUMS + 2 * j, sum & 0xffff);
    }
    q8kDF32[0] = f(1 / iscale); // little-endian, as the kernels read it
    for (let b = 0; b < 4; b++) y[yo + Q8K_D + b] = q8kDBytes[b]!;
  }
}

const f32View = new DataViewCache();

export function quantF32(x: Float32Array, xo: number, y: Uint8Array, yo: number, n: number): void {
  const dv = f32View.of(y);
  const base = y.byteOffset + yo;
  for (let i = 0; i < n; i++) dv.setFloat32(base + 4 * i, x[xo + i]!, true);
}

export function quantF16(x: Float32Array, xo: number, y: Uint8Array, yo: number, n: number): void {
  for (let i = 0; i < n; i++) writeU16(y, yo + 2 * i, f32ToF16(x[xo + i]!));
}

export function quantBF16(x: Float32Array, xo: number, y: Uint8Array, yo: number, n: number): void {
  for (let i = 0; i < n; i++) writeU16(y, yo + 2 * i, f32ToBf16(x[xo + i]!));
}

const ACTIVATION_QUANTIZERS = new Map<number, QuantizeFn>([
  [GgmlType.F32, quantF32], [GgmlType.F16, quantF16], [GgmlType.BF16, quantBF16],
  [GgmlType.Q8_0, quantQ8_0], [GgmlType.Q8_1, quantQ8_1], [GgmlType.Q8_K, quantQ8_K],
]);

/** The row encoder of an activation type (F32, F16, BF16, Q8_0, Q8_1, Q8_K), or undefined. */
export function activationQuantizer(type: number): QuantizeFn | undefined {
  return ACTIVATION_QUANTIZERS.get(type);
}
