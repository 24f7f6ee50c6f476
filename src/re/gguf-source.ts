// GGUF tensors as input to layout-pack: read, dequantize to f32, requantize per row for the device.
// Wired to the GGUF reader and dequantizer once they land on main.

import { ReError } from './errors.js';

export async function ggufTensorToInt(file: string, tensor: string, rows: number, cols: number, bits: 4 | 8): Promise<{ values: Int8Array; scales: Float32Array }> {
  void file; void tensor; void rows; void cols; void bits;
  throw new ReError('GGUF', '--gguf is not available in this build (the GGUF reader is not merged yet)');
}
