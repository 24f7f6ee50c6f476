// GGUF weight -> int8 values with per-32 f16 scales, the numbers the nibble planes store. Q8_0 and
// Q4_0 map exactly (their own integers and scales: Q4_0's nibble n becomes n - 8); every other type is
// dequantized by the project's codecs and requantized per group of 32 as ggml quantizes Q8_0
// (d = amax / 127, q = roundf(x / d), d stored as f16), and the error is measured.
import { GgmlType, ggmlTypeInfo, ggmlTypeName } from '../../gguf/ggml-types.js';
import { dequantizer } from '../../quant/dequantize.js';
import { f16ToF32, f32ToF16 } from '../../quant/float16.js';
import { SCALE_GROUP, scaleGroups } from './nibble-planes.js';

export interface Int8Stats {
  exact: boolean;
  maxAbsErr: number;
  relErr: number;
}

/** Row bytes of a GGUF tensor type (f32/f16/bf16 and block types). */
export function sourceRowBytes(type: number, cols: number): number {
  const t = ggmlTypeInfo(type);
  if (!t) throw new Error(`unknown ggml type ${type}`);
  if (cols % t.blockSize) throw new Error(`row of ${cols} values is not a multiple of ${t.name}'s block of ${t.blockSize}`);
  return (cols / t.blockSize) * t.typeSize;
}

export function isExactType(type: number): boolean {
  return type === GgmlType.Q8_0 || type === GgmlType.Q4_0;
}

const roundAway = (x: number) => (x < 0 ? -Math.floor(-x + 0.5) : Math.floor(x + 0.5));

/**
 * Converts a rows x cols weight (GGUF bytes of `type`) row by row, calling `emit(r, q, scales)` with the
 * row's int8 values and f16 scale bits (buffers reused between rows). Returns the numeric error.
 */
export function weightToInt8(type: number, src: Uint8Array, rows: number, cols: number,
  emit: (r: number, q: Int8Array, scales: Uint16Array) => void): Int8Stats {
  const rowBytes = sourceRowBytes(type, cols);
  if (src.length < rows * rowBytes) throw new Error(`${ggmlTypeName(type)} ${rows} x ${cols} needs ${rows * rowBytes} bytes, got ${src.length}`);
  const q = new Int8Array(cols), scales = new Uint16Array(scaleGroups(cols));
  if (type === GgmlType.Q8_0 || type === GgmlType.Q4_0) {
    const nb = cols / 32, bs = type === GgmlType.Q8_0 ? 34 : 18;
    for (let r = 0; r < rows; r++) {
      for (let b = 0; b < nb; b++) {
        const o = r * rowBytes + b * bs;
        scales[b] = src[o]! | (src[o + 1]! << 8);
        if (type === GgmlType.Q8_0) {
          for (let j = 0; j < 32; j++) q[32 * b + j] = (src[o + 2 + j]! << 24) >> 24;
        } else {
          for (let j = 0; j < 16; j++) {
            const byte = src[o + 2 + j]!;
            q[32 * b + j] = (byte & 15) - 8;
            q[32 * b + j + 16] = (byte >> 4) - 8;
          }
        }
      }
      emit(r, q, scales);
    }
    return { exact: true, maxAbsErr: 0, relErr: 0 };
  }
  const deq = dequantizer(type);
  const x = new Float32Array(cols);
  let maxAbs = 0, errSq = 0, refSq = 0;
  for (let r = 0; r < rows; r++) {
    deq(src, r * rowBytes, x, 0, cols);
    for (let g = 0, c0 = 0; c0 < cols; g++, c0 += SCALE_GROUP) {
      const c1 = Math.min(cols, c0 + SCALE_GROUP);
      let amax = 0;
      for (let c = c0; c < c1; c++) amax = Math.max(amax, Math.abs(x[c]!));
      const d = Math.fround(amax / 127), id = d ? Math.fround(1 / d) : 0;
      scales[g] = f32ToF16(d);
      const dq = f16ToF32(scales[g]!);
      for (let c = c0; c < c1; c++) {
        const v = roundAway(Math.fround(x[c]! * id));
        q[c] = v;
        const e = Math.abs(x[c]! - v * dq);
        if (e > maxAbs || e !== e) maxAbs = e !== e ? Infinity : e;
        errSq += e * e;
        refSq += x[c]! * x[c]!;
      }
    }
    emit(r, q, scales);
  }
  return { exact: false, maxAbsErr: maxAbs, relErr: refSq > 0 ? Math.sqrt(errSq / refSq) : (errSq > 0 ? Infinity : 0) };
}
