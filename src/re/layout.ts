// The layout descriptor and our open encoder/decoder for it. A layout says, for every weight (row, col),
// which bytes or nibbles of the weight region hold it and how the value is encoded; `pack` is the
// vendor compiler's weight placement reimplemented, `unpack` its inverse.
//
// Addresses: 'byte' units for int8 components; 'nibble' units otherwise, where nibble address a is byte a>>1,
// low nibble when a is even, high nibble when odd.

import { fromBase64 } from './bytes.js';
import { ReError } from './errors.js';

export type SlotRole = 'int8' | 'lo' | 'hi' | 'int4';
export type Encoding = 'twos' | 'offset';

/** addr = base + (r div tileRows)*tileRowStride + (r mod tileRows)*rowStride + (c div tileCols)*tileColStride + (c mod tileCols)*colStride */
export interface AffineRule {
  base: number;
  tileRows: number;
  tileCols: number;
  rowStride: number;
  colStride: number;
  tileRowStride: number;
  tileColStride: number;
}

export interface LayoutComponent {
  /** int8: the whole value in a byte; lo/hi: the low/high nibble of an 8-bit value; int4: a 4-bit value */
  role: SlotRole;
  unit: 'byte' | 'nibble';
  /** offset: the top bit of the stored unit is flipped (int8: value + 128; a nibble: nibble xor 8) */
  encoding: Encoding;
  rule?: AffineRule;
  /** explicit address per weight, row-major, when no compact rule fits */
  table?: number[];
  description: string;
}

export interface Layout {
  format: 'gguf-edge-layout';
  version: 1;
  rows: number;
  cols: number;
  bits: 4 | 8;
  /** size of the compiled files the layout was solved from */
  fileSize: number;
  /** the weight region within a compiled file; pack writes and unpack reads exactly this many bytes */
  region: { offset: number; length: number };
  components: LayoutComponent[];
  /** bytes of the region that hold no weight: one fill byte, or a base64 template of the whole region */
  background: { fill: number } | { template: string };
  /** region-relative byte ranges that differ between builds of the same input (not reproducible) */
  volatile: { offset: number; length: number }[];
  /** file-relative ranges outside the region: nondeterministic words and content-dependent bytes seen */
  outside: { volatile: { offset: number; length: number }[]; unexplained: { offset: number; length: number }[] };
  /** region bytes that carry no weight bits at all (padding) */
  paddingBytes: number;
  summary: string[];
}

export function ruleAddress(rule: AffineRule, r: number, c: number): number {
  return rule.base
    + Math.floor(r / rule.tileRows) * rule.tileRowStride + (r % rule.tileRows) * rule.rowStride
    + Math.floor(c / rule.tileCols) * rule.tileColStride + (c % rule.tileCols) * rule.colStride;
}

/** Addresses of every weight for one component, row-major. */
export function componentAddresses(comp: LayoutComponent, rows: number, cols: number): Int32Array {
  const out = new Int32Array(rows * cols);
  if (comp.table) { out.set(comp.table); return out; }
  const rule = comp.rule!;
  for (let r = 0, i = 0; r < rows; r++) for (let c = 0; c < cols; c++, i++) out[i] = ruleAddress(rule, r, c);
  return out;
}

/** Limits that keep a hostile layout file from allocating without bound (tensors larger than this are split). */
const MAX_WEIGHTS = 2 ** 28;
const MAX_REGION = 2 ** 31 - 1;

const isInt = (x: unknown): x is number => typeof x === 'number' && Number.isSafeInteger(x);

/** Structural validation of a layout read from disk: every address must land inside the region. */
export function validateLayout(l: Layout, where: string): Layout {
  const bad = (msg: string): never => { throw new ReError('LAYOUT_INVALID', `${where}: ${msg}`); };
  if (!l || l.format !== 'gguf-edge-layout' || l.version !== 1) bad('not a gguf-edge layout (format/version)');
  if (!isInt(l.rows) || l.rows < 1 || !isInt(l.cols) || l.cols < 1) bad('rows/cols must be positive integers');
  if (l.rows * l.cols > MAX_WEIGHTS) bad(`${l.rows}x${l.cols} exceeds ${MAX_WEIGHTS} weights`);
  if (l.bits !== 4 && l.bits !== 8) bad(`bits must be 4 or 8 (got ${l.bits})`);
  if (!l.region || !isInt(l.region.offset) || !isInt(l.region.length) || l.region.offset < 0 || l.region.length < 1 || l.region.length > MAX_REGION) bad(`region must have a non-negative offset and a length of 1..${MAX_REGION}`);
  if (!isInt(l.fileSize) || l.fileSize < l.region.offset + l.region.length) bad('fileSize must cover the region');
  if (!Array.isArray(l.components) || l.components.length === 0) bad('no components');
  const n = l.rows * l.cols;
  const roles = new Set(l.components.map((c) => c.role));
  if (l.bits === 8 && !roles.has('int8') && !(roles.has('lo') && roles.has('hi'))) bad('8-bit layout needs an int8 component or both lo and hi');
  if (l.bits === 4 && !roles.has('int4')) bad('4-bit layout needs an int4 component');
  for (const [k, c] of l.components.entries()) {
    const unit = c.role === 'int8' ? 'byte' : 'nibble';
    if (!['int8', 'lo', 'hi', 'int4'].includes(c.role)) bad(`component ${k}: unknown role ${c.role}`);
    if (c.unit !== unit) bad(`component ${k}: role ${c.role} uses ${unit} addresses, not ${c.unit}`);
    if (c.encoding !== 'twos' && c.encoding !== 'offset') bad(`component ${k}: unknown encoding ${c.encoding}`);
    if (c.table) {
      if (!Array.isArray(c.table) || c.table.length !== n || !c.table.every(isInt)) bad(`component ${k}: table must list ${n} integer addresses`);
    } else if (c.rule) {
      const r = c.rule;
      if (![r.base, r.tileRows, r.tileCols, r.rowStride, r.colStride, r.tileRowStride, r.tileColStride].every(isInt) || r.tileRows < 1 || r.tileCols < 1) bad(`component ${k}: rule fields must be integers, tiles >= 1`);
    } else bad(`component ${k}: needs a rule or a table`);
    const limit = l.region.length * (unit === 'byte' ? 1 : 2);
    const addrs = componentAddresses(c, l.rows, l.cols);
    for (let i = 0; i < n; i++) {
      if (addrs[i]! < 0 || addrs[i]! >= limit) bad(`component ${k}: weight (${Math.floor(i / l.cols)}, ${i % l.cols}) maps to ${unit} ${addrs[i]}, outside the region (${limit} ${unit}s)`);
    }
  }
  const bg = l.background as { fill?: number; template?: string };
  if (!bg || (bg.fill === undefined && bg.template === undefined)) bad('background needs fill or template');
  if (bg.fill !== undefined && (!isInt(bg.fill) || bg.fill < 0 || bg.fill > 255)) bad('background fill must be a byte');
  if (bg.template !== undefined && fromBase64(bg.template).length !== l.region.length) bad('background template length differs from the region length');
  return l;
}

export function parseLayout(text: string, where: string): Layout {
  let l: Layout;
  try { l = JSON.parse(text) as Layout; } catch (e) { throw new ReError('LAYOUT_INVALID', `${where}: not JSON (${(e as Error).message})`); }
  return validateLayout(l, where);
}

function setNibble(buf: Uint8Array, a: number, v: number): void {
  const i = a >> 1;
  buf[i] = a & 1 ? (buf[i]! & 0x0f) | ((v & 15) << 4) : (buf[i]! & 0xf0) | (v & 15);
}

function getNibble(buf: Uint8Array, a: number): number {
  return (buf[a >> 1]! >> ((a & 1) * 4)) & 15;
}

/** Encodes a row-major matrix of signed values into the weight region (our replacement for the vendor compiler). */
export function packLayout(l: Layout, values: Int8Array): Uint8Array {
  const n = l.rows * l.cols;
  if (values.length !== n) throw new ReError('SIZE_MISMATCH', `matrix has ${values.length} values, the layout expects ${l.rows}x${l.cols} = ${n}`);
  if (l.bits === 4) {
    for (let i = 0; i < n; i++) if (values[i]! < -8 || values[i]! > 7) throw new ReError('OUT_OF_RANGE', `value ${values[i]} at (${Math.floor(i / l.cols)}, ${i % l.cols}) is outside the int4 range -8..7`);
  }
  const bg = l.background as { fill?: number; template?: string };
  const out = bg.template !== undefined ? fromBase64(bg.template) : new Uint8Array(l.region.length).fill(bg.fill!);
  for (const comp of l.components) {
    const addrs = componentAddresses(comp, l.rows, l.cols);
    const x = comp.encoding === 'offset' ? (comp.role === 'int8' ? 0x80 : 8) : 0;
    for (let i = 0; i < n; i++) {
      const v = values[i]!;
      switch (comp.role) {
        case 'int8': out[addrs[i]!] = (v & 0xff) ^ x; break;
        case 'lo': setNibble(out, addrs[i]!, (v & 15) ^ x); break;
        case 'hi': setNibble(out, addrs[i]!, ((v >> 4) & 15) ^ x); break;
        case 'int4': setNibble(out, addrs[i]!, (v & 15) ^ x); break;
      }
    }
  }
  return out;
}

/** Accepts the weight region itself or a whole compiled file (same size as the solved ones). */
export function regionOf(l: Layout, blob: Uint8Array, where: string): Uint8Array {
  if (blob.length === l.region.length) return blob;
  if (blob.length === l.fileSize) return blob.subarray(l.region.offset, l.region.offset + l.region.length);
  throw new ReError('SIZE_MISMATCH', `${where}: ${blob.length} bytes is neither the weight region (${l.region.length}) nor a compiled file (${l.fileSize})`);
}

export function unpackLayout(l: Layout, region: Uint8Array): Int8Array {
  if (region.length !== l.region.length) throw new ReError('SIZE_MISMATCH', `region has ${region.length} bytes, the layout expects ${l.region.length}`);
  const n = l.rows * l.cols;
  const out = new Int8Array(n);
  const byRole = (role: SlotRole) => l.components.find((c) => c.role === role);
  const int8 = byRole('int8');
  if (l.bits === 8 && int8) {
    const a = componentAddresses(int8, l.rows, l.cols);
    const x = int8.encoding === 'offset' ? 0x80 : 0;
    for (let i = 0; i < n; i++) out[i] = ((region[a[i]!]! ^ x) << 24) >> 24;
  } else if (l.bits === 8) {
    const lo = byRole('lo')!, hi = byRole('hi')!;
    const al = componentAddresses(lo, l.rows, l.cols), ah = componentAddresses(hi, l.rows, l.cols);
    const xh = hi.encoding === 'offset' ? 8 : 0, xl = lo.encoding === 'offset' ? 8 : 0;
    for (let i = 0; i < n; i++) out[i] = ((((getNibble(region, ah[i]!) ^ xh) << 4) | (getNibble(region, al[i]!) ^ xl)) << 24) >> 24;
  } else {
    const c = byRole('int4')!;
    const a = componentAddresses(c, l.rows, l.cols);
    const x = c.encoding === 'offset' ? 8 : 0;
    for (let i = 0; i < n; i++) out[i] = (((getNibble(region, a[i]!) ^ x) << 28) >> 28);
  }
  return out;
}
