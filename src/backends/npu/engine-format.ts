// The engine blob: one compiled node group at one static token count (docs/npu.md has the byte layout).
//
//   offset 0   4  magic "GENG"
//          4  u16 version (1)
//          6  u16 target (1 = ax8850, 2 = htp)
//          8  u32 static token count
//         12  u32 name bytes N (UTF-8 group name, e.g. "blk.3")
//         16  u32 program bytes J (UTF-8 JSON: tensors, ops, I/O table)
//         20  u32 data offset D (64-aligned)
//         24  u32 data bytes
//         28  u32 FNV-1a of the name and program bytes
//         32  name, then the program, then zeros up to D; data from D: weight nibble planes, their f16
//             scales and f32 constants, each section 64-aligned and placed by the program (offsets from D)
//
// All integers little-endian. Everything read from a blob is validated before use: a damaged or hostile
// blob gets EngineFormatError naming the field, never an out-of-range read or an unbounded allocation.

import type { Op } from '../../graph/graph.js';
import type { EngineDType } from './runtime-api.js';
import { ENGINE_OPS } from './op-set.js';
import { paddedCols, planeBytes, scaleBytes } from './nibble-planes.js';

export const ENGINE_MAGIC = 'GENG';
export const ENGINE_VERSION = 1;
export const ENGINE_HEADER_BYTES = 32;
export const ENGINE_ALIGN = 64;
export const ENGINE_TARGETS = { ax8850: 1, htp: 2 } as const;
export type EngineTarget = keyof typeof ENGINE_TARGETS;

export class EngineFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EngineFormatError';
  }
}

/** A byte range of the data section (offset from the data start). */
export interface DataRange { offset: number; bytes: number }

/**
 * One tensor of the engine program.
 * - io: bound to a caller's device buffer at each execution (EngineProgram.inputs/outputs name it)
 * - weight: int8 nibble planes + per-32 f16 scales (dtype 'q8'; shape [cols, rows]); `source` is the GGUF type it came from
 * - const: f32/i32 data stored in the blob (norm weights, biases, rope factors)
 * - scratch: an intermediate at `scratch` bytes into the engine's scratch area
 */
export interface EngineTensor {
  name: string;
  kind: 'io' | 'weight' | 'const' | 'scratch';
  dtype: EngineDType | 'q8';
  /** ne0 first */
  shape: number[];
  planes?: DataRange;
  scales?: DataRange;
  source?: string;
  data?: DataRange;
  scratch?: number;
}

export interface EngineOp {
  op: Op;
  /** tensor index of the result */
  out: number;
  /** tensor indices of the sources, in the graph op's order */
  src: number[];
  params: Record<string, number | boolean>;
}

export interface EngineIo {
  name: string;
  /** the program tensor bound to this input/output */
  tensor: number;
  shape: number[];
  dtype: EngineDType;
  bytes: number;
}

export interface EngineProgram {
  tensors: EngineTensor[];
  ops: EngineOp[];
  inputs: EngineIo[];
  outputs: EngineIo[];
  /** bytes of scratch one execution needs */
  scratchBytes: number;
}

export interface EngineHeader {
  version: number;
  target: EngineTarget;
  nTokens: number;
  name: string;
  dataOffset: number;
  dataBytes: number;
}

export interface ParsedEngine {
  header: EngineHeader;
  program: EngineProgram;
  /** the data section (a view into the blob) */
  data: Uint8Array;
}

export const alignUp = (x: number, a = ENGINE_ALIGN) => Math.ceil(x / a) * a;

export function dtypeBytes(d: EngineDType): number {
  switch (d) {
    case 'f32': case 'i32': case 'u32': return 4;
    case 'f16': case 'bf16': return 2;
    case 'i8': return 1;
  }
}

export function elements(shape: readonly number[]): number {
  return shape.reduce((a, b) => a * b, 1);
}

/** Runtime bytes of a non-weight tensor. */
export function tensorBytes(t: EngineTensor): number {
  return t.dtype === 'q8' ? 0 : elements(t.shape) * dtypeBytes(t.dtype);
}

function fnv1a32(b: Uint8Array): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < b.length; i++) h = Math.imul(h ^ b[i]!, 0x01000193);
  return h >>> 0;
}

/** Writes the header, name and program into a blob of `dataBytes` data (zeroed, for the caller to fill). */
export function createEngineBlob(header: Omit<EngineHeader, 'version' | 'dataOffset' | 'dataBytes'>, program: EngineProgram, dataBytes: number): { blob: Uint8Array; data: Uint8Array } {
  const enc = new TextEncoder();
  const name = enc.encode(header.name), json = enc.encode(JSON.stringify(program));
  const dataOffset = alignUp(ENGINE_HEADER_BYTES + name.length + json.length);
  const blob = new Uint8Array(dataOffset + dataBytes);
  const dv = new DataView(blob.buffer);
  blob.set(enc.encode(ENGINE_MAGIC), 0);
  dv.setUint16(4, ENGINE_VERSION, true);
  dv.setUint16(6, ENGINE_TARGETS[header.target], true);
  dv.setUint32(8, header.nTokens, true);
  dv.setUint32(12, name.length, true);
  dv.setUint32(16, json.length, true);
  dv.setUint32(20, dataOffset, true);
  dv.setUint32(24, dataBytes, true);
  blob.set(name, ENGINE_HEADER_BYTES);
  blob.set(json, ENGINE_HEADER_BYTES + name.length);
  dv.setUint32(28, fnv1a32(blob.subarray(ENGINE_HEADER_BYTES, ENGINE_HEADER_BYTES + name.length + json.length)), true);
  return { blob, data: blob.subarray(dataOffset) };
}

const MAX_TENSORS = 1 << 16;
const MAX_DIM = 2 ** 31 - 1;
const isInt = (x: unknown): x is number => typeof x === 'number' && Number.isSafeInteger(x);
const opSet = new Set<string>(ENGINE_OPS);
const ioTypes = new Set<string>(['f32', 'f16', 'bf16', 'i8', 'i32', 'u32']);

/** Parses and validates a blob (header, program structure, data ranges, op shapes). */
export function parseEngine(blob: Uint8Array): ParsedEngine {
  const bad = (msg: string): never => { throw new EngineFormatError(`engine blob: ${msg}`); };
  if (blob.length < ENGINE_HEADER_BYTES) bad(`${blob.length} bytes is shorter than the ${ENGINE_HEADER_BYTES}-byte header`);
  const magic = String.fromCharCode(blob[0]!, blob[1]!, blob[2]!, blob[3]!);
  if (magic !== ENGINE_MAGIC) bad(`offset 0: magic ${JSON.stringify(magic)} is not "${ENGINE_MAGIC}"`);
  const dv = new DataView(blob.buffer, blob.byteOffset, blob.byteLength);
  const version = dv.getUint16(4, true);
  if (version !== ENGINE_VERSION) bad(`offset 4: version ${version} (this build reads ${ENGINE_VERSION})`);
  const tcode = dv.getUint16(6, true);
  const target = (Object.keys(ENGINE_TARGETS) as EngineTarget[]).find((k) => ENGINE_TARGETS[k] === tcode);
  if (!target) bad(`offset 6: unknown target code ${tcode}`);
  const nTokens = dv.getUint32(8, true), nameLen = dv.getUint32(12, true), jsonLen = dv.getUint32(16, true);
  const dataOffset = dv.getUint32(20, true), dataBytes = dv.getUint32(24, true);
  if (nTokens < 1) bad('offset 8: static token count is 0');
  if (ENGINE_HEADER_BYTES + nameLen + jsonLen > blob.length) bad(`offsets 12/16: name (${nameLen}) and program (${jsonLen}) bytes run past the blob end (${blob.length})`);
  if (dataOffset % ENGINE_ALIGN || dataOffset < ENGINE_HEADER_BYTES + nameLen + jsonLen) bad(`offset 20: data offset ${dataOffset} is not 64-aligned after the program`);
  if (dataOffset + dataBytes !== blob.length) bad(`offsets 20/24: data ${dataOffset}+${dataBytes} does not end at the blob end (${blob.length})`);
  const meta = blob.subarray(ENGINE_HEADER_BYTES, ENGINE_HEADER_BYTES + nameLen + jsonLen);
  if (fnv1a32(meta) !== dv.getUint32(28, true)) bad('offset 28: checksum of the name and program does not match (damaged blob)');
  let name = '', program: EngineProgram;
  try {
    const dec = new TextDecoder('utf-8', { fatal: true });
    name = dec.decode(meta.subarray(0, nameLen));
    program = JSON.parse(dec.decode(meta.subarray(nameLen))) as EngineProgram;
  } catch (e) {
    return bad(`program: not UTF-8 JSON (${(e as Error).message})`);
  }
  validateProgram(program, dataBytes, bad);
  return { header: { version, target: target!, nTokens, name, dataOffset, dataBytes }, program, data: blob.subarray(dataOffset) };
}

function validateProgram(p: EngineProgram, dataBytes: number, bad: (m: string) => never): void {
  if (!p || typeof p !== 'object' || !Array.isArray(p.tensors) || !Array.isArray(p.ops) || !Array.isArray(p.inputs) || !Array.isArray(p.outputs)) bad('program: needs tensors, ops, inputs, outputs arrays');
  if (p.tensors.length > MAX_TENSORS || p.ops.length > MAX_TENSORS) bad(`program: more than ${MAX_TENSORS} tensors or ops`);
  if (!isInt(p.scratchBytes) || p.scratchBytes < 0) bad('program.scratchBytes must be a non-negative integer');
  const range = (r: DataRange | undefined, what: string, want?: number) => {
    if (!r || !isInt(r.offset) || !isInt(r.bytes) || r.offset < 0 || r.bytes < 0 || r.offset + r.bytes > dataBytes) bad(`${what}: data range outside the ${dataBytes}-byte data section`);
    if (r!.offset % ENGINE_ALIGN) bad(`${what}: data offset ${r!.offset} is not ${ENGINE_ALIGN}-aligned`);
    if (want !== undefined && r!.bytes !== want) bad(`${what}: ${r!.bytes} bytes, its shape needs ${want}`);
  };
  for (const [i, t] of p.tensors.entries()) {
    const w = `tensor ${i}`;
    if (!t || typeof t.name !== 'string') bad(`${w}: needs a name`);
    if (!Array.isArray(t.shape) || t.shape.length < 1 || t.shape.length > 4 || !t.shape.every((d) => isInt(d) && d >= 0 && d <= MAX_DIM)) bad(`${w} (${t.name}): shape must be 1-4 non-negative integers`);
    if (elements(t.shape) > 2 ** 40) bad(`${w} (${t.name}): shape too large`);
    switch (t.kind) {
      case 'weight': {
        if (t.dtype !== 'q8' || t.shape.length !== 2 || t.shape[0]! < 1 || t.shape[1]! < 1 || t.shape[0]! % 32) bad(`${w} (${t.name}): a weight is q8 [cols, rows] with cols a multiple of 32`);
        const [cols, rows] = t.shape as [number, number];
        if (rows * paddedCols(cols) > 2 ** 32) bad(`${w} (${t.name}): too large`);
        range(t.planes, `${w} (${t.name}) planes`, planeBytes(rows, cols));
        range(t.scales, `${w} (${t.name}) scales`, scaleBytes(rows, cols));
        break;
      }
      case 'const':
        if (t.dtype !== 'f32' && t.dtype !== 'i32') bad(`${w} (${t.name}): a constant is f32 or i32`);
        range(t.data, `${w} (${t.name}) data`, tensorBytes(t));
        break;
      case 'scratch':
        if (t.dtype !== 'f32') bad(`${w} (${t.name}): scratch tensors are f32`);
        if (!isInt(t.scratch) || t.scratch < 0 || t.scratch + tensorBytes(t) > p.scratchBytes) bad(`${w} (${t.name}): scratch offset outside the ${p.scratchBytes}-byte scratch`);
        if (t.scratch! % ENGINE_ALIGN) bad(`${w} (${t.name}): scratch offset ${t.scratch} is not ${ENGINE_ALIGN}-aligned`);
        break;
      case 'io':
        if (!ioTypes.has(t.dtype)) bad(`${w} (${t.name}): io dtype ${String(t.dtype)}`);
        break;
      default: bad(`${w}: unknown kind ${String((t as EngineTensor).kind)}`);
    }
  }
  const tensor = (i: unknown, what: string) => {
    if (!isInt(i) || i < 0 || i >= p.tensors.length) bad(`${what}: tensor index ${String(i)} out of range`);
    return p.tensors[i as number]!;
  };
  for (const [side, list] of [['input', p.inputs], ['output', p.outputs]] as const) {
    for (const [i, io] of list.entries()) {
      const t = tensor(io?.tensor, `${side} ${i}`);
      if (t.kind !== 'io' && !(side === 'output' && t.kind === 'scratch')) bad(`${side} ${i} (${io.name}): tensor ${io.tensor} is ${t.kind}`);
      if (t.kind === 'scratch') bad(`${side} ${i} (${io.name}): outputs are io tensors`);
      if (io.dtype !== t.dtype || JSON.stringify(io.shape) !== JSON.stringify(t.shape) || io.bytes !== tensorBytes(t)) bad(`${side} ${i} (${io.name}): shape/dtype/bytes differ from tensor ${io.tensor}`);
    }
  }
  const written = new Set<number>();
  for (const io of p.inputs) written.add(io.tensor);
  for (const [i, o] of p.ops.entries()) {
    const w = `op ${i}`;
    if (!o || !opSet.has(o.op)) bad(`${w}: unknown op ${String(o?.op)}`);
    const out = tensor(o.out, w);
    if (out.kind !== 'scratch' && out.kind !== 'io') bad(`${w} (${o.op}): writes a ${out.kind} tensor`);
    if (!Array.isArray(o.src) || o.src.length < 1 || o.src.length > 8) bad(`${w} (${o.op}): 1-8 sources`);
    const src = o.src.map((s) => tensor(s, w));
    for (const s of o.src) {
      const k = p.tensors[s]!.kind;
      if ((k === 'scratch' || (k === 'io' && !p.inputs.some((io) => io.tensor === s))) && !written.has(s)) bad(`${w} (${o.op}): reads tensor ${s} before it is computed`);
    }
    if (!o.params || typeof o.params !== 'object' || !Object.values(o.params).every((v) => typeof v === 'number' || typeof v === 'boolean')) bad(`${w} (${o.op}): params must be numbers or booleans`);
    checkOpShapes(o, out, src, bad, w);
    written.add(o.out);
  }
  for (const [i, io] of p.outputs.entries()) if (!written.has(io.tensor)) bad(`output ${i} (${io.name}): never written`);
}

const f32 = (t: EngineTensor) => t.dtype === 'f32';

/** The shape rules of the graph ops (src/graph/graph.ts), so an engine never reads past a tensor. */
function checkOpShapes(o: EngineOp, out: EngineTensor, src: EngineTensor[], bad: (m: string) => never, w: string): void {
  const need = (c: boolean, m: string) => { if (!c) bad(`${w} (${o.op}): ${m}`); };
  const n = (t: EngineTensor) => elements(t.shape);
  const rows = (t: EngineTensor) => n(t) / t.shape[0]!;
  const num = (k: string) => { const v = o.params[k]; need(typeof v === 'number' && Number.isFinite(v), `param ${k} must be a finite number`); return v as number; };
  if (o.op !== 'kv_store') need(f32(out), 'result must be f32');
  switch (o.op) {
    case 'mul_mat': {
      const [wt, x] = src as [EngineTensor, EngineTensor];
      need(src.length === 2 && wt.kind === 'weight' && f32(x) && x.shape[0] === wt.shape[0], 'weight [k, n] times f32 [k, m]');
      need(out.shape[0] === wt.shape[1] && n(out) === wt.shape[1]! * rows(x), 'result [n, m]');
      break;
    }
    case 'get_rows': {
      const [t, ids] = src as [EngineTensor, EngineTensor];
      need(src.length === 2 && ids.dtype === 'i32' && (t.kind === 'weight' || f32(t)), 'rows of a weight or f32 tensor by i32 ids');
      need(out.shape[0] === t.shape[0] && n(out) === t.shape[0]! * n(ids), 'result [ne0, ids]');
      break;
    }
    case 'add': case 'mul': {
      const [a, b] = src as [EngineTensor, EngineTensor];
      need(src.length === 2 && f32(a) && f32(b) && n(out) === n(a) && n(b) > 0 && a.shape[0]! % b.shape[0]! === 0 && n(a) % n(b) === 0, 'f32 a, b broadcast over rows, result like a');
      break;
    }
    case 'scale': case 'softcap':
      need(src.length === 1 && f32(src[0]!) && n(out) === n(src[0]!), 'one f32 source, result like it');
      num(o.op === 'scale' ? 'scale' : 'cap');
      break;
    case 'rms_norm': {
      const rl = num('rowLen');
      num('eps');
      need(src.length === 1 && f32(src[0]!) && n(out) === n(src[0]!) && rl >= 1 && n(out) % rl === 0, 'one f32 source cut in rowLen chunks');
      break;
    }
    case 'swiglu': case 'geglu':
      need(src.length === 2 && f32(src[0]!) && f32(src[1]!) && n(out) === n(src[0]!) && n(out) === n(src[1]!), 'two f32 sources of one shape');
      break;
    case 'view_cols': {
      const off = num('offset');
      need(src.length === 1 && f32(src[0]!) && off >= 0 && off + out.shape[0]! <= src[0]!.shape[0]! && rows(out) === rows(src[0]!), 'columns inside the source row');
      break;
    }
    case 'rope': {
      const [x, pos] = src as [EngineTensor, EngineTensor];
      const hd = num('headDim'), nd = num('nDims');
      num('freqBase'); num('freqScale');
      need(src.length >= 2 && src.length <= 3 && f32(x) && pos.dtype === 'i32' && n(pos) === rows(x) && n(out) === n(x), 'f32 rows and one i32 position per row');
      need(hd >= 2 && hd % 2 === 0 && x.shape[0]! % hd === 0 && nd >= 2 && nd <= hd && nd % 2 === 0, 'headDim divides the row, nDims even <= headDim');
      if (src.length === 3) need(f32(src[2]!) && n(src[2]!) >= nd / 2, 'freq factors: nDims/2 f32');
      break;
    }
    case 'kv_store': {
      const [cache, x, pos] = src as [EngineTensor, EngineTensor, EngineTensor];
      need(src.length === 3 && (cache.dtype === 'f16' || cache.dtype === 'f32') && f32(x) && pos.dtype === 'i32' && cache.shape[0] === x.shape[0] && n(pos) === rows(x), 'cache [row, slots], f32 rows, i32 slots');
      break;
    }
    case 'attention': {
      const [q, k, v, pos] = src as [EngineTensor, EngineTensor, EngineTensor, EngineTensor];
      const nh = num('nHead'), nkv = num('nHeadKv'), dk = num('headDimK'), dv = num('headDimV');
      num('scale'); num('softcap'); num('window');
      need(src.length >= 4 && f32(q) && pos.dtype === 'i32' && n(pos) === rows(q) && (k.dtype === 'f16' || k.dtype === 'f32') && k.dtype === v.dtype, 'f32 q, f16/f32 caches, i32 positions');
      need(nh >= 1 && nkv >= 1 && nh % nkv === 0 && q.shape[0] === nh * dk && k.shape[0] === nkv * dk && v.shape[0] === nkv * dv && k.shape[1] === v.shape[1], 'head counts and dims match the tensors');
      need(out.shape[0] === nh * dv && rows(out) === rows(q), 'result [headDimV*nHead, tokens]');
      break;
    }
    default: need(false, 'not an engine op');
  }
}
