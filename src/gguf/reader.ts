// GGUF reader, versions 1-3. Parses the header (metadata + tensor index) from a ByteSource and
// reads tensor data on demand, straight into the caller's buffer.
//
// Every count and length is checked against the bytes left in the file before anything is
// allocated, so a corrupt header can never make us allocate more than the file size or loop
// for long: every loop iteration consumes at least one byte of a bounded file.

import { GgufError } from './errors.js';
import { ggmlTypeInfo } from './ggml-types.js';
import { type ByteSource, memorySource } from './source.js';

export const GGUF_MAGIC = 0x46554747; // "GGUF" little-endian
export const GGUF_DEFAULT_ALIGNMENT = 32;
const MAX_DIMS = 4;
const MAX_NESTING = 8;

/** Metadata value type ids, as stored. */
export const GgufValueType = {
  UINT8: 0, INT8: 1, UINT16: 2, INT16: 3, UINT32: 4, INT32: 5, FLOAT32: 6, BOOL: 7,
  STRING: 8, ARRAY: 9, UINT64: 10, INT64: 11, FLOAT64: 12,
} as const;
const SCALAR_SIZE: Record<number, number> = { 0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8 };

/**
 * A metadata value as plain JS: number (bigint for 64-bit ints beyond 2^53), boolean, string;
 * arrays of strings as string[], numeric arrays as typed arrays, nested arrays as unknown[].
 */
export type GgufMetaValue =
  | number | bigint | boolean | string | string[]
  | Uint8Array | Int8Array | Uint16Array | Int16Array | Uint32Array | Int32Array | Float32Array
  | BigUint64Array | BigInt64Array | Float64Array | boolean[] | unknown[];

export interface GgufMetaEntry {
  value: GgufMetaValue;
  /** value type id; for arrays, ARRAY */
  type: number;
  /** for arrays, the element type id */
  arrayType?: number;
  /** byte offset of the key in the file */
  offset: number;
}

export interface GgufTensorInfo {
  name: string;
  /** GGUF order: dims[0] is the row length (ne0) */
  dims: number[];
  type: number;
  /** offset relative to the data section */
  offset: number;
  /** absolute offset in the file */
  fileOffset: number;
  nElements: number;
  nBytes: number;
  /** the shard holding it, in a split model merged by mergeShards (src/gguf/split.ts) */
  shard?: number;
}

export interface GgufFile {
  name: string;
  version: number;
  size: number;
  alignment: number;
  /** absolute offset of the data section */
  dataOffset: number;
  metadata: Map<string, GgufMetaValue>;
  metaEntries: Map<string, GgufMetaEntry>;
  tensors: GgufTensorInfo[];
  tensorsByName: Map<string, GgufTensorInfo>;
  source: ByteSource;
  /** a split model's shards (mergeShards); `size` is then their total and `source` reads them end to end */
  shards?: { name: string; size: number; base: number; dataOffset: number; nTensors: number }[];
}

const WINDOW = 1 << 20;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** What is being read, for error messages: a string, or a function building it only when needed. */
type Desc = string | (() => string);
const desc = (d: Desc) => (typeof d === 'string' ? d : d());

/** Sequential reader over a ByteSource that fetches the header in windows. */
class Cursor {
  pos = 0;
  private buf: Uint8Array = new Uint8Array(0);
  private win: Uint8Array = new Uint8Array(0);
  private view = new DataView(this.buf.buffer);
  private base = 0;
  constructor(private readonly src: ByteSource, readonly wide: boolean) {}

  get remaining(): number { return this.src.size - this.pos; }

  fail(code: ConstructorParameters<typeof GgufError>[0], msg: string, at = this.pos): never {
    throw new GgufError(code, msg, this.src.name, at);
  }

  /** Makes sure n bytes at pos are in the window; returns the window index of pos. */
  private ensure(n: number, what: Desc): number {
    if (this.pos + n > this.src.size) this.fail('TRUNCATED', `file ends while reading ${desc(what)} (${n} bytes needed, ${this.remaining} left)`);
    let i = this.pos - this.base;
    if (i < 0 || i + n > this.buf.length) {
      let len = Math.min(Math.max(n, WINDOW), this.src.size - this.pos);
      // a streaming source: a window within what it holds, so only bytes the header needs are fetched
      const held = this.src.prefixBytes;
      if (held !== undefined && this.pos + n <= held) len = Math.min(len, held - this.pos);
      // one reused window buffer (a fresh 1 MiB per window adds up over a 150k-token vocabulary)
      if (len > this.win.length) this.win = new Uint8Array(len);
      this.buf = this.src.read(this.pos, len, this.win, 0).subarray(0, len);
      this.view = new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.byteLength);
      this.base = this.pos;
      i = 0;
    }
    return i;
  }

  u8(what: Desc): number { const i = this.ensure(1, what); this.pos += 1; return this.buf[i]!; }
  i8(what: Desc): number { const i = this.ensure(1, what); this.pos += 1; return this.view.getInt8(i); }
  u16(what: Desc): number { const i = this.ensure(2, what); this.pos += 2; return this.view.getUint16(i, true); }
  i16(what: Desc): number { const i = this.ensure(2, what); this.pos += 2; return this.view.getInt16(i, true); }
  u32(what: Desc): number { const i = this.ensure(4, what); this.pos += 4; return this.view.getUint32(i, true); }
  i32(what: Desc): number { const i = this.ensure(4, what); this.pos += 4; return this.view.getInt32(i, true); }
  f32(what: Desc): number { const i = this.ensure(4, what); this.pos += 4; return this.view.getFloat32(i, true); }
  f64(what: Desc): number { const i = this.ensure(8, what); this.pos += 8; return this.view.getFloat64(i, true); }
  u64(what: Desc): bigint { const i = this.ensure(8, what); this.pos += 8; return this.view.getBigUint64(i, true); }
  i64(what: Desc): bigint { const i = this.ensure(8, what); this.pos += 8; return this.view.getBigInt64(i, true); }

  /** A length or count field: u32 in v1, u64 after. Returned as a number; huge values fail. */
  count(what: Desc, minBytesEach: number): number {
    const at = this.pos;
    // a u64 whose high word is 0 (every real count) is read without a BigInt
    let small = -1;
    if (!this.wide) small = this.u32(what);
    else {
      const i = this.ensure(8, what);
      if (this.view.getUint32(i + 4, true) === 0) { small = this.view.getUint32(i, true); this.pos += 8; }
    }
    if (small >= 0 && small <= Math.floor(this.remaining / Math.max(1, minBytesEach))) return small;
    const raw = small >= 0 ? BigInt(small) : this.u64(what);
    // Every element takes at least minBytesEach bytes, so a count beyond that bound cannot be real.
    if (raw > BigInt(Math.floor(this.remaining / Math.max(1, minBytesEach)))) {
      // A plausible value that merely runs past the end means the file was cut short.
      const w = desc(what);
      if (raw <= 0x7fffffffn) this.fail('TRUNCATED', `file ends inside ${w.replace(/^(length|element count) of /, '')} (${w} is ${raw}, ${this.remaining} bytes left)`, at);
      this.fail('COUNT_TOO_LARGE', `${w} is ${raw}, more than the ${this.remaining} bytes left in the file could hold`, at);
    }
    return Number(raw);
  }

  bytes(n: number, what: Desc): Uint8Array {
    const i = this.ensure(n, what);
    this.pos += n;
    return this.buf.subarray(i, i + n);
  }

  string(what: string): string { return this.stringOf(what, -1); }

  /** Element i of string array `what` (i < 0: the string `what` itself); messages are built only on failure. */
  stringOf(what: string, i: number): string {
    const at = this.pos;
    const name = () => (i < 0 ? what : `${what}[${i}]`);
    const n = this.count(() => `length of ${name()}`, 1);
    const b = this.bytes(n, name);
    try {
      return utf8.decode(b);
    } catch {
      this.fail('INVALID_UTF8', `${name()} is not valid UTF-8`, at);
    }
  }

  /** Element i of string array `what`, checked (length, bounds, UTF-8) but not decoded. */
  skipString(what: string, i: number): void {
    const at = this.pos;
    const name = () => `${what}[${i}]`;
    const n = this.count(() => `length of ${name()}`, 1);
    const b = this.bytes(n, name);
    if (!validUtf8(b)) this.fail('INVALID_UTF8', `${name()} is not valid UTF-8`, at);
  }

  /** A copy of the file bytes [from, to) (already parsed). */
  copy(from: number, to: number): Uint8Array {
    const out = new Uint8Array(to - from);
    this.src.read(from, to - from, out, 0);
    return out;
  }

  align(a: number): void { this.pos = Math.ceil(this.pos / a) * a; }
}

/** String arrays with at least this many elements (vocabularies) are decoded on first use. */
const LAZY_STRINGS_MIN = 4096;

/**
 * A parsed-and-checked string array kept as its file bytes: 150k token strings cost ~15 MiB of JS heap
 * (more in young-generation growth) that `bench`, `inspect` or a memory-bound run may never need.
 */
class LazyStrings {
  constructor(private readonly bytes: Uint8Array, readonly length: number, private readonly wide: boolean) {}
  decode(): string[] {
    const out: string[] = new Array(this.length);
    const v = new DataView(this.bytes.buffer, this.bytes.byteOffset, this.bytes.byteLength);
    let p = 0;
    for (let i = 0; i < this.length; i++) {
      const n = this.wide ? v.getUint32(p, true) + v.getUint32(p + 4, true) * 2 ** 32 : v.getUint32(p, true);
      p += this.wide ? 8 : 4;
      out[i] = utf8.decode(this.bytes.subarray(p, p + n));
      p += n;
    }
    return out;
  }
}

/** Metadata values as a Map whose lazily decoded string arrays turn into string[] when read. */
class GgufMetadata extends Map<string, GgufMetaValue> {
  override get(key: string): GgufMetaValue | undefined {
    const v = super.get(key);
    if (!(v instanceof LazyStrings)) return v;
    const arr = v.decode();
    super.set(key, arr);
    return arr;
  }
  override forEach(cb: (value: GgufMetaValue, key: string, map: Map<string, GgufMetaValue>) => void, thisArg?: unknown): void {
    for (const k of [...this.keys()]) cb.call(thisArg, this.get(k)!, k, this);
  }
  override *entries(): MapIterator<[string, GgufMetaValue]> {
    for (const k of [...this.keys()]) yield [k, this.get(k)!];
  }
  override *values(): MapIterator<GgufMetaValue> {
    for (const k of [...this.keys()]) yield this.get(k)!;
  }
  override [Symbol.iterator](): MapIterator<[string, GgufMetaValue]> { return this.entries(); }
  /** element count of an array value without decoding a lazy string array */
  arrayLength(key: string): number | undefined {
    const v = super.get(key);
    return v instanceof LazyStrings ? v.length : v !== undefined && typeof v === 'object' ? (v as ArrayLike<unknown>).length : undefined;
  }
}

/** Same as TextDecoder('utf-8', { fatal: true }) accepting the bytes (no overlongs, surrogates or > U+10FFFF). */
function validUtf8(b: Uint8Array): boolean {
  const n = b.length;
  let i = 0;
  while (i < n) {
    const c = b[i]!;
    if (c < 0x80) { i++; continue; }
    let need: number, lo = 0x80, hi = 0xbf;
    if (c >= 0xc2 && c <= 0xdf) need = 1;
    else if (c >= 0xe0 && c <= 0xef) { need = 2; if (c === 0xe0) lo = 0xa0; else if (c === 0xed) hi = 0x9f; }
    else if (c >= 0xf0 && c <= 0xf4) { need = 3; if (c === 0xf0) lo = 0x90; else if (c === 0xf4) hi = 0x8f; }
    else return false;
    if (i + need >= n) return false;
    const c1 = b[i + 1]!;
    if (c1 < lo || c1 > hi) return false;
    for (let k = 2; k <= need; k++) { const ck = b[i + k]!; if (ck < 0x80 || ck > 0xbf) return false; }
    i += need + 1;
  }
  return true;
}

function toNumber(v: bigint): number | bigint {
  return v <= BigInt(Number.MAX_SAFE_INTEGER) && v >= BigInt(Number.MIN_SAFE_INTEGER) ? Number(v) : v;
}

function readScalar(c: Cursor, type: number, what: string): number | bigint | boolean {
  switch (type) {
    case 0: return c.u8(what);
    case 1: return c.i8(what);
    case 2: return c.u16(what);
    case 3: return c.i16(what);
    case 4: return c.u32(what);
    case 5: return c.i32(what);
    case 6: return c.f32(what);
    case 7: return c.u8(what) !== 0;
    case 10: return toNumber(c.u64(what));
    case 11: return toNumber(c.i64(what));
    case 12: return c.f64(what);
  }
  return c.fail('UNKNOWN_VALUE_TYPE', `${what} has unknown value type ${type}`);
}

function readArray(c: Cursor, what: string, depth: number): { value: GgufMetaValue | LazyStrings; arrayType: number } {
  if (depth > MAX_NESTING) c.fail('NESTING_TOO_DEEP', `${what}: arrays nested more than ${MAX_NESTING} deep`);
  const typeAt = c.pos;
  const et = c.u32(`element type of ${what}`);
  if (et === GgufValueType.STRING) {
    const n = c.count(`element count of ${what}`, c.wide ? 8 : 4);
    if (n >= LAZY_STRINGS_MIN && depth === 1) {
      // a vocabulary: checked now (lengths, bounds, UTF-8), decoded into strings on first use
      const start = c.pos;
      for (let i = 0; i < n; i++) c.skipString(what, i);
      return { value: new LazyStrings(c.copy(start, c.pos), n, c.wide), arrayType: et };
    }
    const out: string[] = new Array(n);
    // no per-element description strings: a 150k-token vocabulary would allocate 300k of them
    for (let i = 0; i < n; i++) out[i] = c.stringOf(what, i);
    return { value: out, arrayType: et };
  }
  if (et === GgufValueType.ARRAY) {
    const n = c.count(`element count of ${what}`, 4 + (c.wide ? 8 : 4));
    const out: unknown[] = new Array(n);
    for (let i = 0; i < n; i++) out[i] = readArray(c, `${what}[${i}]`, depth + 1).value; // depth > 1: never lazy
    return { value: out, arrayType: et };
  }
  const size = SCALAR_SIZE[et];
  if (size === undefined) c.fail('UNKNOWN_VALUE_TYPE', `${what} has unknown element type ${et}`, typeAt);
  const n = c.count(`element count of ${what}`, size);
  const raw = c.bytes(n * size, what).slice(); // copy: aligned and owned
  const buf = raw.buffer;
  switch (et) {
    case 0: return { value: raw, arrayType: et };
    case 1: return { value: new Int8Array(buf), arrayType: et };
    case 2: return { value: new Uint16Array(buf), arrayType: et };
    case 3: return { value: new Int16Array(buf), arrayType: et };
    case 4: return { value: new Uint32Array(buf), arrayType: et };
    case 5: return { value: new Int32Array(buf), arrayType: et };
    case 6: return { value: new Float32Array(buf), arrayType: et };
    case 7: return { value: Array.from(raw, (b) => b !== 0), arrayType: et };
    case 10: return { value: new BigUint64Array(buf), arrayType: et };
    case 11: return { value: new BigInt64Array(buf), arrayType: et };
    default: return { value: new Float64Array(buf), arrayType: et };
  }
}

/** Parses a GGUF file from any ByteSource. Tensor data is not read. */
export function parseGgufSource(src: ByteSource): GgufFile {
  const name = src.name;
  if (src.size < 8) throw new GgufError(src.size >= 4 ? 'TRUNCATED' : 'BAD_MAGIC', `file is ${src.size} bytes, too short for a GGUF header`, name, 0);
  const probe = new Cursor(src, false);
  const magic = probe.u32('magic');
  if (magic !== GGUF_MAGIC) {
    const shown = Array.from(src.read(0, 4), (b) => (b >= 32 && b < 127 ? String.fromCharCode(b) : `\\x${b.toString(16).padStart(2, '0')}`)).join('');
    throw new GgufError('BAD_MAGIC', `not a GGUF file (magic "${shown}", expected "GGUF")`, name, 0);
  }
  const version = probe.u32('version');
  if (version < 1 || version > 3) throw new GgufError('UNSUPPORTED_VERSION', `GGUF version ${version} is not supported (1, 2 and 3 are)`, name, 4);
  const c: Cursor = new Cursor(src, version >= 2);
  c.pos = 8;
  const wide = version >= 2;
  const tensorInfoMin = (wide ? 8 : 4) + 4 + 4 + 8; // name length, n_dims, type, offset
  const nTensors = c.count('tensor count', tensorInfoMin);
  const nKv = c.count('metadata key count', (wide ? 8 : 4) + 4 + 1);

  const metadata = new GgufMetadata();
  const metaEntries = new Map<string, GgufMetaEntry>();
  for (let k = 0; k < nKv; k++) {
    const at = c.pos;
    const key = c.string(`key of metadata entry ${k}`);
    if (metaEntries.has(key)) c.fail('DUPLICATE_KEY', `metadata key "${key}" appears twice`, at);
    const typeAt = c.pos;
    const type = c.u32(`value type of "${key}"`);
    let entry: GgufMetaEntry;
    if (type === GgufValueType.STRING) entry = { value: c.string(`value of "${key}"`), type, offset: at };
    else if (type === GgufValueType.ARRAY) {
      const a = readArray(c, `"${key}"`, 1);
      if (a.value instanceof LazyStrings) {
        // the entry reads through the metadata map, so both see the one decoded array
        const k = key;
        entry = { get value() { return metadata.get(k)!; }, type, arrayType: a.arrayType, offset: at };
        metaEntries.set(key, entry);
        metadata.set(key, a.value as unknown as GgufMetaValue);
        continue;
      }
      entry = { value: a.value as GgufMetaValue, type, arrayType: a.arrayType, offset: at };
    } else if (SCALAR_SIZE[type] !== undefined) entry = { value: readScalar(c, type, `value of "${key}"`), type, offset: at };
    else c.fail('UNKNOWN_VALUE_TYPE', `metadata key "${key}" has unknown value type ${type}`, typeAt);
    metaEntries.set(key, entry);
    metadata.set(key, entry.value);
  }

  let alignment = GGUF_DEFAULT_ALIGNMENT;
  const al = metaEntries.get('general.alignment');
  if (al) {
    const v = al.value;
    if (al.type !== GgufValueType.UINT32 || typeof v !== 'number' || v === 0 || (v & (v - 1)) !== 0) {
      throw new GgufError('BAD_ALIGNMENT', `general.alignment must be a power-of-two u32, got ${String(v)}`, name, al.offset);
    }
    alignment = v;
  }

  const tensors: GgufTensorInfo[] = [];
  const tensorsByName = new Map<string, GgufTensorInfo>();
  for (let t = 0; t < nTensors; t++) {
    const at = c.pos;
    const tname = c.string(`name of tensor ${t}`);
    if (tensorsByName.has(tname)) c.fail('DUPLICATE_TENSOR', `tensor "${tname}" appears twice`, at);
    const ndAt = c.pos;
    const nDims = c.u32(`n_dims of tensor "${tname}"`);
    if (nDims < 1 || nDims > MAX_DIMS) c.fail('BAD_DIMS', `tensor "${tname}" has ${nDims} dimensions (1..${MAX_DIMS} allowed)`, ndAt);
    const dims: number[] = [];
    let nEl = 1n;
    for (let d = 0; d < nDims; d++) {
      const dAt = c.pos;
      const v = wide ? c.i64(`dim ${d} of tensor "${tname}"`) : BigInt(c.u32(`dim ${d} of tensor "${tname}"`));
      if (v < 0n) c.fail('BAD_DIMS', `tensor "${tname}" dim ${d} is negative (${v})`, dAt);
      nEl *= v;
      if (nEl > BigInt(Number.MAX_SAFE_INTEGER)) c.fail('DIM_OVERFLOW', `tensor "${tname}" has more elements than can be addressed`, dAt);
      dims.push(Number(v));
    }
    const typeAt = c.pos;
    const type = c.u32(`type of tensor "${tname}"`);
    const info = ggmlTypeInfo(type);
    if (!info) c.fail('UNKNOWN_GGML_TYPE', `tensor "${tname}" has unknown ggml type ${type}`, typeAt);
    if (dims[0]! % info.blockSize !== 0) c.fail('BAD_DIMS', `tensor "${tname}" row of ${dims[0]} values is not a multiple of ${info.name}'s block size ${info.blockSize}`, ndAt);
    const offAt = c.pos;
    const off = c.u64(`data offset of tensor "${tname}"`);
    if (off > BigInt(Number.MAX_SAFE_INTEGER)) c.fail('DATA_OUT_OF_BOUNDS', `tensor "${tname}" data offset ${off} is beyond any file`, offAt);
    const offset = Number(off);
    if (offset % alignment !== 0) c.fail('MISALIGNED', `tensor "${tname}" data offset ${offset} is not a multiple of the alignment ${alignment}`, offAt);
    const nElements = Number(nEl);
    const nBytes = (nElements / info.blockSize) * info.typeSize;
    if (!Number.isSafeInteger(nBytes)) c.fail('DIM_OVERFLOW', `tensor "${tname}" byte size overflows`, ndAt);
    const ti: GgufTensorInfo = { name: tname, dims, type, offset, fileOffset: 0, nElements, nBytes };
    tensors.push(ti);
    tensorsByName.set(tname, ti);
  }
  c.align(alignment);
  const dataOffset = c.pos;

  // Tensor data must lie inside the file and no two tensors may share bytes.
  const dataSize = src.size - dataOffset;
  for (const t of tensors) {
    t.fileOffset = dataOffset + t.offset;
    if (t.offset + t.nBytes > dataSize) {
      throw new GgufError('DATA_OUT_OF_BOUNDS', `tensor "${t.name}" data [${t.offset}, ${t.offset + t.nBytes}) lies outside the ${Math.max(0, dataSize)}-byte data section`, name, t.fileOffset);
    }
  }
  const sorted = [...tensors].sort((a, b) => a.offset - b.offset);
  for (let i = 1; i < sorted.length; i++) {
    const prev = sorted[i - 1]!;
    const cur = sorted[i]!;
    if (prev.nBytes > 0 && cur.nBytes > 0 && prev.offset + prev.nBytes > cur.offset) {
      throw new GgufError('DATA_OVERLAP', `tensors "${prev.name}" and "${cur.name}" overlap in the data section`, name, cur.fileOffset);
    }
  }
  return { name, version, size: src.size, alignment, dataOffset, metadata, metaEntries, tensors, tensorsByName, source: src };
}

/** Parses GGUF bytes already in memory. */
export function parseGguf(bytes: Uint8Array, name = '<memory>'): GgufFile {
  return parseGgufSource(memorySource(bytes, name));
}

/** Reads a tensor's bytes, straight into `dest` when given (no intermediate copy). */
export function readTensorData(file: GgufFile, tensor: GgufTensorInfo | string, dest?: Uint8Array, destOffset = 0): Uint8Array {
  const t = typeof tensor === 'string' ? file.tensorsByName.get(tensor) : tensor;
  if (!t) throw new GgufError('MISSING_TENSOR', `no tensor named "${String(tensor)}"`, file.name);
  if (dest) {
    file.source.read(t.fileOffset, t.nBytes, dest, destOffset);
    return dest.subarray(destOffset, destOffset + t.nBytes);
  }
  const out = new Uint8Array(t.nBytes);
  file.source.read(t.fileOffset, t.nBytes, out, 0);
  return out;
}

// ---- typed metadata accessors: undefined when absent, GgufError when the type is wrong ----

export function metaString(f: GgufFile, key: string): string | undefined {
  const v = f.metadata.get(key);
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw new GgufError('WRONG_TYPE', `metadata "${key}" is not a string`, f.name, f.metaEntries.get(key)?.offset);
  return v;
}

export function metaNumber(f: GgufFile, key: string): number | undefined {
  const v = f.metadata.get(key);
  if (v === undefined) return undefined;
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'boolean') return v ? 1 : 0;
  throw new GgufError('WRONG_TYPE', `metadata "${key}" is not a number`, f.name, f.metaEntries.get(key)?.offset);
}

export function metaBool(f: GgufFile, key: string): boolean | undefined {
  const v = f.metadata.get(key);
  if (v === undefined) return undefined;
  if (typeof v === 'boolean') return v;
  if (typeof v === 'number') return v !== 0;
  throw new GgufError('WRONG_TYPE', `metadata "${key}" is not a bool`, f.name, f.metaEntries.get(key)?.offset);
}

/** Element count of an array value (undefined when absent or not an array), without decoding a lazy string array. */
export function metaArrayLength(f: GgufFile, key: string): number | undefined {
  const m = f.metadata as Map<string, GgufMetaValue> & { arrayLength?(k: string): number | undefined };
  if (m.arrayLength) return m.arrayLength(key);
  const v = m.get(key);
  return v !== undefined && typeof v === 'object' ? (v as ArrayLike<unknown>).length : undefined;
}

export function metaArray(f: GgufFile, key: string): Exclude<GgufMetaValue, number | bigint | boolean | string> | undefined {
  const v = f.metadata.get(key);
  if (v === undefined) return undefined;
  if (typeof v !== 'object') throw new GgufError('WRONG_TYPE', `metadata "${key}" is not an array`, f.name, f.metaEntries.get(key)?.offset);
  return v;
}
