// gguf-edge vs llama.cpp (node-llama-cpp's prebuilt CPU binary) on the same GGUF files, same thread
// counts, runs alternating (gguf-edge, llama.cpp, gguf-edge, ...), llama-bench semantics for both:
// pp<N> = one N-token batch into an empty context, tg<N> = N one-token decodes from an empty context,
// one warm-up run per test, mean ± sd of tokens/s over the timed runs. llama.cpp is timed as llama-bench
// times it (one llama_decode per batch, bench/llamacpp-timing.ts) with flash attention on, its faster CPU
// setting (--no-flash-attention for off). Prints a ratio table against the issue's targets. A benchmark,
// never a test: the machine is shared and figures are noisy.
//
// Usage: npm run bench:compare -- [--models SPEC,SPEC...] [-p 512] [-n 128] [-t 2] [-r 3]
//          [--device NAME] [--no-flash-attention] [-o md|json] [--out FILE]
// SPEC is a synthetic SHAPE:TYPE (built and cached like `gguf-edge bench --synthetic`) or a .gguf path.
// llama.cpp is loaded with getLlama({gpu: false, build: 'never', skipDownload: true}): offline, prebuilt.

import { cpus, availableParallelism } from 'node:os';
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { Llama, LlamaContext, LlamaModel } from 'node-llama-cpp';
import { importPeer } from './peers.js';
import { checkPositions, llamaBenchTimer, type LlamaBenchTimer } from './llamacpp-timing.js';
import { closeDevices, defaultDeviceName } from '../src/backends/registry.js';
import { formatBytes, formatTps, markdownTable } from '../src/bench/format.js';
import { numericsFrom } from '../src/cli/options.js';
import { DEFAULT_NUMERICS } from '../src/backends/numerics.js';
import { ggufEdgeEngine, runBench, type BenchEngine, type BenchResult, type BenchTest } from '../src/bench/runner.js';
import { isKvType, isQuantizedKv, KV_TYPES, type KvType } from '../src/graph/kv-type.js';
import { parseSyntheticSpec } from '../src/bench/shapes.js';
import { syntheticModel } from '../src/bench/synthetic.js';
import { enableRelaxedSimd } from '../src/backends/cpu/node-flags.js';
// relaxed SIMD on Node 20 (see src/backends/cpu/node-flags.ts), before any kernel compiles
enableRelaxedSimd();

const DEFAULT_MODELS = 'qwen3-0.6b:q4_k_m,llama-3.2-1b:q4_0,qwen3-0.6b:q8_0';

/** The issues' targets (gguf-edge / llama.cpp tokens/s): #14's for its new archs' shapes, #15's otherwise
 *  (pp >= 0.4x everywhere; tg >= 1.0x on Q8_0, 0.9x on Q4_K_M / Q4_0, 0.8x on Q5_K_M / Q3_K_M). */
export function target(modelType: string, test: string, model = ''): number | undefined {
  if (/^(qwen3\.5-0\.8b|qwen3-30b-a3b-4l):q4_k_m$/.test(model)) return test.startsWith('pp') ? 0.4 : 0.8;
  if (test.startsWith('pp')) return 0.4;
  if (/Q8_0$/.test(modelType)) return 1.0;
  if (/Q4_K_M$|Q4_0$/.test(modelType)) return 0.9;
  if (/Q5_K_M$|Q3_K_M$/.test(modelType)) return 0.8;
  return undefined;
}

function llamaCppEngine(path: string, getL: () => Promise<Llama>, flashAttention: boolean, kvType: KvType): BenchEngine {
  let model: LlamaModel | undefined;
  let ctx: LlamaContext | undefined;
  let timer: LlamaBenchTimer | undefined;
  let device = 'llama.cpp cpu';
  let filled = 0, batch = 512;
  const release = async () => {
    filled = 0;
    await ctx?.dispose(); ctx = undefined; timer = undefined;
    await model?.dispose(); model = undefined;
  };
  return {
    name: 'llama.cpp',
    get device() { return device; },
    async load(threads, nCtx, nBatch) {
      await release();
      const llama = await getL();
      device = `cpu (llama.cpp ${llama.llamaCppRelease.release}${flashAttention ? ', FA' : ''}${kvType !== 'f16' ? `, KV ${kvType}` : ''})`;
      model = await llama.loadModel({ modelPath: path });
      // the same cache type as gguf-edge's (llama-bench -ctk/-ctv; node-llama-cpp names the ggml types in capitals)
      const kv = kvType.toUpperCase();
      ctx = await model.createContext({ contextSize: nCtx, batchSize: nBatch, threads, flashAttention, sequences: 1, experimentalKvCacheKeyType: kv, experimentalKvCacheValueType: kv });
      batch = nBatch;
      timer = llamaBenchTimer(ctx, ctx.getSequence());
    },
    async run(test: BenchTest, tokens: Int32Array) {
      // as llama-bench: the KV cache cleared, then pp = one llama_decode of the whole batch (logits of its
      // last token), tg = one llama_decode per token (bench/llamacpp-timing.ts says why not controlledEvaluate)
      // with a depth (llama-bench -d): its tokens decoded first in batches of nBatch, untimed, and kept between runs
      const tm = timer!, d = test.depth ?? 0;
      if (d > 0 && filled === d && tm.maxPosition() >= d - 1) tm.truncate(d);
      else {
        tm.clear();
        filled = 0;
        for (let p = 0; p < d; p += batch) await tm.decode(Uint32Array.from(tokens.subarray(p, Math.min(d, p + batch))), p);
        filled = d;
      }
      const toks = Uint32Array.from(tokens.subarray(d, d + test.n));
      const t0 = performance.now();
      if (test.kind === 'pp') await tm.decode(toks, d);
      else for (let i = 0; i < test.n; i++) await tm.decode(toks.subarray(i, i + 1), d + i);
      const ms = performance.now() - t0;
      checkPositions(tm, 0, d + test.n - 1);
      return ms;
    },
    kvTypes: () => ({ k: kvType, v: kvType }),
    async close() { await release(); },
  };
}

function machine(): string {
  const c = cpus();
  return `${c[0]?.model ?? 'unknown CPU'}, ${availableParallelism()} cores (node ${process.version}, ${process.platform}-${process.arch})`;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      models: { type: 'string', short: 'm' },
      'n-prompt': { type: 'string', short: 'p' },
      'n-gen': { type: 'string', short: 'n' },
      'n-depth': { type: 'string', short: 'd' },
      threads: { type: 'string', short: 't' },
      repetitions: { type: 'string', short: 'r' },
      device: { type: 'string' },
      numerics: { type: 'string' },
      'flash-attention': { type: 'boolean' },
      'no-flash-attention': { type: 'boolean' },
      'kv-type': { type: 'string' },
      output: { type: 'string', short: 'o' },
      out: { type: 'string' },
      engines: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(`Usage: npm run bench:compare -- [options]
  -m, --models SPEC,...   synthetic SHAPE:TYPE or .gguf paths (default ${DEFAULT_MODELS})
  -p, --n-prompt N,...    pp sizes (default 512)
  -n, --n-gen N,...       tg lengths (default 128)
  -d, --n-depth N,...     KV cache depths each test also runs at (llama-bench -d; default 0)
  -t, --threads N,...     thread counts, the same for both engines (default 2)
  -r, --repetitions N     timed runs per test and engine, alternating (default 3)
  --device NAME           gguf-edge device (default ${defaultDeviceName()})
  --numerics fast|exact   cpu matmul float order (default ${DEFAULT_NUMERICS})
  --no-flash-attention    llama.cpp without flash attention (default: on, its faster CPU setting;
                          --flash-attention says so explicitly). Recorded per llama.cpp row as
                          flash_attention (json) and in the report's header
  --kv-type f16|q8_0|q4_0 KV cache type of both engines (default f16; llama.cpp's -ctk/-ctv through
                          node-llama-cpp's experimentalKvCacheKeyType/ValueType; quantized needs flash
                          attention). Rows carry type_k/type_v
  -o, --output md|json    ratio table (default) or the raw results as JSON
  --engines LIST          gguf-edge,llama.cpp (default both; one alone gives its absolute figures)
  --out FILE              also write the markdown report (command, machine, table) to FILE
`);
    return;
  }
  const nums = (v: string | undefined, def: string) => (v ?? def).split(',').filter(Boolean).map(Number);
  const pp = nums(values['n-prompt'], '512');
  const tg = nums(values['n-gen'], '128');
  const depths = nums(values['n-depth'], '0');
  const threads = nums(values.threads, '2');
  const reps = Number(values.repetitions ?? 3);
  const deviceName = values.device ?? defaultDeviceName();
  if (deviceName === 'reference' && (values.engines ?? 'gguf-edge').includes('gguf-edge')) process.stderr.write('bench:compare: note: gguf-edge runs on the `reference` device (the slow plain-TS oracle; `cpu` is not registered yet): use small -p/-n\n');
  let llama: Llama | undefined;
  const getL = async () => {
    if (llama) return llama;
    const { getLlama, LlamaLogLevel } = await importPeer<typeof import('node-llama-cpp')>('node-llama-cpp');
    return (llama = await getLlama({ gpu: false, build: 'never', skipDownload: true, maxThreads: 0, logLevel: LlamaLogLevel.error }));
  };
  if (values['flash-attention'] && values['no-flash-attention']) throw new Error('--flash-attention and --no-flash-attention contradict each other');
  const fa = !values['no-flash-attention'];
  const kvType = (values['kv-type'] ?? 'f16') as KvType;
  if (!isKvType(kvType)) throw new Error(`--kv-type must be one of ${KV_TYPES.join(', ')}, got "${values['kv-type']}"`);
  if (isQuantizedKv(kvType) && !fa) throw new Error(`--kv-type ${kvType} needs flash attention (llama.cpp refuses a quantized V cache without it)`);
  const which = (values.engines ?? 'gguf-edge,llama.cpp').split(',');
  if (which.length === 0 || which.some((w) => w !== 'gguf-edge' && w !== 'llama.cpp')) throw new Error(`--engines takes gguf-edge and/or llama.cpp, got "${values.engines}"`);
  const all: (BenchResult & { flash_attention?: boolean; timing?: 'llama-bench' })[] = [];
  for (const spec of (values.models ?? DEFAULT_MODELS).split(',').filter(Boolean)) {
    let path = spec, label = spec;
    if (!spec.endsWith('.gguf')) {
      const { shape, type } = parseSyntheticSpec(spec);
      const t0 = performance.now();
      const m = syntheticModel(shape.name, type);
      if (m.built) process.stderr.write(`built ${m.path} (${formatBytes(m.bytes)}) in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
      path = m.path;
      label = `${shape.name}:${type}`;
      if (shape.description) process.stderr.write(`${label}: ${shape.description}\n`);
    }
    process.stderr.write(`${label}: ${threads.join(',')} threads, -p ${pp.join(',')} -n ${tg.join(',')} -r ${reps}\n`);
    const engines: BenchEngine[] = [];
    if (which.includes('gguf-edge')) engines.push(ggufEdgeEngine(path, deviceName, { numerics: numericsFrom(values), kvType }));
    if (which.includes('llama.cpp')) engines.push(llamaCppEngine(path, getL, fa, kvType));
    const res = await runBench(path, engines, {
      pp, tg, depths, threads, reps, label, onProgress: (m) => { if (process.stderr.isTTY) process.stderr.write(`\r\x1b[K${m}`); },
    });
    if (process.stderr.isTTY) process.stderr.write('\r\x1b[K');
    // the peer's setting on its rows (an extension of runBench's result fields)
    all.push(...res.map((r) => (r.engine === 'llama.cpp' ? { ...r, flash_attention: fa, timing: 'llama-bench' as const } : r)));
  }
  await llama?.dispose();
  if (values.output === 'json') { process.stdout.write(JSON.stringify(all, null, 2) + '\n'); return; }

  const rows: string[][] = [];
  const keys = new Map<string, BenchResult>();
  for (const r of all) if (!keys.has(`${r.model}|${r.threads}|${r.test}`)) keys.set(`${r.model}|${r.threads}|${r.test}`, r);
  for (const r of keys.values()) {
    const ours = all.find((x) => x.engine === 'gguf-edge' && x.model === r.model && x.threads === r.threads && x.test === r.test);
    const peer = all.find((x) => x.engine === 'llama.cpp' && x.model === r.model && x.threads === r.threads && x.test === r.test);
    const ratio = ours && peer ? ours.tps_mean / peer.tps_mean : undefined;
    const t = target(r.model_type, r.test, r.model);
    rows.push([r.model, formatBytes(r.model_bytes), String(r.threads), r.test, ours ? formatTps(ours.tps_mean, ours.tps_sd) : '-', peer ? formatTps(peer.tps_mean, peer.tps_sd) : '-',
      ratio === undefined ? '-' : ratio.toFixed(3), t === undefined ? '-' : `>= ${t}`, t === undefined || ratio === undefined ? '' : ratio >= t ? 'yes' : 'no']);
  }
  const table = markdownTable(['model', 'size', 'threads', 'test', `gguf-edge (${deviceName}) t/s`, 'llama.cpp t/s', 'ratio', 'target', 'met'], rows,
    [false, true, true, true, true, true, true, false, false]);
  const cmd = `npm run bench:compare -- ${process.argv.slice(2).join(' ')}`.trim();
  const peerNote = which.includes('llama.cpp') ? `llama.cpp: flash attention ${fa ? 'on' : 'off'}, KV ${kvType}, timed as llama-bench (one llama_decode per batch)\n\n` : '';
  const report = `Command: \`${cmd}\`\n\nMachine: ${machine()}\n\nDate: ${new Date().toISOString()}\n\n${peerNote}${table}`;
  if (peerNote) process.stderr.write(peerNote);
  process.stdout.write(table);
  if (values.out) writeFileSync(values.out, report);
}

main().then(() => closeDevices()).catch((e) => {
  process.stderr.write(`bench:compare: ${(e as Error).message}\n`);
  if (process.env.GGUF_EDGE_DEBUG) process.stderr.write(String((e as Error).stack) + '\n');
  process.exit(1);
});
