// GGUF tensors as input to layout-pack: dequantize to f32 with the project's codecs, then requantize each row
// to the device's int8/int4 with one symmetric scale per row (w ≈ scale * q), the simplest scheme NPU
// compilers accept. Pure functions over an opened GgufFile; opening the file is the CLI's job.

import { readTensorData, type GgufFile } from '../gguf/reader.js';
import { ggmlTypeInfo } from '../gguf/ggml-types.js';
import { dequantizeRow, isSupportedType } from '../quant/dequantize.js';
import { ReError } from './errors.js';

export interface Requantized {
  /** row-major signed values, within -127..127 (int8) or -7..7 (int4) */
  values: Int8Array;
  /** one f32 scale per row */
  scales: Float32Array;
}

/** Symmetric per-row quantization; rounding half away from zero as ggml's roundf does. */
export function requantizeRows(x: Float32Array, rows: number, cols: number, bits: 4 | 8): Requantized {
  const qmax = bits === 8 ? 127 : 7;
  const values = new Int8Array(rows * cols);
  const scales = new Float32Array(rows);
  for (let r = 0; r < rows; r++) {
    let amax = 0;
    for (let c = 0; c < cols; c++) { const a = Math.abs(x[r * cols + c]!); if (a > amax) amax = a; }
    const scale = amax / qmax;
    scales[r] = scale;
    const inv = scale ? 1 / scale : 0;
    for (let c = 0; c < cols; c++) {
      const v = x[r * cols + c]! * inv;
      const q = Math.sign(v) * Math.round(Math.abs(v));
      values[r * cols + c] = q > qmax ? qmax : q < -qmax ? -qmax : q;
    }
  }
  return { values, scales };
}

export function ggufTensorToInt(file: GgufFile, name: string, rows: number, cols: number, bits: 4 | 8): Requantized {
  const t = file.tensorsByName.get(name);
  if (!t) throw new ReError('GGUF', `${file.name}: no tensor named "${name}"`);
  // GGUF dims are ne0 first: ne0 is the row length (our cols); higher dims must be 1 for a matrix.
  const [ne0 = 1, ne1 = 1, ...rest] = t.dims;
  if (rest.some((d) => d !== 1) || ne0 !== cols || ne1 !== rows) {
    throw new ReError('SIZE_MISMATCH', `${file.name}: tensor "${name}" has dims [${t.dims.join(', ')}] (ne0 = columns), the layout expects ${rows} rows x ${cols} columns`);
  }
  if (!isSupportedType(t.type)) throw new ReError('GGUF', `${file.name}: tensor "${name}" has type ${ggmlTypeInfo(t.type)?.name ?? t.type}, which cannot be dequantized`);
  const raw = readTensorData(file, t);
  const x = new Float32Array(rows * cols);
  const rowBytes = raw.length / rows;
  for (let r = 0; r < rows; r++) dequantizeRow(t.type, raw, r * rowBytes, x, r * cols, cols);
  return requantizeRows(x, rows, cols, bits);
}
