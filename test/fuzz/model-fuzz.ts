// Seeded mutation fuzzing of whole model files, each case run the way a user runs a file: parse,
// full model load on the cpu device, tokenizer load (when the file has one), tokenize a prompt, one
// decode step, sample, detokenize. Every case must end in success or a typed error (GgufError,
// TokenizerError, ContextError, GraphShapeError, a cpu runtime error) and never hang, crash or allocate
// without bound. Used by test/fuzz/model-fuzz.test.ts (a small form in npm test) and by
// `npm run fuzz` (test/fuzz/run.ts, 100,000 cases).
//
// Mutations: byte flips (mostly in the header, where decisions are made), count/length/dim/type/offset
// fields set to extremes (the header is walked once per fixture to find them), metadata values replaced
// (integers and floats set to 0, -1, max, NaN, Inf, off by one, scaled), tensor shapes rewritten with
// the data resized (so the file still parses and shape validation is what answers), splices and truncations.

import { readFileSync } from 'node:fs';
import type { Device } from '../../src/backends/backend.js';
import { GgufError } from '../../src/gguf/errors.js';
import { ggmlTypeInfo, GgmlType } from '../../src/gguf/ggml-types.js';
import { parseGguf, type GgufFile } from '../../src/gguf/reader.js';
import { toWriteInput } from '../../src/gguf/rewrite.js';
import { writeGguf, type GgufWriteInput } from '../../src/gguf/writer.js';
import { GraphShapeError } from '../../src/graph/graph.js';
import { Context, ContextError } from '../../src/runtime/context.js';
import { loadModel, type Model } from '../../src/runtime/model.js';
import { argmax } from '../../src/runtime/sampler.js';
import { tokenizerFromGguf, TokenizerError } from '../../src/tokenizer/index.js';
import { fixture } from '../helpers/fixtures.js';

// ---- seeded randomness ----

export type Rng = () => number;
/** mulberry32: a small, fast, seedable PRNG */
export function rng(seed: number): Rng {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const pick = <T>(r: Rng, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
const int = (r: Rng, n: number) => Math.floor(r() * n);

// ---- where the header's fields are ----

export interface Field {
  at: number;
  width: 4 | 8;
  kind: 'tensor_count' | 'kv_count' | 'key_len' | 'value_type' | 'str_len' | 'elem_type' | 'arr_count' | 'n_dims' | 'dim' | 'ggml_type' | 'offset' | 'int' | 'float';
  key?: string;
}

/** Walks a (valid) GGUF header and records every count, length, type, dim and offset field, and numeric values. */
export function headerFields(b: Uint8Array): { fields: Field[]; headerEnd: number } {
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const version = dv.getUint32(4, true);
  const W: 4 | 8 = version >= 2 ? 8 : 4;
  let p = 8;
  const fields: Field[] = [];
  const word = (kind: Field['kind'], key?: string): number => {
    fields.push({ at: p, width: W, kind, key });
    const v = W === 8 ? Number(dv.getBigUint64(p, true)) : dv.getUint32(p, true);
    p += W;
    return v;
  };
  const u32 = (kind: Field['kind'], key?: string): number => { fields.push({ at: p, width: 4, kind, key }); const v = dv.getUint32(p, true); p += 4; return v; };
  const str = (kind: Field['kind'] = 'str_len', record = true): string => {
    const n = W === 8 ? Number(dv.getBigUint64(p, true)) : dv.getUint32(p, true);
    if (record) fields.push({ at: p, width: W, kind });
    p += W;
    const s = new TextDecoder().decode(b.subarray(p, p + n));
    p += n;
    return s;
  };
  const SIZE: Record<number, number> = { 0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8 };
  const nTensors = word('tensor_count');
  const nKv = word('kv_count');
  const value = (type: number, key: string, depth: number): void => {
    if (type === 8) { str(); return; }
    if (type === 9) {
      const et = u32('elem_type', key);
      const n = word('arr_count', key);
      if (et === 8) { for (let i = 0; i < n; i++) str('str_len', n < 4096 || i % 97 === 0); return; }
      if (et === 9) { for (let i = 0; i < n; i++) value(9, key, depth + 1); return; }
      const size = SIZE[et]!;
      // the first elements of numeric arrays (per-layer hyperparameters) are values too
      for (let i = 0; i < Math.min(n, 8); i++) if (size === 4) fields.push({ at: p + 4 * i, width: 4, kind: et === 6 ? 'float' : 'int', key });
      p += n * size;
      return;
    }
    if (type === 4 || type === 5) fields.push({ at: p, width: 4, kind: 'int', key });
    else if (type === 6) fields.push({ at: p, width: 4, kind: 'float', key });
    else if (type === 10 || type === 11) fields.push({ at: p, width: 8, kind: 'int', key });
    p += SIZE[type]!;
  };
  for (let k = 0; k < nKv; k++) {
    const key = str('key_len');
    const type = u32('value_type', key);
    value(type, key, 1);
  }
  for (let t = 0; t < nTensors; t++) {
    str('str_len');
    const nd = u32('n_dims');
    for (let d = 0; d < nd; d++) word('dim');
    u32('ggml_type');
    fields.push({ at: p, width: 8, kind: 'offset' });
    p += 8;
  }
  return { fields, headerEnd: p };
}

// ---- fixtures ----

export interface Seed {
  name: string;
  bytes: Uint8Array;
  fields: Field[];
  headerEnd: number;
  /** writer input for shape rewrites (small files only) */
  input?: GgufWriteInput;
  /** share of the cases */
  weight: number;
}

function seedOf(name: string, bytes: Uint8Array, weight: number, rewritable: boolean): Seed {
  const { fields, headerEnd } = headerFields(bytes);
  return { name, bytes, fields, headerEnd, weight, input: rewritable ? toWriteInput(parseGguf(bytes, name)) : undefined };
}

/** Deterministic filler for synthetic tensors: Q8_0 blocks with a sane scale, small floats otherwise. */
function tensorBytes(r: Rng, type: number, dims: number[], norm: boolean): Uint8Array {
  const n = dims.reduce((a, b) => a * b, 1);
  if (type === GgmlType.Q8_0) {
    const out = new Uint8Array((n / 32) * 34);
    for (let blk = 0; blk < n / 32; blk++) {
      out[blk * 34] = 0x1f; out[blk * 34 + 1] = 0x21; // f16 0.0101
      for (let i = 0; i < 32; i++) out[blk * 34 + 2 + i] = int(r, 256);
    }
    return out;
  }
  const f = new Float32Array(n);
  for (let i = 0; i < n; i++) f[i] = norm ? 1 : (r() - 0.5) * 0.2;
  return new Uint8Array(f.buffer);
}

export const VOCAB_150K = 151_936; // Qwen2/Qwen3's vocabulary size

/**
 * A model with a 150k-entry vocabulary, built here (never committed): llama.cpp's deepseek-llm vocab
 * file (102,400 BPE tokens with merges, from the shared fixtures) padded to 151,936 tokens, as qwen2 with
 * tiny tensors (n_embd 32, one layer, Q8_0 embeddings tied to the output: 5.2 MB).
 */
export function build150kModel(): Uint8Array {
  const vocab = parseGguf(new Uint8Array(readFileSync(fixture('vocab/ggml-vocab-deepseek-llm.gguf'))), 'deepseek-llm');
  const base = toWriteInput(vocab);
  const n0 = (vocab.metadata.get('tokenizer.ggml.tokens') as string[]).length;
  const pad = VOCAB_150K - n0;
  const metadata = base.metadata.map(([k, v]): GgufWriteInput['metadata'][number] => {
    if (k === 'tokenizer.ggml.tokens') return [k, { type: 'array', itemType: 'string', value: [...(v.value as string[]), ...Array.from({ length: pad }, (_, i) => `<|pad_${i}|>`)] }];
    if (k === 'tokenizer.ggml.token_type') return [k, { type: 'array', itemType: 'i32', value: Int32Array.from([...Array.from(v.value as ArrayLike<number>), ...new Array<number>(pad).fill(1)]) }];
    if (k === 'general.architecture') return [k, { type: 'string', value: 'qwen2' }];
    return [k, v];
  }).filter(([k]) => k !== 'general.architecture');
  const E = 32, H = 2, HKV = 1, D = 16, F = 64;
  metadata.unshift(
    ['general.architecture', { type: 'string', value: 'qwen2' }],
    ['qwen2.block_count', { type: 'u32', value: 1 }],
    ['qwen2.context_length', { type: 'u32', value: 256 }],
    ['qwen2.embedding_length', { type: 'u32', value: E }],
    ['qwen2.feed_forward_length', { type: 'u32', value: F }],
    ['qwen2.attention.head_count', { type: 'u32', value: H }],
    ['qwen2.attention.head_count_kv', { type: 'u32', value: HKV }],
    ['qwen2.rope.freq_base', { type: 'f32', value: 1e6 }],
    ['qwen2.attention.layer_norm_rms_epsilon', { type: 'f32', value: 1e-6 }],
  );
  const r = rng(150);
  const t = (name: string, dims: number[], type: number = GgmlType.F32) => ({ name, dims, type, data: tensorBytes(r, type, dims, dims.length === 1 && !name.endsWith('.bias')) });
  const tensors = [
    t('token_embd.weight', [E, VOCAB_150K], GgmlType.Q8_0),
    t('output_norm.weight', [E]),
    t('blk.0.attn_norm.weight', [E]),
    t('blk.0.attn_q.weight', [E, H * D]), t('blk.0.attn_q.bias', [H * D]),
    t('blk.0.attn_k.weight', [E, HKV * D]), t('blk.0.attn_k.bias', [HKV * D]),
    t('blk.0.attn_v.weight', [E, HKV * D]), t('blk.0.attn_v.bias', [HKV * D]),
    t('blk.0.attn_output.weight', [H * D, E]),
    t('blk.0.ffn_norm.weight', [E]),
    t('blk.0.ffn_gate.weight', [E, F]), t('blk.0.ffn_up.weight', [E, F]), t('blk.0.ffn_down.weight', [F, E]),
  ];
  return writeGguf({ metadata, tensors });
}

/** The fixtures mutated: real model files of every supported architecture, GGUF v1 and v3, and the 150k one. */
export function fuzzSeeds(): Seed[] {
  const real = (rel: string, weight: number) => seedOf(rel, new Uint8Array(readFileSync(fixture(rel))), weight, true);
  return [
    real('models/stories260K.gguf', 3),
    real('models/tinyllamas-stories-260k-f32.gguf', 1), // GGUF v1
    real('models/TinyStories-656K-Q8_0.gguf', 2),
    real('parity/qwen3-q4_k_m.gguf', 2),
    real('parity/phi3-q4_0.gguf', 1), // fused QKV and gate/up
    real('parity/gemma2-q8_0.gguf', 1), // soft-caps, post-norms, sliding window
    real('parity/gemma3-q4_k.gguf', 1), // Q/K norms, 5:1 sliding window
    real('parity/qwen2-q8_0.gguf', 1), // biases
    real('parity/lfm2-q4_0.gguf', 1), // short-conv layers: per-layer head_count_kv, conv state
    real('parity/qwen35-q8_0.gguf', 1), // Gated DeltaNet: ssm.* keys, recurrent states, gated attention
    seedOf(`150k-vocab (deepseek-llm padded to ${VOCAB_150K}, qwen2)`, build150kModel(), 0.15, false),
  ];
}

// ---- mutations ----

const EXTREME_32 = [0, 1, 2, 0x7f, 0xff, 0xffff, 0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff];
const EXTREME_64 = [0n, 1n, 0xffffffffn, 0x100000000n, 0x7fffffffffffffffn, 0x8000000000000000n, 0xffffffffffffffffn, 1n << 40n, 1n << 53n];
const FLOATS = [0, -0, -1, 1, NaN, Infinity, -Infinity, 1e30, -1e30, 1e-45, 3.4e38, 0.5, 1e-12];

export type MutationKind = 'flip' | 'field' | 'value' | 'shape' | 'splice' | 'truncate';

/** One seeded mutation of a seed file: the mutated bytes and what was done. */
export function mutate(seed: Seed, r: Rng): { bytes: Uint8Array; kind: MutationKind; what: string } {
  const x = r();
  const b = seed.bytes;
  if (x < 0.28) {
    const out = b.slice();
    const n = 1 + int(r, 4);
    const at: number[] = [];
    for (let i = 0; i < n; i++) {
      const p = r() < 0.85 ? int(r, seed.headerEnd) : int(r, out.length);
      out[p] = r() < 0.5 ? out[p]! ^ (1 << int(r, 8)) : int(r, 256);
      at.push(p);
    }
    return { bytes: out, kind: 'flip', what: `bytes at ${at.join(',')}` };
  }
  if (x < 0.56) {
    const f = pick(r, seed.fields.filter((g) => g.kind !== 'int' && g.kind !== 'float'));
    const out = b.slice();
    const dv = new DataView(out.buffer);
    if (f.width === 8) {
      const v = r() < 0.8 ? pick(r, EXTREME_64) : dv.getBigUint64(f.at, true) + BigInt(pick(r, [-1, 1, 2, 1000]));
      dv.setBigUint64(f.at, BigInt.asUintN(64, v), true);
      return { bytes: out, kind: 'field', what: `${f.kind}@${f.at}=${v}` };
    }
    const v = r() < 0.8 ? pick(r, EXTREME_32) : (dv.getUint32(f.at, true) + pick(r, [-1, 1, 2, 1000])) >>> 0;
    dv.setUint32(f.at, v, true);
    return { bytes: out, kind: 'field', what: `${f.kind}@${f.at}=${v}` };
  }
  if (x < 0.80) {
    const values = seed.fields.filter((g) => g.kind === 'int' || g.kind === 'float');
    // mostly the architecture's hyperparameters, sometimes tokenizer ids and anything else
    const arch = values.filter((g) => g.key && !g.key.startsWith('tokenizer.') && !g.key.startsWith('general.'));
    const f = r() < 0.75 && arch.length ? pick(r, arch) : pick(r, values);
    const out = b.slice();
    const dv = new DataView(out.buffer);
    if (f.kind === 'float') {
      const old = dv.getFloat32(f.at, true);
      const v = r() < 0.7 ? pick(r, FLOATS) : old * pick(r, [2, 0.5, -1, 1000]);
      dv.setFloat32(f.at, v, true);
      return { bytes: out, kind: 'value', what: `${f.key}=${v}` };
    }
    if (f.width === 8) {
      const v = pick(r, EXTREME_64);
      dv.setBigUint64(f.at, v, true);
      return { bytes: out, kind: 'value', what: `${f.key}=${v}` };
    }
    const old = dv.getUint32(f.at, true);
    const v = (r() < 0.5 ? pick(r, EXTREME_32) : pick(r, [old + 1, old - 1, old * 2, Math.floor(old / 2), old * 1000, old + 7])) >>> 0;
    dv.setUint32(f.at, v, true);
    return { bytes: out, kind: 'value', what: `${f.key}=${v}` };
  }
  if (x < 0.88 && seed.input) {
    // a tensor's shape changed and its data resized to match: the file parses, the shape check answers
    const input = seed.input;
    const ti = int(r, input.tensors.length);
    const t = input.tensors[ti]!;
    const info = ggmlTypeInfo(t.type)!;
    const dims = [...t.dims];
    const d = int(r, dims.length + 1);
    const op = int(r, 4);
    if (d === dims.length) dims.push(pick(r, [1, 2, 3]));
    else if (op === 0) dims[d] = dims[d]! * 2;
    else if (op === 1) dims[d] = Math.max(d === 0 ? info.blockSize : 1, dims[d]! - (d === 0 ? info.blockSize : 1));
    else if (op === 2) dims.reverse();
    else dims[d] = dims[d]! + (d === 0 ? info.blockSize : 1);
    if (dims[0]! % info.blockSize !== 0) dims[0] = info.blockSize;
    const nBytes = (dims.reduce((a, c) => a * c, 1) / info.blockSize) * info.typeSize;
    const data = new Uint8Array(nBytes);
    data.set(t.data.subarray(0, Math.min(nBytes, t.data.length)));
    const tensors = input.tensors.slice();
    tensors[ti] = { ...t, dims, data };
    return { bytes: writeGguf({ ...input, tensors }), kind: 'shape', what: `${t.name} [${t.dims.join(',')}] -> [${dims.join(',')}]` };
  }
  if (x < 0.94) {
    const len = 1 + int(r, 64);
    const from = int(r, Math.max(1, seed.headerEnd - len));
    const to = int(r, Math.max(1, seed.headerEnd - len));
    const mode = int(r, 3);
    if (mode === 0) { // overwrite
      const out = b.slice();
      out.copyWithin(to, from, from + len);
      return { bytes: out, kind: 'splice', what: `copy ${len}@${from}->${to}` };
    }
    if (mode === 1) { // insert a duplicate chunk
      const out = new Uint8Array(b.length + len);
      out.set(b.subarray(0, to)); out.set(b.subarray(from, from + len), to); out.set(b.subarray(to), to + len);
      return { bytes: out, kind: 'splice', what: `insert ${len}@${from}->${to}` };
    }
    const out = new Uint8Array(b.length - len); // delete a chunk
    out.set(b.subarray(0, to)); out.set(b.subarray(to + len), to);
    return { bytes: out, kind: 'splice', what: `delete ${len}@${to}` };
  }
  const cut = r() < 0.7 ? int(r, seed.headerEnd + 64) : int(r, b.length);
  return { bytes: b.slice(0, cut), kind: 'truncate', what: `to ${cut} bytes` };
}

// ---- one case, as a user runs a file ----

/** The outcome's name: 'ok', or the typed error's family and code; 'UNTYPED ...' is a failure. */
export function classify(e: unknown): string {
  if (e instanceof GgufError) return `GgufError ${e.code}`;
  if (e instanceof TokenizerError) return `TokenizerError ${e.code}`;
  if (e instanceof ContextError) return `ContextError ${e.code}`;
  if (e instanceof GraphShapeError) return `GraphShapeError ${e.code}`;
  const c = (e as { code?: unknown; name?: unknown }) ?? {};
  if (e instanceof Error && typeof c.code === 'string' && /Error$/.test(e.name) && e.name !== 'Error' && e.name !== 'TypeError' && e.name !== 'RangeError') return `${e.name} ${c.code}`;
  return `UNTYPED ${e instanceof Error ? `${e.name}: ${e.message.slice(0, 160)}` : String(e)}`;
}

const PROMPT = 'Once upon a time';

/** Parse, load on `device`, tokenizer, one decode step, sample, detokenize; frees what it allocated. */
export async function runCase(bytes: Uint8Array, device: Device): Promise<string> {
  let model: Model | undefined;
  let ctx: Context | undefined;
  try {
    const file: GgufFile = parseGguf(bytes, 'fuzz.gguf');
    model = loadModel(file, { device });
    let prompt = [0];
    let piece = (_id: number): unknown => undefined;
    if (file.metadata.has('tokenizer.ggml.model')) {
      const tok = tokenizerFromGguf(file);
      const ids = tok.tokenize(PROMPT, { addSpecial: true });
      if (ids.length > 0) prompt = ids.slice(0, 6);
      piece = (id) => tok.tokenToPiece(id);
    }
    ctx = new Context(model, { nCtx: 16 });
    const logits = await ctx.decode(prompt);
    piece(argmax(logits));
    return 'ok';
  } catch (e) {
    return classify(e);
  } finally {
    ctx?.close();
    for (const b of model?.weightBuffers ?? []) b.free();
  }
}

// ---- a run ----

export interface FuzzStats {
  cases: number;
  counts: Map<string, number>;
  byKind: Map<MutationKind, number>;
  /** by wall-clock time, and by CPU time (user + system of the process: what the case costs on an idle machine) */
  slowest: { ms: number; seed: string; index: number; kind: string; what: string; outcome: string };
  slowestCpu: { ms: number; seed: string; index: number; kind: string; what: string; outcome: string };
  failures: { seed: string; index: number; kind: string; what: string; outcome: string }[];
  totalMs: number;
}

/**
 * `cases` mutations (numbered from `start`) spread over the seeds by weight; case i uses PRNG seed (seed, i),
 * so any case can be replayed alone (`only`) and a run can be split into shards. Calls `progress` every 1,000 cases.
 */
export async function fuzz(seeds: Seed[], device: Device, o: { cases: number; seed: number; start?: number; only?: number; progress?: (done: number, s: FuzzStats) => void }): Promise<FuzzStats> {
  const total = seeds.reduce((a, s) => a + s.weight, 0);
  const stats: FuzzStats = { cases: 0, counts: new Map(), byKind: new Map(), slowest: { ms: -1, seed: '', index: -1, kind: '', what: '', outcome: '' }, slowestCpu: { ms: -1, seed: '', index: -1, kind: '', what: '', outcome: '' }, failures: [], totalMs: 0 };
  const t0 = performance.now();
  const first = o.only ?? o.start ?? 0;
  for (let i = first; i < (o.only !== undefined ? o.only + 1 : first + o.cases); i++) {
    const r = rng((o.seed * 0x9e3779b1) ^ Math.imul(i + 1, 0x85ebca6b));
    let w = r() * total;
    let seed = seeds[seeds.length - 1]!;
    for (const s of seeds) { if (w < s.weight) { seed = s; break; } w -= s.weight; }
    const m = mutate(seed, r);
    const c0 = performance.now();
    const u0 = process.cpuUsage();
    const outcome = await runCase(m.bytes, device);
    const u = process.cpuUsage(u0);
    const ms = performance.now() - c0;
    const cpuMs = (u.user + u.system) / 1000;
    if (cpuMs > stats.slowestCpu.ms) stats.slowestCpu = { ms: cpuMs, seed: seed.name, index: i, kind: m.kind, what: m.what, outcome };
    stats.cases++;
    stats.counts.set(outcome, (stats.counts.get(outcome) ?? 0) + 1);
    stats.byKind.set(m.kind, (stats.byKind.get(m.kind) ?? 0) + 1);
    if (ms > stats.slowest.ms) stats.slowest = { ms, seed: seed.name, index: i, kind: m.kind, what: m.what, outcome };
    if (outcome.startsWith('UNTYPED')) stats.failures.push({ seed: seed.name, index: i, kind: m.kind, what: m.what, outcome });
    if (o.progress && stats.cases % 1000 === 0) o.progress(stats.cases, stats);
  }
  stats.totalMs = performance.now() - t0;
  return stats;
}

export function formatStats(s: FuzzStats): string {
  const lines = [`${s.cases} cases in ${(s.totalMs / 1000).toFixed(1)} s (${(s.totalMs / Math.max(1, s.cases)).toFixed(2)} ms per case)`];
  lines.push('outcomes:');
  for (const [k, v] of [...s.counts].sort((a, b) => b[1] - a[1])) lines.push(`  ${String(v).padStart(7)}  ${k}`);
  lines.push(`mutations: ${[...s.byKind].map(([k, v]) => `${k} ${v}`).join(', ')}`);
  lines.push(`slowest case (wall clock): ${s.slowest.ms.toFixed(1)} ms (#${s.slowest.index}, ${s.slowest.seed}, ${s.slowest.kind} ${s.slowest.what} -> ${s.slowest.outcome})`);
  lines.push(`slowest case (CPU time): ${s.slowestCpu.ms.toFixed(1)} ms (#${s.slowestCpu.index}, ${s.slowestCpu.seed}, ${s.slowestCpu.kind} ${s.slowestCpu.what} -> ${s.slowestCpu.outcome})`);
  lines.push(`untyped outcomes (failures): ${s.failures.length}`);
  for (const f of s.failures.slice(0, 20)) lines.push(`  #${f.index} ${f.seed} ${f.kind} ${f.what}: ${f.outcome}`);
  return lines.join('\n');
}
