// Schema-less flatbuffer walking from a root offset. Without the schema a field slot is just bytes, so each
// field gets every reading that passes bounds checks (scalar widths, string, vector, table) and one guess
// with its reason. Offsets in the output are absolute file offsets; alignment is judged relative to the
// buffer start, because flatbuffers aligns within the buffer.

import { isPrintableText, jsonNumber, tryUtf8 } from './bytes.js';
import { ReError } from './errors.js';

export interface FbOptions {
  /** table nesting limit (default 32) */
  maxDepth?: number;
  /** total tables decoded before the walk stops descending (default 20000); bounds time on hostile input */
  maxNodes?: number;
  /** vector elements inspected and listed (default 256) */
  maxVectorItems?: number;
}

export interface FbScalars {
  u8?: number; i8?: number; u16?: number; i16?: number; u32?: number; i32?: number; f32?: number | string;
  u64?: string; i64?: string; f64?: number | string;
}

export interface FbVector {
  offset: number;
  length: number;
  dataOffset: number;
  /** element widths (bytes) for which `length` elements fit in the buffer */
  elementWidths: number[];
  elements: 'table' | 'string' | 'unknown';
  tables?: FbTable[];
  strings?: string[];
  /** first bytes of the data, for scalar vectors whose element type is unknown */
  bytes?: number[];
  truncated?: boolean;
}

export type FbGuess = 'scalar' | 'string' | 'vector' | 'table';

export interface FbField {
  /** field id = vtable slot index */
  slot: number;
  offset: number;
  /** bytes from this field to the next field or the object end: an upper bound on its width */
  maxWidth: number;
  scalar: FbScalars;
  guess: FbGuess;
  reason: string;
  target?: number;
  string?: string;
  vector?: FbVector;
  table?: FbTable;
}

export interface FbTable {
  offset: number;
  vtable: { offset: number; size: number; objectSize: number; slots: number };
  fields: FbField[];
  /** set when the depth or node budget stopped the walk here */
  stopped?: string;
}

export interface FbResult {
  base: number;
  size: number;
  rootOffset: number;
  fileIdentifier?: string;
  root: FbTable;
}

interface Ctx { buf: Uint8Array; dv: DataView; base: number; end: number; maxDepth: number; maxNodes: number; maxVec: number; nodes: number }

type TableInfo = { vt: number; vtSize: number; objSize: number; slots: number[] };

/** Structural checks for a table at relative `pos`; a string names the first failed check. */
function tableInfo(ctx: Ctx, pos: number): TableInfo | string {
  const { dv, end } = ctx;
  if (pos % 4 !== 0) return 'not 4-aligned';
  if (pos + 4 > end) return 'no room for the vtable offset';
  const vt = pos - dv.getInt32(pos, true);
  if (vt < 0 || vt + 4 > end || vt % 2 !== 0) return `vtable at ${ctx.base + vt} is out of bounds or misaligned`;
  const vtSize = dv.getUint16(vt, true);
  const objSize = dv.getUint16(vt + 2, true);
  if (vtSize < 4 || vtSize % 2 !== 0 || vt + vtSize > end) return `vtable size ${vtSize} is invalid`;
  if (objSize < 4 || pos + objSize > end) return `object size ${objSize} is invalid`;
  // A vtable never sits inside the object it describes.
  if (vt < pos + objSize && vt + vtSize > pos) return 'vtable overlaps its object';
  const slots: number[] = [];
  for (let i = 0; i < (vtSize - 4) / 2; i++) {
    const f = dv.getUint16(vt + 4 + 2 * i, true);
    if (f !== 0 && (f < 4 || f >= objSize)) return `slot ${i} offset ${f} is outside the object (${objSize} bytes)`;
    slots.push(f);
  }
  return { vt, vtSize, objSize, slots };
}

function stringAt(ctx: Ctx, pos: number): string | undefined {
  const { dv, end } = ctx;
  if (pos % 4 !== 0 || pos + 4 > end) return undefined;
  const len = dv.getUint32(pos, true);
  if (pos + 4 + len >= end) return undefined; // the NUL terminator must fit too
  if (ctx.buf[pos + 4 + len] !== 0) return undefined;
  const s = tryUtf8(ctx.buf.subarray(pos + 4, pos + 4 + len));
  return s !== undefined && isPrintableText(s) ? s : undefined;
}

function uoffsetTarget(ctx: Ctx, pos: number): number | undefined {
  if (pos + 4 > ctx.end) return undefined;
  const u = ctx.dv.getUint32(pos, true);
  if (u === 0) return undefined;
  const t = pos + u;
  return t < ctx.end ? t : undefined;
}

function scalarsAt(ctx: Ctx, pos: number, maxWidth: number): FbScalars {
  const { dv } = ctx;
  const s: FbScalars = {};
  s.u8 = dv.getUint8(pos); s.i8 = dv.getInt8(pos);
  if (maxWidth >= 2 && pos % 2 === 0) { s.u16 = dv.getUint16(pos, true); s.i16 = dv.getInt16(pos, true); }
  if (maxWidth >= 4 && pos % 4 === 0) { s.u32 = dv.getUint32(pos, true); s.i32 = dv.getInt32(pos, true); s.f32 = jsonNumber(dv.getFloat32(pos, true)); }
  if (maxWidth >= 8 && pos % 8 === 0) { s.u64 = dv.getBigUint64(pos, true).toString(); s.i64 = dv.getBigInt64(pos, true).toString(); s.f64 = jsonNumber(dv.getFloat64(pos, true)); }
  return s;
}

function vectorAt(ctx: Ctx, pos: number, depth: number): FbVector | undefined {
  const { dv, end } = ctx;
  if (pos % 4 !== 0 || pos + 4 > end) return undefined;
  const length = dv.getUint32(pos, true);
  const data = pos + 4;
  const widths = [1, 2, 4, 8].filter((w) => data + length * w <= end);
  if (widths.length === 0) return undefined;
  const v: FbVector = { offset: ctx.base + pos, length, dataOffset: ctx.base + data, elementWidths: widths, elements: 'unknown' };
  const n = Math.min(length, ctx.maxVec);
  if (length > n) v.truncated = true;
  if (length > 0 && widths.includes(4)) {
    // Offsets to tables or strings: every inspected element must check out.
    const targets: number[] = [];
    for (let i = 0; i < n; i++) {
      const t = uoffsetTarget(ctx, data + 4 * i);
      if (t === undefined) break;
      targets.push(t);
    }
    if (targets.length === n) {
      const strs = targets.map((t) => stringAt(ctx, t));
      if (strs.every((s) => s !== undefined)) {
        v.elements = 'string';
        v.strings = strs as string[];
        return v;
      }
      if (targets.every((t) => typeof tableInfo(ctx, t) !== 'string')) {
        v.elements = 'table';
        v.tables = targets.map((t) => walkTable(ctx, t, depth + 1));
        return v;
      }
    }
  }
  v.bytes = Array.from(ctx.buf.subarray(data, Math.min(end, data + Math.min(length * widths[widths.length - 1]!, ctx.maxVec))));
  return v;
}

function walkTable(ctx: Ctx, pos: number, depth: number): FbTable {
  const info = tableInfo(ctx, pos);
  if (typeof info === 'string') throw new ReError('FB_MALFORMED', `table at ${ctx.base + pos}: ${info}`);
  const table: FbTable = {
    offset: ctx.base + pos,
    vtable: { offset: ctx.base + info.vt, size: info.vtSize, objectSize: info.objSize, slots: info.slots.length },
    fields: [],
  };
  ctx.nodes++;
  if (depth > ctx.maxDepth) { table.stopped = `depth limit ${ctx.maxDepth}`; return table; }
  if (ctx.nodes > ctx.maxNodes) { table.stopped = `node budget ${ctx.maxNodes} exhausted`; return table; }
  const present = info.slots.map((f, slot) => ({ f, slot })).filter((x) => x.f !== 0);
  const sortedOffsets = [...new Set(present.map((x) => x.f))].sort((a, b) => a - b);
  for (const { f, slot } of present) {
    const next = sortedOffsets.find((o) => o > f) ?? info.objSize;
    const at = pos + f;
    const maxWidth = next - f;
    const field: FbField = { slot, offset: ctx.base + at, maxWidth, scalar: scalarsAt(ctx, at, maxWidth), guess: 'scalar', reason: '' };
    table.fields.push(field);
    if (maxWidth < 4 || at % 4 !== 0) {
      field.reason = maxWidth < 4 ? `only ${maxWidth} byte(s) wide: too narrow for an offset` : 'not 4-aligned: cannot be an offset';
      continue;
    }
    const target = uoffsetTarget(ctx, at);
    if (target === undefined) { field.reason = 'as an offset it points outside the buffer (or is 0)'; continue; }
    if (target % 4 !== 0) { field.reason = `as an offset it points to ${ctx.base + target}, not 4-aligned`; continue; }
    field.target = ctx.base + target;
    // Every reading that passes its checks is kept as a view; the guess picks the likeliest.
    const str = stringAt(ctx, target);
    const vec = vectorAt(ctx, target, depth);
    const ti = tableInfo(ctx, target);
    if (str !== undefined) field.string = str;
    if (vec) field.vector = vec;
    if (typeof ti !== 'string') field.table = walkTable(ctx, target, depth + 1);
    // Builders write a table's vtable right before it, or reuse an earlier-built (higher) one; a vector's
    // length read as a vtable offset rarely lands on either, so that is what tells the two apart.
    const typical = typeof ti !== 'string' && (ti.vt + ti.vtSize === target || ti.vt > target);
    if (str !== undefined) {
      field.guess = 'string';
      field.reason = 'offset to a length-prefixed, NUL-terminated printable UTF-8 string';
    } else if (vec && vec.elements !== 'unknown') {
      field.guess = 'vector';
      field.reason = `offset to a vector of ${vec.length} ${vec.elements}s that all check out`;
    } else if (typeof ti !== 'string' && (typical || !vec)) {
      field.guess = 'table';
      field.reason = `offset to a structurally valid table (vtable ${typical ? 'where builders put it' : 'in bounds'})`;
    } else if (vec) {
      field.guess = 'vector';
      field.reason = `offset to a length ${vec.length} that fits as a vector of ${vec.elementWidths.join('/')}-byte elements (${typeof ti === 'string' ? `not a table: ${ti}` : 'a table reading is possible but atypical'})`;
    } else {
      field.reason = `not a string, vector or table at ${ctx.base + target} (${ti})`;
    }
  }
  return table;
}

export function walkFlatbuffer(buf: Uint8Array, opts: FbOptions = {}, base = 0): FbResult {
  const ctx: Ctx = {
    buf, dv: new DataView(buf.buffer, buf.byteOffset, buf.byteLength), base, end: buf.length,
    maxDepth: opts.maxDepth ?? 32, maxNodes: opts.maxNodes ?? 20000, maxVec: opts.maxVectorItems ?? 256, nodes: 0,
  };
  if (buf.length < 8) throw new ReError('FB_MALFORMED', `buffer at ${base}: ${buf.length} bytes is too small for a flatbuffer (need 8)`);
  const root = ctx.dv.getUint32(0, true);
  if (root < 4 || root >= buf.length) throw new ReError('FB_MALFORMED', `buffer at ${base}: root offset ${root} is outside the buffer (size ${buf.length})`);
  const res: FbResult = { base, size: buf.length, rootOffset: base + root, root: walkTable(ctx, root, 0) };
  if (root >= 8) {
    const id = String.fromCharCode(...buf.subarray(4, 8));
    if (/^[\x20-\x7e]{4}$/.test(id)) res.fileIdentifier = id;
  }
  return res;
}

function scalarSummary(s: FbScalars): string {
  const parts = [`u8 ${s.u8}`];
  if (s.u16 !== undefined) parts.push(`u16 ${s.u16}`, `i16 ${s.i16}`);
  if (s.u32 !== undefined) parts.push(`u32 ${s.u32}`, `i32 ${s.i32}`, `f32 ${s.f32}`);
  if (s.u64 !== undefined) parts.push(`i64 ${s.i64}`, `f64 ${s.f64}`);
  return parts.join(', ');
}

export function formatTable(t: FbTable, indent = ''): string[] {
  const lines = [`${indent}table @${t.offset} (vtable @${t.vtable.offset}: ${t.vtable.slots} slot(s), object ${t.vtable.objectSize} bytes)${t.stopped ? ` [stopped: ${t.stopped}]` : ''}`];
  for (const f of t.fields) {
    const head = `${indent}  [${f.slot}] @${f.offset} w≤${f.maxWidth}`;
    if (f.guess === 'string') lines.push(`${head} string ${JSON.stringify(f.string)}`);
    else if (f.guess === 'table') { lines.push(`${head} → table`); lines.push(...formatTable(f.table!, indent + '    ')); }
    else if (f.guess === 'vector') {
      const v = f.vector!;
      if (v.elements === 'string') lines.push(`${head} vector[${v.length}] of strings ${JSON.stringify(v.strings)}`);
      else if (v.elements === 'table') { lines.push(`${head} vector[${v.length}] of tables`); for (const x of v.tables!) lines.push(...formatTable(x, indent + '    ')); }
      else {
        // Element width is unknown; show the first `length` bytes (the whole vector if it holds bytes).
        const n = Math.min(v.length, 24, v.bytes!.length);
        lines.push(`${head} vector[${v.length}] @${v.dataOffset} element width ${v.elementWidths.join('|')}; bytes: ${v.bytes!.slice(0, n).join(' ')}${v.length > n ? ' …' : ''}`);
      }
    } else lines.push(`${head} scalar ${scalarSummary(f.scalar)}  # ${f.reason}`);
  }
  return lines;
}

/**
 * Cheap check used by the protobuf decoder: does this payload start with a flatbuffer whose root table is
 * structurally valid, with its vtable where builders put it? Returns the root's relative offset.
 */
export function flatbufferRoot(buf: Uint8Array): number | undefined {
  if (buf.length < 12) return undefined;
  const ctx: Ctx = { buf, dv: new DataView(buf.buffer, buf.byteOffset, buf.byteLength), base: 0, end: buf.length, maxDepth: 2, maxNodes: 64, maxVec: 16, nodes: 0 };
  const root = ctx.dv.getUint32(0, true);
  if (root < 4 || root >= buf.length) return undefined;
  const ti = tableInfo(ctx, root);
  if (typeof ti === 'string' || !(ti.vt + ti.vtSize === root || ti.vt > root) || ti.slots.every((x) => x === 0)) return undefined;
  return root;
}
