// The quant tests' view of a fixture: the whole file's bytes plus each tensor's absolute offset,
// read through the real GGUF reader (src/gguf).
import { readFileSync } from 'node:fs';
import { openGguf } from '../../src/gguf/open.js';

export interface LiteTensor {
  name: string;
  dims: number[];
  type: number;
  /** absolute byte offset of the tensor data in the file */
  offset: number;
}

export interface LiteGguf {
  bytes: Uint8Array;
  tensors: Map<string, LiteTensor>;
}

export function readGgufLite(path: string): LiteGguf {
  const f = openGguf(path);
  f.source.close?.();
  const buf = readFileSync(path);
  const tensors = new Map<string, LiteTensor>();
  for (const t of f.tensors) tensors.set(t.name, { name: t.name, dims: t.dims, type: t.type, offset: t.fileOffset });
  return { bytes: new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength), tensors };
}
