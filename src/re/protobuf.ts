// Schema-less protobuf wire decoding. Without a schema a length-delimited field is ambiguous (message,
// string, packed numbers or bytes), so every plausible reading is kept as a "view" and one is chosen
// with a stated reason; a tool user, or a test holding the real schema, can pick another view.

import { hex, isPrintableText, jsonNumber, tryUtf8 } from './bytes.js';
import { shannonEntropy } from './entropy.js';
import { flatbufferRoot } from './flatbuffer.js';

export interface PbVarint {
  /** 64-bit values as decimal strings: JSON numbers lose precision past 2^53 */
  unsigned: string;
  signed: string;
  zigzag: string;
}
export interface PbFixed32 { u32: number; i32: number; f32: number | string }
export interface PbFixed64 { u64: string; i64: string; f64: number | string }

export interface PbPacked {
  varint?: PbVarint[];
  fixed32?: PbFixed32[];
  fixed64?: PbFixed64[];
  /** views hold at most `maxPacked` items; the rest are counted, not listed */
  truncated?: boolean;
}

export type PbLenKind = 'message' | 'string' | 'packed' | 'bytes';

export interface PbLen {
  dataOffset: number;
  size: number;
  as: PbLenKind;
  reason: string;
  message?: PbField[];
  /** why the bytes are not a message (when they are not) */
  messageError?: string;
  string?: string;
  packed?: PbPacked;
  entropy: number;
  preview: string;
  /** set when the bytes start with a plausible flatbuffer: the root table's absolute offset */
  flatbufferRoot?: number;
}

export type PbWireName = 'varint' | 'fixed64' | 'len' | 'group' | 'fixed32';

export interface PbField {
  /** absolute offset of the tag */
  offset: number;
  /** absolute offset just past the field */
  end: number;
  field: number;
  wireType: number;
  wire: PbWireName;
  varint?: PbVarint;
  fixed32?: PbFixed32;
  fixed64?: PbFixed64;
  len?: PbLen;
  group?: PbField[];
}

export interface PbDecodeOptions {
  /** nesting limit for messages tried inside length-delimited fields (default 32) */
  maxDepth?: number;
  /** items kept per packed view (default 4096) */
  maxPacked?: number;
}

export interface PbResult {
  /** offset of the first decoded byte within the file (the --offset) */
  base: number;
  size: number;
  fields: PbField[];
  /** set when decoding stopped early; `fields` holds everything before the failure */
  error?: { offset: number; message: string };
}

interface Ctx { buf: Uint8Array; base: number; maxDepth: number; maxPacked: number }

type ParseOk = { ok: true; fields: PbField[] };
type ParseErr = { ok: false; fields: PbField[]; offset: number; message: string };

const MAX_FIELD = 2 ** 29 - 1;
const WIRE_NAMES: Record<number, PbWireName> = { 0: 'varint', 1: 'fixed64', 2: 'len', 3: 'group', 5: 'fixed32' };

/** Reads a varint at `pos`; returns [value, nextPos] or a string error. */
function readVarint(buf: Uint8Array, pos: number, end: number): [bigint, number] | string {
  let result = 0n;
  let shift = 0n;
  for (let i = 0; i < 10; i++) {
    if (pos + i >= end) return 'truncated varint';
    const b = buf[pos + i]!;
    result |= BigInt(b & 0x7f) << shift;
    if (!(b & 0x80)) return [BigInt.asUintN(64, result), pos + i + 1];
    shift += 7n;
  }
  return 'varint longer than 10 bytes';
}

function varintViews(v: bigint): PbVarint {
  return {
    unsigned: v.toString(),
    signed: BigInt.asIntN(64, v).toString(),
    zigzag: ((v >> 1n) ^ -(v & 1n)).toString(),
  };
}

function fixed32At(dv: DataView, pos: number): PbFixed32 {
  return { u32: dv.getUint32(pos, true), i32: dv.getInt32(pos, true), f32: jsonNumber(dv.getFloat32(pos, true)) };
}

function fixed64At(dv: DataView, pos: number): PbFixed64 {
  return {
    u64: dv.getBigUint64(pos, true).toString(),
    i64: dv.getBigInt64(pos, true).toString(),
    f64: jsonNumber(dv.getFloat64(pos, true)),
  };
}

function parseFields(ctx: Ctx, start: number, end: number, depth: number, groupField: number): ParseOk | ParseErr | { ok: true; fields: PbField[]; groupEnd: number } {
  const { buf } = ctx;
  const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const fields: PbField[] = [];
  let pos = start;
  const fail = (offset: number, message: string): ParseErr => ({ ok: false, fields, offset: ctx.base + offset, message });
  while (pos < end) {
    const tagStart = pos;
    const t = readVarint(buf, pos, end);
    if (typeof t === 'string') return fail(tagStart, `tag: ${t}`);
    const [tag, afterTag] = t;
    if (tag > 0xffffffffn) return fail(tagStart, `tag ${tag} exceeds 32 bits`);
    const wireType = Number(tag & 7n);
    const field = Number(tag >> 3n);
    if (field === 0) return fail(tagStart, 'field number 0 is invalid');
    if (field > MAX_FIELD) return fail(tagStart, `field number ${field} exceeds 2^29-1`);
    pos = afterTag;
    if (wireType === 4) {
      if (groupField === field) return { ok: true, fields, groupEnd: pos };
      return fail(tagStart, groupField ? `end-group for field ${field} inside group ${groupField}` : `end-group for field ${field} without a start-group`);
    }
    const wire = WIRE_NAMES[wireType];
    if (!wire) return fail(tagStart, `field ${field}: invalid wire type ${wireType}`);
    const f: PbField = { offset: ctx.base + tagStart, end: 0, field, wireType, wire };
    switch (wireType) {
      case 0: {
        const v = readVarint(buf, pos, end);
        if (typeof v === 'string') return fail(pos, `field ${field}: ${v}`);
        f.varint = varintViews(v[0]);
        pos = v[1];
        break;
      }
      case 1:
        if (pos + 8 > end) return fail(pos, `field ${field}: fixed64 needs 8 bytes, ${end - pos} left`);
        f.fixed64 = fixed64At(dv, pos);
        pos += 8;
        break;
      case 5:
        if (pos + 4 > end) return fail(pos, `field ${field}: fixed32 needs 4 bytes, ${end - pos} left`);
        f.fixed32 = fixed32At(dv, pos);
        pos += 4;
        break;
      case 2: {
        const l = readVarint(buf, pos, end);
        if (typeof l === 'string') return fail(pos, `field ${field}: length ${l}`);
        const [len, dataStart] = l;
        if (len > BigInt(end - dataStart)) return fail(pos, `field ${field}: length ${len} runs past the end (${end - dataStart} bytes left)`);
        const size = Number(len);
        f.len = classifyLen(ctx, dataStart, dataStart + size, depth);
        pos = dataStart + size;
        break;
      }
      case 3: {
        if (depth >= ctx.maxDepth) return fail(tagStart, `field ${field}: group nesting exceeds depth limit ${ctx.maxDepth}`);
        const g = parseFields(ctx, pos, end, depth + 1, field);
        if (!g.ok) return { ok: false, fields, offset: g.offset, message: g.message };
        if (!('groupEnd' in g)) return fail(pos, `field ${field}: group is not closed`);
        f.group = g.fields;
        pos = g.groupEnd;
        break;
      }
    }
    f.end = ctx.base + pos;
    fields.push(f);
  }
  if (groupField) return fail(pos, `group ${groupField} is not closed before the end`);
  return { ok: true, fields };
}

function packedViews(ctx: Ctx, start: number, end: number): PbPacked | undefined {
  const { buf, maxPacked } = ctx;
  const size = end - start;
  if (size === 0) return undefined;
  const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const out: PbPacked = {};
  // Varints: the whole range must split into complete varints.
  const vs: PbVarint[] = [];
  let pos = start;
  let ok = true;
  let count = 0;
  while (pos < end) {
    const v = readVarint(buf, pos, end);
    if (typeof v === 'string') { ok = false; break; }
    if (count < maxPacked) vs.push(varintViews(v[0]));
    else out.truncated = true;
    count++;
    pos = v[1];
  }
  if (ok) out.varint = vs;
  if (size % 4 === 0) {
    const n = Math.min(size / 4, maxPacked);
    const a: PbFixed32[] = [];
    for (let i = 0; i < n; i++) a.push(fixed32At(dv, start + 4 * i));
    if (n < size / 4) out.truncated = true;
    out.fixed32 = a;
  }
  if (size % 8 === 0) {
    const n = Math.min(size / 8, maxPacked);
    const a: PbFixed64[] = [];
    for (let i = 0; i < n; i++) a.push(fixed64At(dv, start + 8 * i));
    if (n < size / 8) out.truncated = true;
    out.fixed64 = a;
  }
  return out.varint || out.fixed32 || out.fixed64 ? out : undefined;
}

function plausibleFloat(x: number | string): boolean {
  if (typeof x === 'string') return false;
  const a = Math.abs(x);
  return a === 0 || (a > 1e-12 && a < 1e12);
}

/** Binary structures are full of zero bytes, which read as runs of zero varints; real packed lists rarely are. */
function zeroShare(vs: PbVarint[]): number {
  let z = 0;
  for (const v of vs) if (v.unsigned === '0') z++;
  return z / vs.length;
}

function classifyLen(ctx: Ctx, start: number, end: number, depth: number): PbLen {
  const bytes = ctx.buf.subarray(start, end);
  const size = end - start;
  const len: PbLen = {
    dataOffset: ctx.base + start, size, as: 'bytes', reason: '',
    entropy: Math.round(shannonEntropy(bytes) * 1000) / 1000, preview: hex(bytes, 16),
  };
  let msgOk = false;
  if (depth + 1 > ctx.maxDepth) {
    len.messageError = `depth limit ${ctx.maxDepth} reached`;
  } else {
    const m = parseFields(ctx, start, end, depth + 1, 0);
    if (m.ok) { len.message = m.fields; msgOk = true; }
    else len.messageError = `@${m.offset}: ${m.message}`;
  }
  const str = tryUtf8(bytes);
  if (str !== undefined) len.string = str;
  const printable = str !== undefined && isPrintableText(str);
  const packed = packedViews(ctx, start, end);
  if (packed) len.packed = packed;
  const fbRoot = msgOk || printable ? undefined : flatbufferRoot(bytes);
  if (fbRoot !== undefined) len.flatbufferRoot = ctx.base + start + fbRoot;

  if (size === 0) {
    len.reason = 'empty: an empty message, string, bytes or packed list look the same';
  } else if (msgOk && !printable) {
    len.as = 'message';
    len.reason = `parses as a message of ${len.message!.length} field(s) using all ${size} bytes`;
  } else if (printable) {
    len.as = 'string';
    len.reason = msgOk ? 'printable UTF-8; it would also parse as a message, but text is the likelier reading' : `not a message (${len.messageError}); printable UTF-8`;
  } else if (fbRoot !== undefined) {
    len.reason = `binary payload: starts like a flatbuffer (root table at ${len.flatbufferRoot}; try re flatbuffer --offset ${len.dataOffset})`;
  } else if (packed?.fixed64 && packed.fixed64.every((x) => plausibleFloat(x.f64)) && !packed.fixed32?.every((x) => plausibleFloat(x.f32))) {
    len.as = 'packed';
    len.reason = `not a message or text; ${size / 8} fixed64 values that all read as plausible doubles`;
  } else if (packed?.fixed32 && packed.fixed32.every((x) => plausibleFloat(x.f32))) {
    len.as = 'packed';
    len.reason = `not a message or text; ${size / 4} fixed32 values that all read as plausible floats`;
  } else if (packed?.varint && packed.varint.length > 0 && size / packed.varint.length <= 3 && zeroShare(packed.varint) < 0.5) {
    len.as = 'packed';
    len.reason = `not a message or text; splits into ${packed.varint.length} varints of ${(size / packed.varint.length).toFixed(1)} bytes on average`;
  } else {
    len.reason = `not a message (${len.messageError ?? 'depth limit'}), not printable UTF-8, no plausible packed reading`;
  }
  return len;
}

export function decodeProtobuf(buf: Uint8Array, opts: PbDecodeOptions = {}, base = 0): PbResult {
  const ctx: Ctx = { buf, base, maxDepth: opts.maxDepth ?? 32, maxPacked: opts.maxPacked ?? 4096 };
  const r = parseFields(ctx, 0, buf.length, 0, 0);
  const res: PbResult = { base, size: buf.length, fields: r.fields };
  if (!r.ok) res.error = { offset: r.offset, message: r.message };
  return res;
}

export interface PbBlob { path: string; offset: number; size: number; entropy: number; as: PbLenKind }

/** Large length-delimited payloads (weights, embedded files) with where they sit and how random they look. */
export function listBlobs(fields: PbField[], minSize: number, prefix = ''): PbBlob[] {
  const out: PbBlob[] = [];
  for (const f of fields) {
    const path = prefix ? `${prefix}.${f.field}` : String(f.field);
    if (f.len) {
      if (f.len.as === 'message' && f.len.message) out.push(...listBlobs(f.len.message, minSize, path));
      else if (f.len.size >= minSize) out.push({ path, offset: f.len.dataOffset, size: f.len.size, entropy: f.len.entropy, as: f.len.as });
    }
    if (f.group) out.push(...listBlobs(f.group, minSize, path));
  }
  return out;
}

/** Human-readable tree in the spirit of `protoc --decode_raw`, with offsets and the reason for each guess. */
export function formatProtobuf(fields: PbField[], indent = ''): string[] {
  const lines: string[] = [];
  for (const f of fields) {
    const at = `${indent}@${f.offset} ${f.field}:`;
    if (f.varint) {
      const v = f.varint;
      const extra = [v.signed !== v.unsigned ? `signed ${v.signed}` : '', v.zigzag !== v.unsigned ? `zigzag ${v.zigzag}` : ''].filter(Boolean).join(', ');
      lines.push(`${at} varint ${v.unsigned}${extra ? ` (${extra})` : ''}`);
    } else if (f.fixed32) {
      lines.push(`${at} fixed32 ${f.fixed32.u32} (i32 ${f.fixed32.i32}, f32 ${f.fixed32.f32})`);
    } else if (f.fixed64) {
      lines.push(`${at} fixed64 ${f.fixed64.u64} (i64 ${f.fixed64.i64}, f64 ${f.fixed64.f64})`);
    } else if (f.group) {
      lines.push(`${at} group {`);
      lines.push(...formatProtobuf(f.group, indent + '  '));
      lines.push(`${indent}}`);
    } else if (f.len) {
      const l = f.len;
      const head = `${at} len ${l.size} @${l.dataOffset} → ${l.as}`;
      if (l.as === 'message') {
        lines.push(`${head} {  # ${l.reason}`);
        lines.push(...formatProtobuf(l.message!, indent + '  '));
        lines.push(`${indent}}`);
      } else if (l.as === 'string') {
        const s = l.string!.length > 200 ? JSON.stringify(l.string!.slice(0, 200)) + '…' : JSON.stringify(l.string);
        lines.push(`${head} ${s}  # ${l.reason}`);
      } else if (l.as === 'packed') {
        const p = l.packed!;
        const show = l.reason.includes('doubles') ? p.fixed64!.map((x) => x.f64) : l.reason.includes('floats') ? p.fixed32!.map((x) => x.f32) : p.varint!.map((x) => x.unsigned);
        const list = show.slice(0, 16).join(', ') + (show.length > 16 ? `, … (${show.length})` : '');
        lines.push(`${head} [${list}]  # ${l.reason}`);
      } else {
        lines.push(`${head} ${l.preview}  # entropy ${l.entropy} bits/byte; ${l.reason}`);
      }
    }
  }
  return lines;
}
