// `gguf-edge re …`: the reverse-engineering toolkit for closed NPU model formats (see docs/re.md).
// Each subcommand prints human output by default and one JSON document with --json; errors are ReErrors
// (stable code, one line on stderr via main.ts) and the exit code is non-zero.

import { parseArgs } from 'node:util';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from '../main.js';
import { ReError } from '../../re/errors.js';
import { hex } from '../../re/bytes.js';
import { decodeProtobuf, formatProtobuf, listBlobs } from '../../re/protobuf.js';
import { formatTable, walkFlatbuffer } from '../../re/flatbuffer.js';
import { diffBuffers, type WordSize } from '../../re/diff.js';
import { locate, type LocateKind } from '../../re/locate.js';
import { entropyProfile } from '../../re/entropy.js';
import { compiledFileName, generateProbes, parseManifest, probeFileName } from '../../re/probes.js';
import { solveLayout } from '../../re/solve.js';
import { packLayout, parseLayout, regionOf, unpackLayout } from '../../re/layout.js';

const help = `gguf-edge re <subcommand> [options]: reverse-engineer closed NPU model formats.

Every subcommand prints human-readable output, or one JSON document with --json.
Offsets and sizes accept decimal or 0x-prefixed hex. Errors: one line on stderr, exit code 1.

Container decoding
  re protobuf FILE [--offset N] [--length M] [--depth D] [--blobs [--min-size S]] [--json]
      Schema-less protobuf wire decoding of FILE[N, N+M): field numbers, wire types, varints (unsigned,
      signed, zigzag), fixed32/64 (ints and floats); length-delimited fields tried as a nested message, then
      UTF-8 string, then packed numbers, then bytes, each with the reason. --depth limits message nesting
      (default 32). --blobs lists only the large byte fields (>= --min-size, default 1024) with offset,
      size and entropy.
      JSON: {file, base, size, fields: [Field], error?: {offset, message}}
            Field = {offset, end, field, wireType, wire, varint?: {unsigned, signed, zigzag},
                     fixed32?: {u32, i32, f32}, fixed64?: {u64, i64, f64}, group?: [Field],
                     len?: {dataOffset, size, as, reason, message?: [Field], messageError?, string?,
                            packed?: {varint?, fixed32?, fixed64?, truncated?}, entropy, preview,
                            flatbufferRoot?}}
            --blobs: {file, blobs: [{path, offset, size, entropy, as}]}
      A decode that stops at malformed bytes prints what was decoded, then fails with the offset.

  re flatbuffer FILE [--offset N] [--size M] [--depth D] [--json]
      Schema-less flatbuffer walk of the buffer starting at N (the root uoffset; default 0), M bytes long
      (default: to the end of FILE): vtables (size, object size, slots) and per field a guess (scalar,
      string, vector, table) with bounds checks, recursively.
      JSON: {file, base, size, rootOffset, fileIdentifier?, root: Table}
            Table = {offset, vtable: {offset, size, objectSize, slots}, fields: [Field], stopped?}
            Field = {slot, offset, maxWidth, scalar: {u8, i8, u16?, ..., f64?}, guess, reason, target?,
                     string?, table?: Table, vector?: {offset, length, dataOffset, elementWidths,
                     elements, tables?, strings?, bytes?, truncated?}}

Comparing builds
  re diff A B [--mask C D ...] [--word 8|16|32] [--merge G] [--max K] [--json]
      Aligned word diff of A and B (little-endian words, default 8-bit). Words that differ between the
      --mask files (two or more builds of one input) are masked as nondeterministic first. Differing words
      are grouped into regions (runs; --merge joins runs separated by at most G equal words). --max limits
      the regions printed (default 50; JSON lists all).
      JSON: {word, sizeA, sizeB, compared, differing, masked, maskedRegions: [Region], regions: [Region],
             runLengths: {words: count}}   Region = {offset, length, words}

Finding values
  re locate FILE (--u32 V | --f32 V | --f16 V | --bf16 V) [--be] [--max K] [--json]
      Every byte offset (any alignment) where V is stored, little-endian unless --be. Floats are rounded to
      the type first, then matched bit-exactly. --max caps listed offsets (default 1000).
      JSON: {file, kind, value, bits, endian, count, offsets, truncated}
  re entropy FILE [--window W] [--step S] [--json]
      Shannon entropy (bits/byte) per window (default 4096 bytes, step = window), plus segments of
      low (<3), mid and high (>=7) entropy.
      JSON: {file, size, window, step, overall, windows: [{offset, length, entropy}],
             segments: [{offset, length, class, mean}]}

Learning a weight layout with marker probes
  re probe-gen --rows R --cols C --bits 8|4 --out DIR [--json]
      Writes probe-NN.i8 (row-major signed bytes; within -8..7 for --bits 4) and manifest.json to DIR.
      Together the probes encode every weight's (row, col): 4 + ceil(log16(R*C)) probes.
      Compile each probe-NN.i8 with the vendor compiler into compiled-NN.bin (same NN).
      JSON: {dir, manifest, rows, cols, bits, probes: [{file, role, digit?}]}
  re layout-solve --probes DIR --compiled DIR --out layout.json [--json]
      Finds the region holding the weights and, for every weight, where it went (byte or nibble), its
      encoding (two's complement or offset binary), nibble-plane splits and their offset, tiling and
      padding; writes a layout descriptor (compact affine/tiled rules, an explicit table otherwise).
      The layout is verified by re-encoding every probe; inconsistent probes are an error, never a layout.
      JSON: {out, rows, cols, bits, region: {offset, length}, paddingBytes, components: [{role, unit,
             encoding, rule?, tableEntries?, description}], summary: [string]}
  re layout-unpack --layout L --blob B --out M.i8 [--json]
      Decodes the weights from B (the weight region, or a whole compiled file) into row-major signed bytes.
      JSON: {out, rows, cols, bits, values, min, max}
  re layout-pack --layout L (--in M.i8 | --gguf FILE --tensor NAME [--scales S.f32]) --out B [--json]
      Our open encoder: writes the weight region for the device from a row-major signed-byte matrix, or
      from a GGUF tensor (dequantized, then requantized to int8/int4 by the layout's bits with one
      symmetric scale per row; --scales writes those scales as little-endian f32).
      JSON: {out, bytes, regionOffset, rows, cols, bits, source}
`;

const NUM = /^(0x[0-9a-f]+|[0-9]+)$/i;

function int(v: string | undefined, name: string): number | undefined {
  if (v === undefined) return undefined;
  if (!NUM.test(v)) throw new ReError('BAD_ARGS', `${name} expects a non-negative integer (decimal or 0x hex), got '${v}'`);
  const n = Number(v);
  if (!Number.isSafeInteger(n)) throw new ReError('BAD_ARGS', `${name} value '${v}' is too large`);
  return n;
}

function req<T>(v: T | undefined, name: string, sub: string): T {
  if (v === undefined) throw new ReError('BAD_ARGS', `re ${sub}: ${name} is required`);
  return v;
}

function read(file: string): Uint8Array {
  try {
    return new Uint8Array(readFileSync(file));
  } catch (e) {
    throw new ReError('IO', `cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
}

function write(file: string, data: Uint8Array | string): void {
  try {
    writeFileSync(file, data);
  } catch (e) {
    throw new ReError('IO', `cannot write ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
}

function out(text: string): void {
  process.stdout.write(text.endsWith('\n') ? text : text + '\n');
}

function json(x: unknown): void {
  out(JSON.stringify(x, null, 2));
}

type Opts = Record<string, { type: 'string' | 'boolean'; multiple?: boolean }>;

type Parsed = { values: Record<string, string | boolean | (string | boolean)[] | undefined>; positionals: string[] };

function parse(sub: string, args: string[], options: Opts): Parsed {
  try {
    return parseArgs({ args, options: { ...options, json: { type: 'boolean' } }, allowPositionals: true, strict: true });
  } catch (e) {
    throw new ReError('BAD_ARGS', `re ${sub}: ${(e as Error).message}`);
  }
}

function onePositional(sub: string, pos: string[]): string {
  if (pos.length !== 1) throw new ReError('BAD_ARGS', `re ${sub}: expected one FILE argument, got ${pos.length}`);
  return pos[0]!;
}

async function protobuf(args: string[]): Promise<number> {
  const { values: v, positionals } = parse('protobuf', args, {
    offset: { type: 'string' }, length: { type: 'string' }, depth: { type: 'string' }, blobs: { type: 'boolean' }, 'min-size': { type: 'string' },
  });
  const file = onePositional('protobuf', positionals);
  const buf = read(file);
  const offset = int(v.offset as string, '--offset') ?? 0;
  const length = int(v.length as string, '--length');
  if (offset > buf.length) throw new ReError('OUT_OF_RANGE', `${file}: --offset ${offset} is past the end (size ${buf.length})`);
  if (length !== undefined && offset + length > buf.length) throw new ReError('OUT_OF_RANGE', `${file}: --offset ${offset} --length ${length} runs past the end (size ${buf.length})`);
  const slice = buf.subarray(offset, length === undefined ? buf.length : offset + length);
  const depth = int(v.depth as string, '--depth');
  const res = decodeProtobuf(slice, depth === undefined ? {} : { maxDepth: depth }, offset);
  if (v.blobs) {
    const blobs = listBlobs(res.fields, int(v['min-size'] as string, '--min-size') ?? 1024);
    if (v.json) json({ file, blobs });
    else if (blobs.length === 0) out('no byte fields of that size');
    else out(blobs.map((b) => `field ${b.path} @${b.offset} size ${b.size} entropy ${b.entropy.toFixed(3)} (${b.as})`).join('\n'));
  } else if (v.json) json({ file, ...res });
  else out(formatProtobuf(res.fields).join('\n') || '(no fields)');
  if (res.error) throw new ReError('PB_MALFORMED', `${file} @${res.error.offset}: ${res.error.message} (${res.fields.length} top-level field(s) decoded before it)`);
  return 0;
}

async function flatbuffer(args: string[]): Promise<number> {
  const { values: v, positionals } = parse('flatbuffer', args, { offset: { type: 'string' }, size: { type: 'string' }, depth: { type: 'string' } });
  const file = onePositional('flatbuffer', positionals);
  const buf = read(file);
  const offset = int(v.offset as string, '--offset') ?? 0;
  const size = int(v.size as string, '--size');
  if (offset > buf.length) throw new ReError('OUT_OF_RANGE', `${file}: --offset ${offset} is past the end (size ${buf.length})`);
  if (size !== undefined && offset + size > buf.length) throw new ReError('OUT_OF_RANGE', `${file}: --offset ${offset} --size ${size} runs past the end (size ${buf.length})`);
  const depth = int(v.depth as string, '--depth');
  let res;
  try {
    res = walkFlatbuffer(buf.subarray(offset, size === undefined ? buf.length : offset + size), depth === undefined ? {} : { maxDepth: depth }, offset);
  } catch (e) {
    if (e instanceof ReError) throw new ReError(e.code, `${file}: ${e.message}`);
    throw e;
  }
  if (v.json) json({ file, ...res });
  else out([`buffer @${res.base} (${res.size} bytes), root table @${res.rootOffset}${res.fileIdentifier ? `, file identifier "${res.fileIdentifier}"?` : ''}`, ...formatTable(res.root)].join('\n'));
  return 0;
}

async function diff(args: string[]): Promise<number> {
  const { values: v, positionals } = parse('diff', args, {
    mask: { type: 'string', multiple: true }, word: { type: 'string' }, merge: { type: 'string' }, max: { type: 'string' },
  });
  if (positionals.length < 2) throw new ReError('BAD_ARGS', 're diff: expected two files A B');
  const maskFiles = [...((v.mask as string[] | undefined) ?? []), ...positionals.slice(2)];
  if (positionals.length > 2 && !v.mask) throw new ReError('BAD_ARGS', `re diff: unexpected argument '${positionals[2]}' (mask files follow --mask)`);
  const word = (int(v.word as string, '--word') ?? 8) as WordSize;
  const [fa, fb] = positionals as [string, string];
  const a = read(fa), b = read(fb);
  const res = diffBuffers(a, b, { word, masks: maskFiles.map(read), merge: int(v.merge as string, '--merge') ?? 0 });
  if (v.json) { json(res); return 0; }
  const max = int(v.max as string, '--max') ?? 50;
  const lines = [
    `${fa} (${res.sizeA} bytes) vs ${fb} (${res.sizeB} bytes), ${word}-bit words: ${res.differing} of ${res.compared} differ${res.masked ? `, ${res.masked} masked as nondeterministic` : ''}${res.sizeA !== res.sizeB ? `; sizes differ by ${res.sizeB - res.sizeA}` : ''}`,
  ];
  if (res.maskedRegions.length) lines.push(`masked: ${res.maskedRegions.slice(0, 10).map((r) => `@${r.offset}+${r.length}`).join(', ')}${res.maskedRegions.length > 10 ? ', …' : ''}`);
  lines.push(`${res.regions.length} region(s); run lengths (words: count): ${Object.entries(res.runLengths).map(([k, n]) => `${k}:${n}`).join(' ')}`);
  for (const r of res.regions.slice(0, max)) {
    lines.push(`  @${r.offset} (0x${r.offset.toString(16)}) ${r.length} bytes, ${r.words} word(s)  A: ${hex(a.subarray(r.offset, r.offset + r.length), 16)}  B: ${hex(b.subarray(r.offset, r.offset + r.length), 16)}`);
  }
  if (res.regions.length > max) lines.push(`  … ${res.regions.length - max} more (--max or --json)`);
  out(lines.join('\n'));
  return 0;
}

async function locateCmd(args: string[]): Promise<number> {
  const { values: v, positionals } = parse('locate', args, {
    u32: { type: 'string' }, f32: { type: 'string' }, f16: { type: 'string' }, bf16: { type: 'string' }, be: { type: 'boolean' }, max: { type: 'string' },
  });
  const file = onePositional('locate', positionals);
  const kinds = (['u32', 'f32', 'f16', 'bf16'] as LocateKind[]).filter((k) => v[k] !== undefined);
  if (kinds.length !== 1) throw new ReError('BAD_ARGS', 're locate: give exactly one of --u32, --f32, --f16, --bf16');
  const kind = kinds[0]!;
  const raw = v[kind] as string;
  const value = kind === 'u32' ? int(raw, '--u32')! : Number(raw);
  if (raw.trim() === '' || Number.isNaN(value) && !/^nan$/i.test(raw)) throw new ReError('BAD_ARGS', `--${kind} expects a number, got '${raw}'`);
  const res = locate(read(file), kind, value, { bigEndian: !!v.be, max: int(v.max as string, '--max') ?? 1000 });
  if (v.json) { json({ file, ...res }); return 0; }
  const lines = [`${kind} ${value} (bits 0x${res.bits.toString(16)}, ${res.endian}): ${res.count} match(es)`];
  for (const o of res.offsets) lines.push(`  @${o} (0x${o.toString(16)}) align ${o % 4 === 0 ? 4 : o % 2 === 0 ? 2 : 1}`);
  if (res.truncated) lines.push(`  … ${res.count - res.offsets.length} more (--max)`);
  out(lines.join('\n'));
  return 0;
}

async function entropy(args: string[]): Promise<number> {
  const { values: v, positionals } = parse('entropy', args, { window: { type: 'string' }, step: { type: 'string' } });
  const file = onePositional('entropy', positionals);
  const window = int(v.window as string, '--window') ?? 4096;
  const res = entropyProfile(read(file), window, int(v.step as string, '--step') ?? window);
  if (v.json) { json({ file, ...res }); return 0; }
  const lines = [`${file}: ${res.size} bytes, overall ${res.overall.toFixed(3)} bits/byte, window ${res.window}, step ${res.step}`, 'segments:'];
  for (const s of res.segments) lines.push(`  @${s.offset} +${s.length} ${s.class} (mean ${s.mean.toFixed(2)})`);
  lines.push('windows:');
  for (const w of res.windows.slice(0, 256)) lines.push(`  @${String(w.offset).padStart(10)} ${w.entropy.toFixed(3)} ${'#'.repeat(Math.round(w.entropy * 4))}`);
  if (res.windows.length > 256) lines.push(`  … ${res.windows.length - 256} more windows (--json, or a larger --window)`);
  out(lines.join('\n'));
  return 0;
}

async function probeGen(args: string[]): Promise<number> {
  const { values: v } = parse('probe-gen', args, { rows: { type: 'string' }, cols: { type: 'string' }, bits: { type: 'string' }, out: { type: 'string' } });
  const rows = req(int(v.rows as string, '--rows'), '--rows', 'probe-gen');
  const cols = req(int(v.cols as string, '--cols'), '--cols', 'probe-gen');
  const bits = req(int(v.bits as string, '--bits'), '--bits', 'probe-gen') as 4 | 8;
  const dir = req(v.out as string | undefined, '--out', 'probe-gen');
  const { manifest, matrices } = generateProbes({ rows, cols, bits });
  try { mkdirSync(dir, { recursive: true }); } catch (e) { throw new ReError('IO', `cannot create ${dir}: ${(e as NodeJS.ErrnoException).code}`); }
  matrices.forEach((m, k) => write(join(dir, probeFileName(k)), new Uint8Array(m.buffer)));
  write(join(dir, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n');
  if (v.json) json({ dir, manifest: join(dir, 'manifest.json'), rows, cols, bits, probes: manifest.probes.map(({ file, role, digit }) => ({ file, role, ...(digit !== undefined ? { digit } : {}) })) });
  else out(`wrote ${matrices.length} probes (${rows}x${cols}, ${bits}-bit) and manifest.json to ${dir}\ncompile each probe-NN.i8 to compiled-NN.bin, then run: gguf-edge re layout-solve --probes ${dir} --compiled DIR --out layout.json`);
  return 0;
}

async function layoutSolve(args: string[]): Promise<number> {
  const { values: v } = parse('layout-solve', args, { probes: { type: 'string' }, compiled: { type: 'string' }, out: { type: 'string' } });
  const pdir = req(v.probes as string | undefined, '--probes', 'layout-solve');
  const cdir = req(v.compiled as string | undefined, '--compiled', 'layout-solve');
  const outFile = req(v.out as string | undefined, '--out', 'layout-solve');
  const mpath = join(pdir, 'manifest.json');
  const manifest = parseManifest(new TextDecoder().decode(read(mpath)), mpath);
  const probes = manifest.probes.map((_, k) => { const b = read(join(pdir, probeFileName(k))); return new Int8Array(b.buffer, b.byteOffset, b.length); });
  const compiled = manifest.probes.map((_, k) => {
    const p = join(cdir, compiledFileName(k));
    try { return new Uint8Array(readFileSync(p)); } catch (e) { throw new ReError('COMPILED_MISSING', `cannot read ${p} (the compiler's output for ${probeFileName(k)}): ${(e as NodeJS.ErrnoException).code}`); }
  });
  const layout = solveLayout({ manifest, probes, compiled });
  write(outFile, JSON.stringify(layout, null, 1) + '\n');
  if (v.json) {
    json({
      out: outFile, rows: layout.rows, cols: layout.cols, bits: layout.bits, region: layout.region, paddingBytes: layout.paddingBytes,
      components: layout.components.map((c) => ({ role: c.role, unit: c.unit, encoding: c.encoding, ...(c.rule ? { rule: c.rule } : { tableEntries: c.table!.length }), description: c.description })),
      summary: layout.summary,
    });
  } else out([`layout written to ${outFile}`, ...layout.summary.map((s) => `  ${s}`)].join('\n'));
  return 0;
}

function loadLayout(file: string) {
  return parseLayout(new TextDecoder().decode(read(file)), file);
}

async function layoutUnpack(args: string[]): Promise<number> {
  const { values: v } = parse('layout-unpack', args, { layout: { type: 'string' }, blob: { type: 'string' }, out: { type: 'string' } });
  const layout = loadLayout(req(v.layout as string | undefined, '--layout', 'layout-unpack'));
  const blobFile = req(v.blob as string | undefined, '--blob', 'layout-unpack');
  const outFile = req(v.out as string | undefined, '--out', 'layout-unpack');
  const m = unpackLayout(layout, regionOf(layout, read(blobFile), blobFile));
  write(outFile, new Uint8Array(m.buffer));
  let min = 127, max = -128;
  for (const x of m) { if (x < min) min = x; if (x > max) max = x; }
  if (v.json) json({ out: outFile, rows: layout.rows, cols: layout.cols, bits: layout.bits, values: m.length, min, max });
  else out(`wrote ${layout.rows}x${layout.cols} int${layout.bits} values to ${outFile} (range ${min}..${max})`);
  return 0;
}

async function layoutPack(args: string[]): Promise<number> {
  const { values: v } = parse('layout-pack', args, {
    layout: { type: 'string' }, in: { type: 'string' }, gguf: { type: 'string' }, tensor: { type: 'string' }, scales: { type: 'string' }, out: { type: 'string' },
  });
  const layout = loadLayout(req(v.layout as string | undefined, '--layout', 'layout-pack'));
  const outFile = req(v.out as string | undefined, '--out', 'layout-pack');
  let values: Int8Array;
  let source: string;
  if (v.in !== undefined && v.gguf !== undefined) throw new ReError('BAD_ARGS', 're layout-pack: give --in or --gguf, not both');
  if (v.in !== undefined) {
    const b = read(v.in as string);
    values = new Int8Array(b.buffer, b.byteOffset, b.length);
    source = v.in as string;
  } else if (v.gguf !== undefined) {
    const tensor = req(v.tensor as string | undefined, '--tensor', 'layout-pack');
    const { openGguf } = await import('../../gguf/open.js');
    const { ggufTensorToInt } = await import('../../re/requant.js');
    const gguf = openGguf(v.gguf as string);
    let q;
    try { q = ggufTensorToInt(gguf, tensor, layout.rows, layout.cols, layout.bits); } finally { gguf.source.close?.(); }
    values = q.values;
    source = `${v.gguf}:${tensor}`;
    if (v.scales !== undefined) write(v.scales as string, new Uint8Array(q.scales.buffer));
  } else throw new ReError('BAD_ARGS', 're layout-pack: --in M.i8 or --gguf FILE --tensor NAME is required');
  const blob = packLayout(layout, values);
  write(outFile, blob);
  if (v.json) json({ out: outFile, bytes: blob.length, regionOffset: layout.region.offset, rows: layout.rows, cols: layout.cols, bits: layout.bits, source });
  else out(`wrote ${blob.length} bytes (the weight region; offset ${layout.region.offset} in a compiled file) to ${outFile}`);
  return 0;
}

const subcommands: Record<string, (args: string[]) => Promise<number>> = {
  protobuf, flatbuffer, diff, locate: locateCmd, entropy, 'probe-gen': probeGen,
  'layout-solve': layoutSolve, 'layout-unpack': layoutUnpack, 'layout-pack': layoutPack,
};

export const command: Command = {
  summary: 'reverse-engineer NPU model formats: protobuf/flatbuffer decoding, diffs, probes, layout solving',
  help,
  async run(args: string[]): Promise<number> {
    const [sub, ...rest] = args;
    if (!sub) throw new ReError('BAD_ARGS', `re: missing subcommand (one of ${Object.keys(subcommands).join(', ')}); see 'gguf-edge re --help'`);
    const fn = Object.hasOwn(subcommands, sub) ? subcommands[sub] : undefined;
    if (!fn) throw new ReError('BAD_ARGS', `re: unknown subcommand '${sub}' (one of ${Object.keys(subcommands).join(', ')})`);
    return fn(rest);
  },
};
