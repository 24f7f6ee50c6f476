// llama-bench style measurements. pp<N>: one N-token batch into an empty context; tg<N>: N one-token
// decodes from an empty context. Each test gets one warm-up run (the full batch for pp, one token
// for tg) and then `reps` timed runs; the result is the mean and sample standard deviation of the
// per-run tokens/s, as llama-bench reports them. Token ids are random (seeded).
//
// An engine is anything that can load a model for a thread count and time one test run: gguf-edge
// itself (engine below) or a peer such as llama.cpp (bench/compare.ts), so runs can alternate.

import { basename } from 'node:path';
import type { Device } from '../backends/backend.js';
import { getDevice } from '../backends/registry.js';
import { Profiler } from '../sched/profile.js';
import { pickPhaseDevices } from '../sched/policy.js';
import { openGguf } from '../gguf/open.js';
import { metaArrayLength, metaNumber, metaString, type GgufFile } from '../gguf/reader.js';
import { Context, type FlashAttnMode } from '../runtime/context.js';
import type { KvType } from '../graph/kv-type.js';
import { loadModel, type Model } from '../runtime/model.js';

export interface BenchTest {
  kind: 'pp' | 'tg';
  n: number;
  /** tokens already in the KV cache when the test starts (llama-bench's -d; filled untimed, default 0) */
  depth?: number;
}

/** llama-bench's test names: pp512, tg128, and with a depth pp512 @ d4096 */
export function testName(t: BenchTest): string { return `${t.kind}${t.n}${t.depth ? ` @ d${t.depth}` : ''}`; }

export interface BenchResult {
  test: string;
  threads: number;
  tps_mean: number;
  tps_sd: number;
  model_bytes: number;
  /** file name, or SHAPE:TYPE for a synthetic model */
  model: string;
  /** architecture and weight type, e.g. "qwen3 Q4_K_M" */
  model_type: string;
  model_params: number;
  engine: string;
  device: string;
  n_prompt: number;
  n_gen: number;
  /** KV cache depth the test ran at (llama-bench's n_depth) */
  n_depth: number;
  reps: number;
  /** mean milliseconds per run */
  avg_ms: number;
  samples_tps: number[];
  /** simulated tokens/s (mean over the runs): only on rows whose run used a simulated device */
  sim_tps?: number;
  /** the engine ran attention with flash attention (only on rows of engines that report it) */
  flash_attn?: boolean;
  /** KV cache element types, keys and values, as llama-bench names them (f16, q8_0, ...; rows of engines that report them) */
  type_k?: string;
  type_v?: string;
}

/** One engine under test. */
export interface BenchEngine {
  /** e.g. "gguf-edge" or "llama.cpp" */
  readonly name: string;
  /** device or backend name for the report */
  readonly device: string;
  /** loads the model for `threads` threads with room for `nCtx` tokens and batches of `nBatch` */
  load(threads: number, nCtx: number, nBatch: number): Promise<void>;
  /**
   * runs one test and returns its wall time in ms: from an empty context, or with tokens[0, depth) in the cache
   * (filled untimed, and kept between runs at the same depth where the engine can truncate), the test's own
   * tokens being tokens[depth, depth + n)
   */
  run(test: BenchTest, tokens: Int32Array): Promise<number>;
  /** the last run's simulated ms, when it used a simulated device */
  simulatedMs?(): number | undefined;
  /** after load: did the engine turn flash attention on (undefined: it does not say) */
  flashAttn?(): boolean | undefined;
  /** the KV cache's key and value types after load (llama-bench's type_k / type_v) */
  kvTypes?(): { k: string; v: string } | undefined;
  close(): Promise<void>;
}

const FTYPE: Record<number, string> = {
  0: 'F32', 1: 'F16', 2: 'Q4_0', 3: 'Q4_1', 7: 'Q8_0', 8: 'Q5_0', 9: 'Q5_1', 10: 'Q2_K', 11: 'Q3_K_S', 12: 'Q3_K_M',
  13: 'Q3_K_L', 14: 'Q4_K_S', 15: 'Q4_K_M', 16: 'Q5_K_S', 17: 'Q5_K_M', 18: 'Q6_K', 30: 'IQ4_XS', 32: 'BF16',
};

export interface ModelInfo { bytes: number; params: number; type: string; nVocab: number; nCtxTrain: number }

export function modelInfo(file: GgufFile): ModelInfo {
  const arch = metaString(file, 'general.architecture') ?? '?';
  const ft = metaNumber(file, 'general.file_type');
  const params = file.tensors.reduce((a, t) => a + t.nElements, 0);
  const nTokens = metaArrayLength(file, 'tokenizer.ggml.tokens');
  const nVocab = metaNumber(file, `${arch}.vocab_size`) ?? (nTokens ?? file.tensorsByName.get('token_embd.weight')?.dims[1] ?? 0);
  return { bytes: file.size, params, type: `${arch} ${ft !== undefined ? FTYPE[ft] ?? `ftype ${ft}` : '?'}`, nVocab, nCtxTrain: metaNumber(file, `${arch}.context_length`) ?? 0 };
}

/** Devices of one bench run (see cli/options.ts phaseSetup): resolved per thread count. */
export type BenchDevices = (threads: number) => Promise<{ host: Device; devices: Device[]; prefillDevice?: Device; decodeDevice?: Device; offloadMinBatch: number; policy?: 'manual' | 'auto' }>;

/** gguf-edge on a registry device (or, with `devices`, on the phase setup it resolves). */
export function ggufEdgeEngine(path: string, deviceName: string, opts: { kvType?: KvType; numerics?: 'exact' | 'fast'; devices?: BenchDevices; flashAttn?: FlashAttnMode } = {}): BenchEngine {
  let file: GgufFile | undefined;
  let model: Model | undefined;
  let ctx: Context | undefined;
  let profiler: Profiler | undefined;
  let lastSim: number | undefined;
  let filled = 0;
  const release = () => {
    filled = 0;
    ctx?.close(); ctx = undefined;
    for (const b of model?.weightBuffers ?? []) b.free();
    model = undefined;
    file?.source.close?.(); file = undefined;
  };
  return {
    name: 'gguf-edge',
    device: deviceName,
    async load(threads, nCtx, nBatch) {
      release();
      const setup: Partial<Awaited<ReturnType<BenchDevices>>> & { host: Device } = opts.devices ? await opts.devices(threads) : { host: await getDevice(deviceName, { threads, numerics: opts.numerics }) };
      file = openGguf(path);
      model = loadModel(file, { device: setup.host });
      if (setup.policy === 'auto' && setup.devices && !setup.prefillDevice && !setup.decodeDevice) {
        const p = await pickPhaseDevices(model, setup.devices, setup.host, nBatch);
        setup.prefillDevice = p.prefill.device; setup.decodeDevice = p.decode.device;
        process.stderr.write(`phase policy auto: prefill on ${p.prefill.device.name}, decode on ${p.decode.device.name}\n`);
      }
      // a simulated device's time comes from per-split timings (not per op: that would slow the wall clock)
      const simulated = (setup.devices ?? []).some((d) => d.kind === 'npu' || d.kind === 'sim');
      profiler = simulated ? new Profiler(false, false) : undefined;
      ctx = await Context.create(model, { nCtx, nBatch, kvType: opts.kvType ?? 'f16', flashAttn: opts.flashAttn ?? 'auto', ...setup, profiler });
      if (!ctx.sched.simulated) profiler = undefined;
    },
    async run(test, tokens) {
      const c = ctx!, d = test.depth ?? 0;
      // the depth's tokens stay cached between runs at the same depth (a recurrent state cannot be cut back)
      if (d > 0 && filled === d && !c.recurrent && c.nPast >= d) c.truncate(d);
      else {
        c.clear();
        filled = 0;
        if (d > 0) { await c.decode(tokens.subarray(0, d)); filled = d; }
      }
      const s0 = profiler?.simulatedMs ?? 0;
      const t0 = performance.now();
      if (test.kind === 'pp') await c.decode(tokens.subarray(d, d + test.n));
      else for (let i = d; i < d + test.n; i++) await c.decode(tokens.subarray(i, i + 1));
      const ms = performance.now() - t0;
      lastSim = profiler ? profiler.simulatedMs - s0 : undefined;
      return ms;
    },
    simulatedMs: () => lastSim,
    flashAttn: () => ctx?.flashAttn,
    kvTypes: () => (ctx ? { k: ctx.kvType, v: ctx.kvType } : undefined),
    async close() { release(); },
  };
}

/** Deterministic random token ids in [0, nVocab). */
export function randomTokens(n: number, nVocab: number, seed = 1234): Int32Array {
  const out = new Int32Array(n);
  let x = (seed >>> 0) || 1;
  for (let i = 0; i < n; i++) { x ^= x << 13; x ^= x >>> 17; x ^= x << 5; out[i] = (x >>> 0) % nVocab; }
  return out;
}

export function meanSd(xs: number[]): { mean: number; sd: number } {
  const n = xs.length;
  if (n === 0) return { mean: 0, sd: 0 };
  const mean = xs.reduce((a, b) => a + b, 0) / n;
  const sd = n > 1 ? Math.sqrt(xs.reduce((a, b) => a + (b - mean) ** 2, 0) / (n - 1)) : 0;
  return { mean, sd };
}

export interface RunBenchOptions {
  /** prompt sizes (pp tests); 0 entries are skipped */
  pp: number[];
  /** generation lengths (tg tests) */
  tg: number[];
  /** KV cache depths every test runs at (llama-bench's -d; default [0]) */
  depths?: number[];
  threads: number[];
  reps: number;
  /** largest batch evaluated at once (default 512, llama-bench's n_ubatch) */
  nBatch?: number;
  /** skip the warm-up run */
  noWarmup?: boolean;
  /** label for the model column (default: the file name) */
  label?: string;
  onProgress?: (msg: string) => void;
}

export function benchTests(o: Pick<RunBenchOptions, 'pp' | 'tg' | 'depths'>): BenchTest[] {
  const base = [...o.pp.filter((n) => n > 0).map((n) => ({ kind: 'pp' as const, n })), ...o.tg.filter((n) => n > 0).map((n) => ({ kind: 'tg' as const, n }))];
  // llama-bench's order: each test at every depth
  return base.flatMap((t) => (o.depths?.length ? o.depths : [0]).map((depth) => (depth > 0 ? { ...t, depth } : t)));
}

/**
 * Measures every test at every thread count on each engine. With several engines, each repetition
 * runs on every engine in turn (a, b, a, b, ...) so slow drifts of a shared machine hit all alike.
 * Returns one result per (engine, threads, test), in that order.
 */
export async function runBench(path: string, engines: BenchEngine[], o: RunBenchOptions): Promise<BenchResult[]> {
  const file = openGguf(path);
  const info = modelInfo(file);
  file.source.close?.();
  const tests = benchTests(o);
  if (tests.length === 0) throw Object.assign(new Error('nothing to measure: give -p and/or -n sizes above 0'), { code: 'USAGE' });
  const nCtx = Math.max(...tests.map((t) => (t.depth ?? 0) + t.n));
  const nBatch = Math.max(1, Math.min(o.nBatch ?? 512, nCtx));
  const tokens = randomTokens(nCtx, info.nVocab);
  const results: BenchResult[] = [];
  const label = o.label ?? basename(path);
  for (const threads of o.threads) {
    for (const e of engines) {
      o.onProgress?.(`${e.name}: loading ${label} (${threads} thread${threads === 1 ? '' : 's'})`);
      await e.load(threads, nCtx, nBatch);
    }
    for (const test of tests) {
      const name = testName(test);
      if (!o.noWarmup) {
        for (const e of engines) {
          o.onProgress?.(`${e.name}: ${name} t=${threads} warm-up`);
          await e.run(test.kind === 'tg' ? { ...test, n: 1 } : test, tokens);
        }
      }
      const samples = engines.map(() => [] as number[]);
      const sims = engines.map(() => [] as number[]);
      for (let r = 0; r < o.reps; r++) {
        for (let k = 0; k < engines.length; k++) {
          const e = engines[k]!;
          o.onProgress?.(`${e.name}: ${name} t=${threads} run ${r + 1}/${o.reps}`);
          samples[k]!.push(await e.run(test, tokens));
          const sim = e.simulatedMs?.();
          if (sim !== undefined) sims[k]!.push(sim);
        }
      }
      engines.forEach((e, k) => {
        const ms = samples[k]!;
        const tps = ms.map((m) => (test.n * 1000) / m);
        const s = meanSd(tps);
        results.push({
          test: name, threads, tps_mean: s.mean, tps_sd: s.sd, model_bytes: info.bytes,
          model: label, model_type: info.type, model_params: info.params, engine: e.name, device: e.device,
          n_prompt: test.kind === 'pp' ? test.n : 0, n_gen: test.kind === 'tg' ? test.n : 0, n_depth: test.depth ?? 0, reps: o.reps,
          avg_ms: ms.reduce((a, b) => a + b, 0) / Math.max(1, ms.length), samples_tps: tps,
          ...(sims[k]!.length ? { sim_tps: meanSd(sims[k]!.map((m) => (test.n * 1000) / m)).mean } : {}),
          ...(e.flashAttn?.() !== undefined ? { flash_attn: e.flashAttn!()! } : {}),
          ...(e.kvTypes?.() !== undefined ? { type_k: e.kvTypes!()!.k, type_v: e.kvTypes!()!.v } : {}),
        });
      });
    }
  }
  for (const e of engines) await e.close();
  return results;
}
