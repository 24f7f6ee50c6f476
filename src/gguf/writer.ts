// GGUF writer (v3 by default; v1/v2 for tests). Builds files llama.cpp loads: metadata with
// explicit value types, a tensor index, and tensor data aligned to `general.alignment`.

import { GgufValueType } from './reader.js';
import { ggmlTypeInfo } from './ggml-types.js';

export type GgufWriteValue =
  | { type: 'u8' | 'i8' | 'u16' | 'i16' | 'u32' | 'i32' | 'f32' | 'f64'; value: number }
  | { type: 'u64' | 'i64'; value: number | bigint }
  | { type: 'bool'; value: boolean }
  | { type: 'string'; value: string }
  | { type: 'array'; itemType: GgufWriteItemType; value: ArrayLike<unknown> };

export type GgufWriteItemType = 'u8' | 'i8' | 'u16' | 'i16' | 'u32' | 'i32' | 'f32' | 'f64' | 'u64' | 'i64' | 'bool' | 'string' | 'array';

export interface GgufWriteTensor {
  name: string;
  /** GGUF order, ne0 first */
  dims: number[];
  type: number;
  data: Uint8Array;
}

export interface GgufWriteInput {
  version?: 1 | 2 | 3;
  metadata: [string, GgufWriteValue][];
  tensors: GgufWriteTensor[];
  /** defaults to general.alignment from metadata, else 32 */
  alignment?: number;
}

const TYPE_ID: Record<GgufWriteItemType, number> = {
  u8: GgufValueType.UINT8, i8: GgufValueType.INT8, u16: GgufValueType.UINT16, i16: GgufValueType.INT16,
  u32: GgufValueType.UINT32, i32: GgufValueType.INT32, f32: GgufValueType.FLOAT32, bool: GgufValueType.BOOL,
  string: GgufValueType.STRING, array: GgufValueType.ARRAY, u64: GgufValueType.UINT64, i64: GgufValueType.INT64,
  f64: GgufValueType.FLOAT64,
};

/** Growable little-endian byte buffer. */
class Out {
  buf = new Uint8Array(1 << 16);
  view = new DataView(this.buf.buffer);
  len = 0;
  constructor(readonly wide: boolean) {}
  reserve(n: number): void {
    if (this.len + n <= this.buf.length) return;
    let cap = this.buf.length * 2;
    while (cap < this.len + n) cap *= 2;
    const nb = new Uint8Array(cap);
    nb.set(this.buf.subarray(0, this.len));
    this.buf = nb;
    this.view = new DataView(nb.buffer);
  }
  u8(v: number) { this.reserve(1); this.view.setUint8(this.len, v); this.len += 1; }
  i8(v: number) { this.reserve(1); this.view.setInt8(this.len, v); this.len += 1; }
  u16(v: number) { this.reserve(2); this.view.setUint16(this.len, v, true); this.len += 2; }
  i16(v: number) { this.reserve(2); this.view.setInt16(this.len, v, true); this.len += 2; }
  u32(v: number) { this.reserve(4); this.view.setUint32(this.len, v, true); this.len += 4; }
  i32(v: number) { this.reserve(4); this.view.setInt32(this.len, v, true); this.len += 4; }
  f32(v: number) { this.reserve(4); this.view.setFloat32(this.len, v, true); this.len += 4; }
  f64(v: number) { this.reserve(8); this.view.setFloat64(this.len, v, true); this.len += 8; }
  u64(v: number | bigint) { this.reserve(8); this.view.setBigUint64(this.len, BigInt(v), true); this.len += 8; }
  i64(v: number | bigint) { this.reserve(8); this.view.setBigInt64(this.len, BigInt(v), true); this.len += 8; }
  count(n: number) { if (this.wide) this.u64(n); else this.u32(n); }
  bytes(b: Uint8Array) { this.reserve(b.length); this.buf.set(b, this.len); this.len += b.length; }
  string(s: string) { const b = new TextEncoder().encode(s); this.count(b.length); this.bytes(b); }
  pad(align: number) { const n = (align - (this.len % align)) % align; this.reserve(n); this.buf.fill(0, this.len, this.len + n); this.len += n; }
}

function writeItem(o: Out, type: GgufWriteItemType, v: unknown, itemType?: GgufWriteItemType): void {
  switch (type) {
    case 'u8': return o.u8(v as number);
    case 'i8': return o.i8(v as number);
    case 'u16': return o.u16(v as number);
    case 'i16': return o.i16(v as number);
    case 'u32': return o.u32(v as number);
    case 'i32': return o.i32(v as number);
    case 'f32': return o.f32(v as number);
    case 'f64': return o.f64(v as number);
    case 'u64': return o.u64(v as number | bigint);
    case 'i64': return o.i64(v as number | bigint);
    case 'bool': return o.u8(v ? 1 : 0);
    case 'string': return o.string(v as string);
    case 'array': {
      // nested arrays: v is {itemType, value}
      const inner = v as { itemType: GgufWriteItemType; value: ArrayLike<unknown> };
      const it = itemType ?? inner.itemType;
      const arr = itemType ? (v as ArrayLike<unknown>) : inner.value;
      if (it === 'array') {
        o.u32(TYPE_ID.array);
        o.count(arr.length);
        for (let i = 0; i < arr.length; i++) writeItem(o, 'array', arr[i]);
        return;
      }
      o.u32(TYPE_ID[it]);
      o.count(arr.length);
      for (let i = 0; i < arr.length; i++) writeItem(o, it, arr[i]);
      return;
    }
  }
}

/** A tensor's index entry, for writers that stream the data themselves. */
export interface GgufTensorHeader {
  name: string;
  /** GGUF order, ne0 first */
  dims: number[];
  type: number;
}

/** Bytes a tensor's data takes (unpadded); throws for an unknown type or a row that is not whole blocks. */
export function ggufTensorBytes(t: GgufTensorHeader): number {
  const info = ggmlTypeInfo(t.type);
  if (!info) throw new Error(`writeGguf: unknown ggml type ${t.type} for "${t.name}"`);
  if ((t.dims[0] ?? 0) % info.blockSize !== 0) throw new Error(`writeGguf: tensor "${t.name}" row of ${t.dims[0]} is not a multiple of ${info.name}'s block of ${info.blockSize}`);
  const n = t.dims.reduce((a, b) => a * b, 1);
  return (n / info.blockSize) * info.typeSize;
}

/**
 * The header of a GGUF file (magic, metadata, tensor index, padding up to the data section).
 * Tensor data follows it back to back, each tensor padded to `alignment` (the offsets say where).
 * writeGguf uses it; a streaming writer (e.g. the synthetic model builder) writes the data itself.
 */
export function ggufHeader(input: { version?: 1 | 2 | 3; metadata: [string, GgufWriteValue][]; tensors: GgufTensorHeader[]; alignment?: number }): {
  header: Uint8Array; alignment: number; offsets: number[]; sizes: number[]; dataBytes: number;
} {
  const version = input.version ?? 3;
  const o = new Out(version >= 2);
  const alignEntry = input.metadata.find(([k]) => k === 'general.alignment');
  const alignment = input.alignment ?? (alignEntry ? Number(alignEntry[1].value) : 32);
  o.bytes(new Uint8Array([0x47, 0x47, 0x55, 0x46]));
  o.u32(version);
  o.count(input.tensors.length);
  o.count(input.metadata.length);
  for (const [key, v] of input.metadata) {
    o.string(key);
    o.u32(TYPE_ID[v.type]);
    if (v.type === 'array') writeItem(o, 'array', v);
    else writeItem(o, v.type, v.value);
  }
  // Lay tensor data out back to back, each padded to the alignment.
  const offsets: number[] = [];
  const sizes: number[] = [];
  let off = 0;
  for (const t of input.tensors) {
    const n = ggufTensorBytes(t);
    offsets.push(off);
    sizes.push(n);
    off += Math.ceil(n / alignment) * alignment;
  }
  input.tensors.forEach((t, i) => {
    o.string(t.name);
    o.u32(t.dims.length);
    for (const d of t.dims) { if (version >= 2) o.u64(d); else o.u32(d); }
    o.u32(t.type);
    o.u64(offsets[i]!);
  });
  if (input.tensors.length > 0) o.pad(alignment);
  return { header: o.buf.slice(0, o.len), alignment, offsets, sizes, dataBytes: off };
}

/** Serialises a GGUF file to bytes. */
export function writeGguf(input: GgufWriteInput): Uint8Array {
  input.tensors.forEach((t) => {
    const expect = ggufTensorBytes(t);
    if (t.data.length !== expect) throw new Error(`writeGguf: tensor "${t.name}" has ${t.data.length} bytes, its shape needs ${expect}`);
  });
  const h = ggufHeader(input);
  const out = new Uint8Array(h.header.length + h.dataBytes);
  out.set(h.header, 0);
  input.tensors.forEach((t, i) => out.set(t.data, h.header.length + h.offsets[i]!));
  return out;
}
