// A deliberately tiny GGUF reader for the quant tests only: enough to find tensors and their
// bytes in the parity fixtures. The real reader lives in src/gguf (written in parallel).
import { readFileSync } from 'node:fs';

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
  const buf = readFileSync(path);
  const bytes = new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let p = 0;
  const u32 = () => { const v = dv.getUint32(p, true); p += 4; return v; };
  const u64 = () => { const v = Number(dv.getBigUint64(p, true)); p += 8; return v; };
  const str = () => { const n = u64(); const s = Buffer.from(bytes.subarray(p, p + n)).toString('utf8'); p += n; return s; };
  if (u32() !== 0x46554747) throw new Error(`${path}: not a GGUF file`);
  const version = u32();
  if (version < 2) throw new Error(`${path}: GGUF v${version} not handled by the test reader`);
  const nTensors = u64();
  const nKv = u64();
  const scalarSize: Record<number, number> = { 0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8 };
  let alignment = 32;
  const skipValue = (t: number): void => {
    if (t === 8) { str(); return; }
    if (t === 9) { const et = u32(); const n = u64(); for (let i = 0; i < n; i++) skipValue(et); return; }
    const s = scalarSize[t];
    if (s === undefined) throw new Error(`${path}: bad kv type ${t}`);
    p += s;
  };
  for (let i = 0; i < nKv; i++) {
    const key = str();
    const t = u32();
    if (key === 'general.alignment' && t === 4) alignment = u32();
    else skipValue(t);
  }
  const infos: LiteTensor[] = [];
  for (let i = 0; i < nTensors; i++) {
    const name = str();
    const nd = u32();
    const dims: number[] = [];
    for (let d = 0; d < nd; d++) dims.push(u64());
    const type = u32();
    const offset = u64();
    infos.push({ name, dims, type, offset });
  }
  const dataStart = Math.ceil(p / alignment) * alignment;
  const tensors = new Map<string, LiteTensor>();
  for (const t of infos) tensors.set(t.name, { ...t, offset: dataStart + t.offset });
  return { bytes, tensors };
}
