// `gguf-edge npu …`: our own NPU engine tooling (issue #10): compile a GGUF into engine blobs, inspect
// and execute a blob on the mock runtime, and pack one int8 matrix into the AX8850 nibble-plane layout
// (the RE toolkit's test target). Errors are one line on stderr (`gguf-edge npu: [CODE] message`).

import { parseArgs } from 'node:util';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from '../main.js';
import { packMatrix, paddedCols, planeBytes } from '../../backends/npu/nibble-planes.js';
import { compileModel } from '../../backends/npu/compile-model.js';
import { NPU_TARGETS, type NpuTarget, type TensorEncodeReport } from '../../backends/npu/encoder.js';
import { EngineFormatError, elements, parseEngine, type ParsedEngine } from '../../backends/npu/engine-format.js';
import { createMockNpuRuntime } from '../../backends/npu/mock-runtime.js';
import { f16ToF32, f32ToF16 } from '../../quant/index.js';
import { openGguf } from '../../gguf/open.js';

export class NpuCliError extends Error {
  constructor(readonly code: 'BAD_ARGS' | 'IO' | 'SIZE_MISMATCH' | 'BAD_ENGINE' | 'MODEL', message: string) {
    super(message);
    this.name = 'NpuCliError';
  }
}

const help = `gguf-edge npu <subcommand> [options]: our own NPU engines (AX8850-style int8 nibble planes).
See docs/npu.md for the blob format and the weight layout.

  npu compile MODEL --out DIR [--npu-target ax8850|htp] [--ctx N] [--shapes 128,1] [--json]
      Encodes every transformer layer ('blk.N') and the output head ('output') of a GGUF model into one
      engine blob per (group, static shape): prefill in chunks of 128 tokens and decode 1 by default
      (--shapes: comma-separated token counts). The KV cache I/O holds --ctx positions (default 2048).
      Writes DIR/<group>.<tokens>.engine and DIR/manifest.json: the engines (file, group, static shape,
      phase, I/O names/shapes/dtypes/bytes, blob bytes, sha256) and every weight's encoding error (Q8_0
      and Q4_0 map exactly; other types are requantized to int8 per 32 weights: max-abs and relative error).
      --npu-target (default ax8850) is recorded in each blob's header.
      JSON (stdout): {out, manifest, engines, bytes}

  npu inspect BLOB [--json] [--execute-pattern]
      Prints an engine blob's header (target, group name, static token count, sizes), its I/O table and a
      summary of its program (ops, weights, constants, scratch). --execute-pattern loads it into the mock
      NPU runtime and runs it once on a deterministic input (f32/f16 inputs 0.5*sin(0.1*i + 1.3*k) for input
      k, i32 inputs 0, 1, 2, ...), printing each output's checksum (FNV-1a of its bytes), min, max, mean,
      rms and non-finite count, and the bytes/calls the runtime counted.
      JSON: {file, bytes, header, inputs, outputs, ops, weights, constants, scratchBytes, weightBytes,
             execution?: {outputs: [{name, dtype, shape, fnv1a, min, max, mean, rms, nonFinite}], counters, ms}}

  npu pack-matrix --rows R --cols C --in M.i8 --out W.bin [--json]
      Packs one row-major int8 matrix (R*C signed bytes) into the engine's weight region, exactly as engine
      blobs store weights: each row padded with zeros to a multiple of 36 weights and cut into blocks of
      36 bytes; byte k (0 <= k < 18) of a block holds the low nibbles of weights 2k (bits 0-3) and 2k+1
      (bits 4-7), byte 18+k their high nibbles. Writes R * ceil(C/36)*36 bytes (no scales: see docs/npu.md).
      JSON: {rows, cols, paddedCols, bytes, out}

Errors: one line on stderr, exit code 1; codes BAD_ARGS, IO, SIZE_MISMATCH, BAD_ENGINE, MODEL.`;

type Opts = Record<string, { type: 'string' | 'boolean'; multiple?: boolean }>;
type Values = Record<string, string | boolean | (string | boolean)[] | undefined>;

function parse(sub: string, args: string[], options: Opts): { values: Values; positionals: string[] } {
  try {
    return parseArgs({ args, options: { ...options, json: { type: 'boolean' } }, allowPositionals: true, strict: true });
  } catch (e) {
    throw new NpuCliError('BAD_ARGS', `npu ${sub}: ${(e as Error).message}`);
  }
}

function req<T>(v: T | undefined, name: string, sub: string): T {
  if (v === undefined || v === '') throw new NpuCliError('BAD_ARGS', `npu ${sub}: ${name} is required`);
  return v;
}

function posInt(v: string | undefined, name: string, sub: string): number {
  const s = req(v, name, sub);
  const n = Number(s);
  if (!/^\d+$/.test(s) || !Number.isSafeInteger(n) || n < 1) throw new NpuCliError('BAD_ARGS', `npu ${sub}: ${name} must be a positive integer, got "${s}"`);
  return n;
}

function readFile(path: string, what: string): Uint8Array {
  try {
    return readFileSync(path);
  } catch (e) {
    throw new NpuCliError('IO', `cannot read ${what} ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
}

function writeFile(path: string, bytes: Uint8Array | string, what: string): void {
  try {
    writeFileSync(path, bytes);
  } catch (e) {
    throw new NpuCliError('IO', `cannot write ${what} ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
}

const out = (s: string) => process.stdout.write(s + '\n');

/** Largest matrix pack-matrix takes: the output buffer stays bounded on any input. */
const MAX_PACK_WEIGHTS = 2 ** 30;

async function packMatrixCmd(args: string[]): Promise<number> {
  const sub = 'pack-matrix';
  const { values: v, positionals } = parse(sub, args, { rows: { type: 'string' }, cols: { type: 'string' }, in: { type: 'string' }, out: { type: 'string' } });
  if (positionals.length) throw new NpuCliError('BAD_ARGS', `npu ${sub}: unexpected argument ${positionals[0]}`);
  const rows = posInt(v.rows as string | undefined, '--rows', sub), cols = posInt(v.cols as string | undefined, '--cols', sub);
  const inFile = req(v.in as string | undefined, '--in', sub), outFile = req(v.out as string | undefined, '--out', sub);
  if (rows * paddedCols(cols) > MAX_PACK_WEIGHTS) throw new NpuCliError('BAD_ARGS', `npu ${sub}: ${rows} x ${cols} exceeds ${MAX_PACK_WEIGHTS} packed weights`);
  const m = readFile(inFile, 'matrix');
  if (m.length !== rows * cols) throw new NpuCliError('SIZE_MISMATCH', `npu ${sub}: ${inFile} has ${m.length} bytes, a ${rows} x ${cols} int8 matrix has ${rows * cols}`);
  const planes = packMatrix(new Int8Array(m.buffer, m.byteOffset, m.length), rows, cols);
  writeFile(outFile, planes, 'weight region');
  const res = { rows, cols, paddedCols: paddedCols(cols), bytes: planeBytes(rows, cols), out: outFile };
  if (v.json) out(JSON.stringify(res));
  else out(`packed ${rows} x ${cols} int8 (rows padded to ${res.paddedCols}) into ${res.bytes} bytes of nibble planes: ${outFile}`);
  return 0;
}

const DEFAULT_SHAPES = [128, 1];
const DEFAULT_CTX = 2048;
const engineFile = (group: string, nTokens: number) => `${group}.${nTokens}.engine`;
const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

async function compileCmd(args: string[]): Promise<number> {
  const sub = 'compile';
  const { values: v, positionals } = parse(sub, args, { out: { type: 'string' }, 'npu-target': { type: 'string' }, ctx: { type: 'string' }, shapes: { type: 'string' } });
  if (positionals.length !== 1) throw new NpuCliError('BAD_ARGS', `npu ${sub}: expected one MODEL argument, got ${positionals.length}`);
  const model = positionals[0]!;
  const outDir = req(v.out as string | undefined, '--out', sub);
  const target = (v['npu-target'] as string | undefined) ?? 'ax8850';
  if (!NPU_TARGETS.includes(target as NpuTarget)) throw new NpuCliError('BAD_ARGS', `npu ${sub}: --npu-target must be one of ${NPU_TARGETS.join(', ')}, got "${target}"`);
  const nCtx = v.ctx === undefined ? DEFAULT_CTX : posInt(v.ctx as string, '--ctx', sub);
  const shapes = v.shapes === undefined ? DEFAULT_SHAPES : (v.shapes as string).split(',').map((x) => posInt(x.trim(), '--shapes', sub));
  if (new Set(shapes).size !== shapes.length) throw new NpuCliError('BAD_ARGS', `npu ${sub}: --shapes lists a token count twice`);
  let file;
  try {
    file = openGguf(model);
  } catch (e) {
    throw new NpuCliError('MODEL', `${model}: ${(e as Error).message}`);
  }
  try { mkdirSync(outDir, { recursive: true }); } catch (e) { throw new NpuCliError('IO', `cannot create ${outDir}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`); }
  const engines: unknown[] = [];
  const tensors = new Map<string, Omit<TensorEncodeReport, 'planeBytes' | 'scaleBytes'>>();
  let total = 0;
  try {
    compileModel(file, { target: target as NpuTarget, shapes, nCtx }, ({ group, nTokens, engine }) => {
      const name = engineFile(group, nTokens);
      writeFile(join(outDir, name), engine.blob, 'engine');
      total += engine.blob.length;
      const { header, program } = parseEngine(engine.blob);
      engines.push({
        file: name, group, staticShape: nTokens, phase: nTokens === 1 ? 'decode' : 'prefill', target: header.target,
        bytes: engine.blob.length, sha256: sha256(engine.blob),
        inputs: program.inputs.map(({ name: n, shape, dtype, bytes }) => ({ name: n, shape, dtype, bytes })),
        outputs: program.outputs.map(({ name: n, shape, dtype, bytes }) => ({ name: n, shape, dtype, bytes })),
        ops: engine.report.ops, weightBytes: engine.report.weightBytes, constantBytes: engine.report.constantBytes, scratchBytes: engine.report.scratchBytes,
      });
      for (const t of engine.report.tensors) {
        const { planeBytes: _p, scaleBytes: _s, ...rest } = t;
        tensors.set(t.name, rest);
      }
      if (!v.json) process.stderr.write(`npu compile: ${name} (${(engine.blob.length / 2 ** 20).toFixed(1)} MiB)\n`);
    });
  } catch (e) {
    if (e instanceof NpuCliError) throw e;
    throw new NpuCliError('MODEL', `${model}: ${(e as Error).message}`);
  }
  const manifest = {
    format: 'gguf-edge-npu-manifest', version: 1, model, target, ctx: nCtx, kvType: 'f16', shapes,
    engines, tensors: [...tensors.values()], totalBytes: total,
  };
  writeFile(join(outDir, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n', 'manifest');
  const res = { out: outDir, manifest: join(outDir, 'manifest.json'), engines: engines.length, bytes: total };
  if (v.json) out(JSON.stringify(res));
  else {
    const inexact = [...tensors.values()].filter((t) => !t.exact);
    out(`${engines.length} engines (${(total / 2 ** 20).toFixed(1)} MiB) for ${target} in ${outDir}; manifest.json written`);
    out(inexact.length ? `${inexact.length} weights requantized to int8; worst relative error ${Math.max(...inexact.map((t) => t.relErr)).toExponential(2)}` : 'every weight mapped exactly (Q8_0/Q4_0)');
  }
  return 0;
}

function describeEngine(path: string, blob: Uint8Array, e: ParsedEngine) {
  const p = e.program;
  const ops = new Map<string, number>();
  for (const o of p.ops) ops.set(o.op, (ops.get(o.op) ?? 0) + 1);
  const weights = p.tensors.filter((t) => t.kind === 'weight').map((t) => ({ name: t.name, source: t.source, rows: t.shape[1], cols: t.shape[0], planeBytes: t.planes!.bytes, scaleBytes: t.scales!.bytes }));
  const constants = p.tensors.filter((t) => t.kind === 'const').map((t) => ({ name: t.name, shape: t.shape, bytes: t.data!.bytes }));
  const { version, target, nTokens, name, dataOffset, dataBytes } = e.header;
  return {
    file: path, bytes: blob.length,
    header: { magic: 'GENG', version, target, name, staticTokens: nTokens, dataOffset, dataBytes },
    inputs: p.inputs.map(({ name: n, shape, dtype, bytes }) => ({ name: n, shape, dtype, bytes })),
    outputs: p.outputs.map(({ name: n, shape, dtype, bytes }) => ({ name: n, shape, dtype, bytes })),
    ops: [...ops.entries()].map(([op, count]) => ({ op, count })),
    weights, constants, scratchBytes: p.scratchBytes,
    weightBytes: weights.reduce((s, w) => s + w.planeBytes + w.scaleBytes, 0),
  };
}

function fnv1aHex(b: Uint8Array): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < b.length; i++) h = Math.imul(h ^ b[i]!, 0x01000193);
  return (h >>> 0).toString(16).padStart(8, '0');
}

/** Fills input k deterministically: floats 0.5*sin(0.1*i + 1.3*k), integers 0, 1, 2, ... */
function patternInput(dtype: string, bytes: number, k: number): Uint8Array {
  const b = new Uint8Array(bytes);
  const n = bytes / (dtype === 'f16' ? 2 : 4);
  if (dtype === 'f32') { const f = new Float32Array(b.buffer); for (let i = 0; i < n; i++) f[i] = 0.5 * Math.sin(0.1 * i + 1.3 * k); }
  else if (dtype === 'f16') { const h = new Uint16Array(b.buffer); for (let i = 0; i < n; i++) h[i] = f32ToF16(0.5 * Math.sin(0.1 * i + 1.3 * k)); }
  else if (dtype === 'i32' || dtype === 'u32') { const v = new Int32Array(b.buffer); for (let i = 0; i < n; i++) v[i] = i; }
  return b;
}

function outputStats(dtype: string, b: Uint8Array) {
  const vals: ArrayLike<number> = dtype === 'f32' ? new Float32Array(b.buffer, b.byteOffset, b.byteLength / 4)
    : dtype === 'f16' ? Array.from(new Uint16Array(b.buffer, b.byteOffset, b.byteLength / 2), f16ToF32)
    : new Int32Array(b.buffer, b.byteOffset, b.byteLength / 4);
  let min = Infinity, max = -Infinity, sum = 0, sq = 0, nonFinite = 0, n = 0;
  for (let i = 0; i < vals.length; i++) {
    const x = vals[i]!;
    if (!Number.isFinite(x)) { nonFinite++; continue; }
    n++; sum += x; sq += x * x;
    if (x < min) min = x;
    if (x > max) max = x;
  }
  return { fnv1a: fnv1aHex(b), min: n ? min : null, max: n ? max : null, mean: n ? sum / n : null, rms: n ? Math.sqrt(sq / n) : null, nonFinite };
}

async function executePattern(blob: Uint8Array) {
  // one thread and ggml's float order: the checksums are the same on every run and machine
  const rt = await createMockNpuRuntime({ threads: 1, numerics: 'exact' });
  try {
    const ctx = rt.createContext(0);
    const t0 = performance.now();
    const h = ctx.loadEngine(blob);
    const info = ctx.engineInfo(h);
    const ins = info.inputs.map((io, k) => { const p = ctx.malloc(io.bytes); ctx.memcpyHostToDevice(p, patternInput(io.dtype, io.bytes, k)); return p; });
    // a tensor both read and written (the KV cache) is bound once: updated in place
    const outs = info.outputs.map((io) => { const k = info.inputs.findIndex((i) => i.name === io.name); return k >= 0 ? ins[k]! : ctx.malloc(io.bytes); });
    const t1 = performance.now();
    ctx.execute(h, ins, outs);
    const ms = performance.now() - t1;
    const outputs = info.outputs.map((io, j) => {
      const b = new Uint8Array(io.bytes);
      ctx.memcpyDeviceToHost(b, outs[j]!);
      return { name: io.name, dtype: io.dtype, shape: io.shape, ...outputStats(io.dtype, b) };
    });
    const counters = ctx.counters();
    ctx.destroy();
    return { outputs, counters, ms: Number(ms.toFixed(3)), loadMs: Number((t1 - t0).toFixed(3)) };
  } finally {
    await rt.close();
  }
}

async function inspectCmd(args: string[]): Promise<number> {
  const sub = 'inspect';
  const { values: v, positionals } = parse(sub, args, { 'execute-pattern': { type: 'boolean' } });
  if (positionals.length !== 1) throw new NpuCliError('BAD_ARGS', `npu ${sub}: expected one BLOB argument, got ${positionals.length}`);
  const path = positionals[0]!;
  const blob = readFile(path, 'engine blob');
  let parsed: ParsedEngine;
  try {
    parsed = parseEngine(blob);
  } catch (e) {
    if (e instanceof EngineFormatError) throw new NpuCliError('BAD_ENGINE', `${path}: ${e.message}`);
    throw e;
  }
  const d = describeEngine(path, blob, parsed);
  const execution = v['execute-pattern'] ? await executePattern(blob) : undefined;
  if (v.json) {
    out(JSON.stringify(execution ? { ...d, execution } : d));
    return 0;
  }
  const MiB = (n: number) => `${(n / 2 ** 20).toFixed(2)} MiB`;
  out(`${path}: ${blob.length} bytes (${MiB(blob.length)})`);
  out(`  engine v${d.header.version} for ${d.header.target}: group ${d.header.name}, static shape ${d.header.staticTokens} token${d.header.staticTokens === 1 ? '' : 's'}`);
  out(`  weights ${MiB(d.weightBytes)} (${d.weights.length} int8 nibble-plane matrices), constants ${d.constants.length}, scratch ${MiB(d.scratchBytes)}`);
  const io = (x: { name: string; shape: number[]; dtype: string; bytes: number }) => `    ${x.name.padEnd(24)} ${x.dtype.padEnd(4)} [${x.shape.join(', ')}] ${x.bytes} bytes`;
  out(`  inputs (${d.inputs.length}):`);
  for (const x of d.inputs) out(io(x));
  out(`  outputs (${d.outputs.length}):`);
  for (const x of d.outputs) out(io(x));
  out(`  ops: ${d.ops.map((o) => `${o.op} x${o.count}`).join(', ')}`);
  for (const w of d.weights) out(`    weight ${w.name.padEnd(28)} ${w.rows} x ${w.cols} from ${w.source}`);
  if (execution) {
    out(`  executed on the mock runtime in ${execution.ms} ms (load ${execution.loadMs} ms):`);
    for (const o of execution.outputs) {
      const f = (x: number | null) => (x === null ? '-' : x.toPrecision(6));
      out(`    ${o.name.padEnd(24)} fnv1a ${o.fnv1a}  min ${f(o.min)}  max ${f(o.max)}  mean ${f(o.mean)}  rms ${f(o.rms)}${o.nonFinite ? `  non-finite ${o.nonFinite}` : ''}`);
    }
    const c = execution.counters;
    out(`    counters: host->device ${c.bytesHostToDevice} B, device->host ${c.bytesDeviceToHost} B, engine calls ${c.engineCalls}`);
  }
  return 0;
}

const subcommands: Record<string, (args: string[]) => Promise<number>> = {
  compile: compileCmd,
  inspect: inspectCmd,
  'pack-matrix': packMatrixCmd,
};

export const command: Command = {
  summary: 'NPU engines: compile, inspect, pack-matrix (AX8850 nibble planes)',
  help,
  async run(args: string[]): Promise<number> {
    const [sub, ...rest] = args;
    const fn = sub ? subcommands[sub] : undefined;
    if (!fn) throw new NpuCliError('BAD_ARGS', sub ? `unknown subcommand '${sub}' (one of ${Object.keys(subcommands).join(', ')})` : `a subcommand is required (one of ${Object.keys(subcommands).join(', ')})`);
    return fn(rest);
  },
};
