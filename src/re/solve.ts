// The layout solver: from compiled probes to a layout descriptor. Each nibble of the compiled output is read
// across all probes; a nibble that came from a weight spells out (see probes.ts) its encoding, which half of
// the value it holds and the weight's index, with a checksum. Everything else is background (constant),
// volatile (differs between the two identical zero probes) or unexplained. The result is verified by
// re-encoding every probe with our own packer; any disagreement is an error, never a layout.

import { toBase64 } from './bytes.js';
import { ReError } from './errors.js';
import { packLayout, unpackLayout, type AffineRule, type Encoding, type Layout, type LayoutComponent, type SlotRole } from './layout.js';
import { checkDigit, generateProbes, probeFileName, compiledFileName, type ProbeManifest } from './probes.js';

export interface SolveInput {
  manifest: ProbeManifest;
  probes: Int8Array[];
  compiled: Uint8Array[];
}

const KIND_BACKGROUND = 0, KIND_WEIGHT = 1, KIND_VOLATILE = 2, KIND_UNEXPLAINED = 3;
const ROLE_LO = 1, ROLE_HI = 2, ROLE_INT4 = 3;
const ROLE_NAMES: Record<number, SlotRole> = { [ROLE_LO]: 'lo', [ROLE_HI]: 'hi', [ROLE_INT4]: 'int4' };

function ranges(flags: (i: number) => boolean, from: number, to: number): { offset: number; length: number }[] {
  const out: { offset: number; length: number }[] = [];
  for (let i = from; i < to; i++) {
    if (!flags(i)) continue;
    const last = out[out.length - 1];
    if (last && last.offset + last.length === i) last.length++;
    else out.push({ offset: i, length: 1 });
  }
  return out;
}

function fmtRanges(rs: { offset: number; length: number }[], max = 6): string {
  const s = rs.slice(0, max).map((r) => (r.length === 1 ? `${r.offset}` : `${r.offset}..${r.offset + r.length - 1}`)).join(', ');
  return rs.length > max ? `${s}, … (${rs.length} ranges)` : s;
}

/** Finds a (possibly tiled) affine rule for the addresses; tile sizes come from where the strides first break. */
export function fitRule(addrs: Int32Array, rows: number, cols: number): AffineRule | undefined {
  const A = (r: number, c: number) => addrs[r * cols + c]!;
  const firstBreak = (len: number, at: (k: number) => number): number => {
    if (len < 3) return len;
    const d0 = at(1) - at(0);
    for (let k = 1; k + 1 < len; k++) if (at(k + 1) - at(k) !== d0) return k + 1;
    return len;
  };
  const tr = [...new Set([rows, firstBreak(rows, (r) => A(r, 0))])];
  const tc = [...new Set([cols, firstBreak(cols, (c) => A(0, c))])];
  for (const tileCols of tc) {
    for (const tileRows of tr) {
      const base = A(0, 0);
      const rule: AffineRule = {
        base, tileRows, tileCols,
        rowStride: tileRows > 1 ? A(1, 0) - base : 0,
        colStride: tileCols > 1 ? A(0, 1) - base : 0,
        tileRowStride: rows > tileRows ? A(tileRows, 0) - base : 0,
        tileColStride: cols > tileCols ? A(0, tileCols) - base : 0,
      };
      let ok = true;
      for (let r = 0; r < rows && ok; r++) {
        const rowBase = base + Math.floor(r / tileRows) * rule.tileRowStride + (r % tileRows) * rule.rowStride;
        for (let c = 0; c < cols; c++) {
          if (A(r, c) !== rowBase + Math.floor(c / tileCols) * rule.tileColStride + (c % tileCols) * rule.colStride) { ok = false; break; }
        }
      }
      if (ok) return rule;
    }
  }
  return undefined;
}

function describe(comp: Omit<LayoutComponent, 'description'>, rows: number, cols: number): string {
  const what = comp.role === 'int8' ? 'int8 bytes' : comp.role === 'int4' ? 'int4 nibbles' : comp.role === 'lo' ? 'low (fine) nibbles of int8' : 'high (coarse) nibbles of int8';
  const enc = comp.encoding === 'twos' ? "two's complement" : 'offset binary';
  const u = comp.unit === 'byte' ? 'B' : ' nibbles';
  const at = (a: number) => (comp.unit === 'byte' ? `byte ${a}` : `byte ${a >> 1} ${a & 1 ? 'high' : 'low'} nibble`);
  const r = comp.rule;
  if (!r) return `${what}, ${enc}: explicit table (no tiled affine rule fits)`;
  const parts: string[] = [];
  const rowTiled = r.tileRows < rows, colTiled = r.tileCols < cols;
  if (rowTiled && colTiled) parts.push(`${r.tileRows}x${r.tileCols} tiles (next tile right +${r.tileColStride}${u}, down +${r.tileRowStride}${u})`);
  else if (colTiled) parts.push(`blocks of ${r.tileCols} columns (+${r.tileColStride}${u} per block)`);
  else if (rowTiled) parts.push(`blocks of ${r.tileRows} rows (+${r.tileRowStride}${u} per block)`);
  const cs = r.colStride, rs = r.rowStride;
  const span = colTiled ? r.tileCols : cols;
  const rspan = rowTiled ? r.tileRows : rows;
  const inside = rowTiled || colTiled ? 'inside: ' : '';
  if (cs === 1 && rs >= span) parts.push(`${inside}row-major, row stride ${rs}${u}${!colTiled && rs > span ? ` (rows padded from ${span} to ${rs})` : ''}`);
  else if (rs === 1 && cs >= rspan) parts.push(`${inside}column-major, column stride ${cs}${u}${!rowTiled && cs > rspan ? ` (columns padded from ${rspan} to ${cs})` : ''}`);
  else parts.push(`${inside}row stride ${rs}${u}, column stride ${cs}${u}`);
  if (comp.unit === 'nibble' && cs === 1 && (r.base & 1) === 0) parts.push('two per byte, the high nibble holding the odd column');
  return `${what}, ${enc}, first at ${at(r.base)}: ${parts.join(', ')}`;
}

export function solveLayout(input: SolveInput): Layout {
  const { manifest: m, probes, compiled } = input;
  const { matrices } = generateProbes(m);
  const P = matrices.length;
  const N = m.rows * m.cols;
  const D = m.digits;
  if (probes.length !== P) throw new ReError('PROBE_MISMATCH', `the manifest lists ${P} probes, got ${probes.length}`);
  for (let k = 0; k < P; k++) {
    const a = probes[k]!, b = matrices[k]!;
    if (a.length !== N) throw new ReError('PROBE_MISMATCH', `${probeFileName(k)}: ${a.length} values, the manifest says ${m.rows}x${m.cols} = ${N}`);
    for (let i = 0; i < N; i++) if (a[i] !== b[i]) throw new ReError('PROBE_MISMATCH', `${probeFileName(k)}: value at (${Math.floor(i / m.cols)}, ${i % m.cols}) is ${a[i]}, the manifest's probe has ${b[i]}`);
  }
  if (compiled.length !== P) throw new ReError('COMPILED_MISSING', `need ${P} compiled outputs (${compiledFileName(0)} … ${compiledFileName(P - 1)}), got ${compiled.length}`);
  const S = compiled[0]!.length;
  for (let k = 1; k < P; k++) {
    if (compiled[k]!.length !== S) throw new ReError('LAYOUT_INCONSISTENT', `${compiledFileName(k)} has ${compiled[k]!.length} bytes, ${compiledFileName(0)} has ${S}: the output size depends on the values, so no fixed layout explains it`);
  }
  if (S === 0) throw new ReError('LAYOUT_INCONSISTENT', `${compiledFileName(0)} is empty`);

  const REPEAT = P - 1, CHECK = P - 2, UNIT = 1, DIGIT0 = 2;
  const NS = 2 * S;
  const kind = new Uint8Array(NS);
  const weight = new Int32Array(NS).fill(-1);
  const role = new Uint8Array(NS);
  const xor = new Uint8Array(NS);
  const nib = (k: number, s: number) => (compiled[k]![s >> 1]! >> ((s & 1) * 4)) & 15;
  for (let s = 0; s < NS; s++) {
    const n0 = nib(0, s);
    if (nib(REPEAT, s) !== n0) { kind[s] = KIND_VOLATILE; continue; }
    let constant = true;
    for (let k = 1; k < P - 1; k++) if (nib(k, s) !== n0) { constant = false; break; }
    if (constant) { kind[s] = KIND_BACKGROUND; continue; }
    kind[s] = KIND_UNEXPLAINED;
    if (n0 !== 0 && n0 !== 8) continue;
    const u = nib(UNIT, s) ^ n0;
    const r = m.bits === 8 ? (u === 1 ? ROLE_LO : u === 2 ? ROLE_HI : 0) : u === 1 ? ROLE_INT4 : 0;
    if (!r) continue;
    let idx = 0;
    for (let j = 0; j < D; j++) idx += (nib(DIGIT0 + j, s) ^ n0) * 16 ** j;
    if (idx >= N || (nib(CHECK, s) ^ n0) !== checkDigit(idx, D)) continue;
    kind[s] = KIND_WEIGHT; weight[s] = idx; role[s] = r; xor[s] = n0;
  }

  // Nondeterminism comes in words (ids, timestamps, salts): a nibble that happened to repeat between the two
  // zero builds is still random if another nibble of its aligned 32-bit word is volatile.
  for (let w = 0; w < NS; w += 8) {
    let vol = false;
    for (let s = w; s < w + 8 && s < NS; s++) if (kind[s] === KIND_VOLATILE) vol = true;
    if (vol) for (let s = w; s < w + 8 && s < NS; s++) if (kind[s] === KIND_UNEXPLAINED) kind[s] = KIND_VOLATILE;
  }

  // Group weight slots by role; the k-th slot of a role (in address order) is copy k of that weight.
  const roles = m.bits === 8 ? [ROLE_LO, ROLE_HI] : [ROLE_INT4];
  const coord = (i: number) => `(${Math.floor(i / m.cols)}, ${i % m.cols})`;
  const components: LayoutComponent[] = [];
  const pending: { role: SlotRole; addrs: Int32Array; encoding: Encoding }[] = [];
  for (const r of roles) {
    const count = new Int32Array(N);
    for (let s = 0; s < NS; s++) if (kind[s] === KIND_WEIGHT && role[s] === r) count[weight[s]!]!++;
    let missing = 0, firstMissing = -1;
    for (let i = 0; i < N; i++) if (count[i] === 0) { missing++; if (firstMissing < 0) firstMissing = i; }
    if (missing) {
      throw new ReError('LAYOUT_INCONSISTENT', `the ${ROLE_NAMES[r]} ${r === ROLE_INT4 ? 'nibble' : 'nibble of the value'} of ${missing} of ${N} weights was not found in the compiled output (first: ${coord(firstMissing)}); the compiled files may not match the probes, or the compiler transforms values beyond two's complement/offset binary`);
    }
    const copies = count[0]!;
    for (let i = 1; i < N; i++) {
      if (count[i] !== copies) throw new ReError('LAYOUT_INCONSISTENT', `weight ${coord(i)} appears ${count[i]} times (${ROLE_NAMES[r]}), weight (0, 0) ${copies} times: placements are not uniform`);
    }
    const addrs = Array.from({ length: copies }, () => new Int32Array(N));
    const seen = new Int32Array(N);
    const enc = Array.from({ length: copies }, () => -1);
    for (let s = 0; s < NS; s++) {
      if (kind[s] !== KIND_WEIGHT || role[s] !== r) continue;
      const i = weight[s]!, c = seen[i]!++;
      addrs[c]![i] = s;
      if (enc[c] === -1) enc[c] = xor[s]!;
      else if (enc[c] !== xor[s]) throw new ReError('LAYOUT_INCONSISTENT', `${ROLE_NAMES[r]} nibbles mix two's complement and offset binary (byte ${s >> 1}): not supported`);
    }
    for (let c = 0; c < copies; c++) pending.push({ role: ROLE_NAMES[r]!, addrs: addrs[c]!, encoding: enc[c] === 8 ? 'offset' : 'twos' });
  }

  // A low nibble at an even address with its high nibble right after it is simply a byte.
  const merged: { role: SlotRole; addrs: Int32Array; encoding: Encoding; unit: 'byte' | 'nibble' }[] = [];
  const los = pending.filter((p) => p.role === 'lo'), his = pending.filter((p) => p.role === 'hi');
  const used = new Set<object>();
  for (const lo of los) {
    if (lo.encoding !== 'twos') continue;
    const hi = his.find((h) => !used.has(h) && lo.addrs.every((a, i) => (a & 1) === 0 && h.addrs[i] === a + 1));
    if (!hi) continue;
    used.add(hi); used.add(lo);
    merged.push({ role: 'int8', unit: 'byte', encoding: hi.encoding, addrs: lo.addrs.map((a) => a >> 1) });
  }
  for (const p of pending) if (!used.has(p)) merged.push({ ...p, unit: 'nibble' });

  // Region: first to last byte holding weight bits; addresses become region-relative.
  let minS = NS, maxS = -1;
  for (let s = 0; s < NS; s++) if (kind[s] === KIND_WEIGHT) { if (s < minS) minS = s; maxS = s; }
  const regionOffset = minS >> 1, regionEnd = (maxS >> 1) + 1, regionLength = regionEnd - regionOffset;
  const inRegion = ranges((b) => kind[2 * b] === KIND_UNEXPLAINED || kind[2 * b + 1] === KIND_UNEXPLAINED, regionOffset, regionEnd);
  if (inRegion.length) {
    throw new ReError('LAYOUT_INCONSISTENT', `bytes ${fmtRanges(inRegion)} inside the weight region (${regionOffset}..${regionEnd - 1}) change with the probes but carry no weight (checksums, scales or a transform the probes cannot explain); refusing to emit a layout that would not reproduce them`);
  }
  for (const c of merged) {
    const shift = c.unit === 'byte' ? regionOffset : 2 * regionOffset;
    const addrs = c.addrs.map((a) => a - shift);
    const rule = fitRule(addrs, m.rows, m.cols);
    const comp = { role: c.role, unit: c.unit, encoding: c.encoding, ...(rule ? { rule } : { table: Array.from(addrs) }) };
    components.push({ ...comp, description: describe(comp, m.rows, m.cols) });
  }

  // Background: the region's non-weight nibbles, as one fill byte when they agree with one.
  const region0 = compiled[0]!.slice(regionOffset, regionEnd);
  const isWeightNib = (b: number, h: number) => kind[2 * (regionOffset + b) + h] === KIND_WEIGHT;
  const template = region0.slice();
  const fillCounts = new Map<number, number>();
  let paddingBytes = 0;
  for (let b = 0; b < regionLength; b++) {
    if (isWeightNib(b, 0)) template[b]! &= 0xf0;
    if (isWeightNib(b, 1)) template[b]! &= 0x0f;
    if (!isWeightNib(b, 0) && !isWeightNib(b, 1)) { paddingBytes++; fillCounts.set(template[b]!, (fillCounts.get(template[b]!) ?? 0) + 1); }
  }
  let fill = 0, best = -1;
  for (const [v, n] of fillCounts) if (n > best) { best = n; fill = v; }
  let fillOk = true;
  for (let b = 0; b < regionLength && fillOk; b++) {
    for (let h = 0; h < 2; h++) if (!isWeightNib(b, h) && ((template[b]! >> (4 * h)) & 15) !== ((fill >> (4 * h)) & 15)) { fillOk = false; break; }
  }
  const volatileRegion = ranges((b) => kind[2 * (regionOffset + b)] === KIND_VOLATILE || kind[2 * (regionOffset + b) + 1] === KIND_VOLATILE, 0, regionLength);
  const outsideVolatile = ranges((b) => (b < regionOffset || b >= regionEnd) && (kind[2 * b] === KIND_VOLATILE || kind[2 * b + 1] === KIND_VOLATILE), 0, S);
  const outsideUnexplained = ranges((b) => (b < regionOffset || b >= regionEnd) && (kind[2 * b] === KIND_UNEXPLAINED || kind[2 * b + 1] === KIND_UNEXPLAINED), 0, S);

  const summary = [
    `${m.rows}x${m.cols} int${m.bits} weights in bytes ${regionOffset}..${regionEnd - 1} (${regionLength} bytes, ${paddingBytes} padding) of a ${S}-byte file`,
    ...components.map((c) => c.description),
  ];
  const lo = components.find((c) => c.role === 'lo'), hi = components.find((c) => c.role === 'hi');
  if (lo?.rule && hi?.rule && lo.rule.rowStride === hi.rule.rowStride && lo.rule.colStride === hi.rule.colStride) {
    const d = hi.rule.base - lo.rule.base;
    summary.push(`nibble planes: the coarse (high-nibble) plane is ${Math.abs(d) / 2} bytes ${d > 0 ? 'after' : 'before'} the fine (low-nibble) plane`);
  }
  if (fillOk) summary.push(`padding/background byte 0x${fill.toString(16).padStart(2, '0')}`);
  else summary.push('background is not a single fill byte: kept as a template');
  if (volatileRegion.length) summary.push(`nondeterministic bytes inside the region (kept from the first build): ${fmtRanges(volatileRegion)}`);
  if (outsideVolatile.length) summary.push(`nondeterministic bytes outside the region (build ids, timestamps): ${fmtRanges(outsideVolatile)}`);
  if (outsideUnexplained.length) summary.push(`bytes outside the region that change with content (not reproduced): ${fmtRanges(outsideUnexplained)}`);

  const layout: Layout = {
    format: 'gguf-edge-layout', version: 1, rows: m.rows, cols: m.cols, bits: m.bits, fileSize: S,
    region: { offset: regionOffset, length: regionLength },
    components,
    background: fillOk ? { fill } : { template: toBase64(template) },
    volatile: volatileRegion,
    outside: { volatile: outsideVolatile, unexplained: outsideUnexplained },
    paddingBytes,
    summary,
  };

  // Safety net: our encoder must reproduce every compiled probe (outside volatile nibbles) and decode it back.
  for (let k = 0; k < P; k++) {
    const packed = packLayout(layout, probes[k]!);
    const want = compiled[k]!.subarray(regionOffset, regionEnd);
    for (let b = 0; b < regionLength; b++) {
      for (let h = 0; h < 2; h++) {
        if (kind[2 * (regionOffset + b) + h] === KIND_VOLATILE) continue;
        if (((packed[b]! ^ want[b]!) >> (4 * h)) & 15) {
          throw new ReError('LAYOUT_INCONSISTENT', `re-encoding ${probeFileName(k)} disagrees with ${compiledFileName(k)} at byte ${regionOffset + b}; refusing to emit the layout`);
        }
      }
    }
    const back = unpackLayout(layout, want);
    for (let i = 0; i < N; i++) if (back[i] !== probes[k]![i]) throw new ReError('LAYOUT_INCONSISTENT', `decoding ${compiledFileName(k)} gives ${back[i]} at ${coord(i)}, the probe has ${probes[k]![i]}`);
  }
  return layout;
}
