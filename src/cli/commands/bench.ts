// `gguf-edge bench MODEL`: llama-bench style prompt-processing / generation throughput.
import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';
import type { Command } from '../main.js';
import { defaultDeviceName, deviceNames } from '../../backends/registry.js';
import { formatResults, type BenchFormat } from '../../bench/format.js';
import { ggufEdgeEngine, runBench } from '../../bench/runner.js';
import { SHAPES, SYNTHETIC_TYPES, parseSyntheticSpec } from '../../bench/shapes.js';
import { syntheticCacheDir, syntheticModel } from '../../bench/synthetic.js';
import { progress } from '../progress.js';
import { PHASE_HELP, flashAttn, kvType as kvTypeOf, numericsFrom, phaseOptions, phaseSetup } from '../options.js';
import { DEFAULT_NUMERICS } from '../../backends/numerics.js';

const realShapes = Object.keys(SHAPES).filter((s) => !s.startsWith('tiny-'));

const help = `Usage: gguf-edge bench MODEL [options]
       gguf-edge bench --synthetic SHAPE:TYPE [options]

Measures throughput like llama-bench: pp<N> evaluates one N-token batch into an empty context,
tg<N> runs N one-token decodes from an empty context. Each test has one warm-up run, then
-r timed runs; the result is the mean ± sample standard deviation of tokens/s over the runs.
Token ids are random. Results go to stdout; progress goes to stderr when it is a terminal.

Tests:
  -p, --n-prompt N[,N...]    prompt sizes for pp tests (default 512; 0 = none)
  -n, --n-gen N[,N...]       generation lengths for tg tests (default 128; 0 = none)
  -d, --n-depth N[,N...]     KV cache depths: each test also runs with N tokens already cached (filled
                             untimed before the first run at that depth, kept between its runs), named
                             like llama-bench's "tg128 @ d4096" (default 0)
  -r, --repetitions N        timed runs per test (default 5)
  --no-warmup                skip the warm-up run

Engine:
  -t, --threads N[,N...]     thread counts to test, one run set each (default ${availableParallelism()});
                             the device's \`threads\` option (the reference device ignores it)
  --device NAME              compute device (${deviceNames().join(', ')}; default ${defaultDeviceName()}: cpu when available)
  --numerics fast|exact      cpu matmul float order (default ${DEFAULT_NUMERICS}; exact = llama.cpp's bits, slower)
  -b, --batch N              largest batch evaluated at once (default 512, llama-bench's n_ubatch)
  --kv-type f16|f32|q8_0|q4_0
                             KV cache element type, keys and values (llama-bench's -ctk/-ctv; default f16);
                             q8_0 / q4_0 need flash attention (auto turns it on); json rows carry type_k/type_v
  --flash-attn on|off|auto   flash attention, llama-bench's -fa (default auto: on where the device prefers it,
                             which the cpu device does not: see gguf-edge run --help); json rows carry flash_attn

${PHASE_HELP}
  --npu-target ax8850|htp    sim-npu: the NPU whose published figures set simulated time (default ax8850);
                             rows of runs that used a simulated device carry sim_tps (json) / sim t/s (md)
  --npu-mem MiB              sim-npu: device memory capacity (default 7040, the AX-M1 card)

Model:
  --synthetic SHAPE:TYPE     benchmark a random-weight model with a real published shape instead of
                             MODEL, built once through the GGUF writer and cached on disk
                             (${syntheticCacheDir()}, or GGUF_EDGE_SYNTHETIC_DIR).
                             SHAPE: ${realShapes.join(', ')}
                                    (qwen3-30b-a3b-4l: Qwen3-30B-A3B's MoE layer, 4 of its 48 layers;
                                    tiny-llama, tiny-qwen3, tiny-qwen3moe for smoke tests)
                             TYPE:  ${SYNTHETIC_TYPES.join(', ')} (f16/q8_0/q4_0: every matrix in that
                                    type; q4_k_m, q5_k_m, q3_k_m, q6_k, iq4_xs: llama.cpp's
                                    per-tensor mix of that file type and its fallbacks)
  --seed N                   seed of the synthetic weights (default 1)

Output:
  -o, --output md|json|csv   md: llama-bench style table (default); json: one array of
                             {test, threads, tps_mean, tps_sd, model_bytes, model, model_type,
                              model_params, engine, device, n_prompt, n_gen, n_depth, reps, avg_ms, samples_tps, flash_attn,
                             sim_tps (only on runs that used a simulated device: simulated tokens/s)};
                             csv: one row per result with a header.
                             model_bytes is the file size; tps_* are tokens/s over the timed runs
  -h, --help                 show this help`;

function list(v: string | undefined, name: string, def: number[]): number[] {
  if (v === undefined) return def;
  const out = v.split(',').filter((s) => s.trim() !== '').map((s) => {
    const x = Number(s);
    if (!Number.isInteger(x) || x < 0) throw Object.assign(new Error(`--${name} takes non-negative integers separated by commas, got "${v}"`), { code: 'USAGE' });
    return x;
  });
  if (out.length === 0) throw Object.assign(new Error(`--${name} is empty`), { code: 'USAGE' });
  return out;
}

function int(v: string | undefined, name: string, def: number, min: number): number {
  if (v === undefined) return def;
  const x = Number(v);
  if (!Number.isInteger(x) || x < min) throw Object.assign(new Error(`--${name} needs an integer >= ${min}, got "${v}"`), { code: 'USAGE' });
  return x;
}

/** A one-line status on stderr, rewritten in place; silent unless stderr is a terminal. */
function statusLine(): { show(msg: string): void; clear(): void } {
  const tty = process.stderr.isTTY === true;
  let shown = false;
  return {
    show(msg) { if (tty) { process.stderr.write(`\r\x1b[K${msg}`); shown = true; } },
    clear() { if (tty && shown) process.stderr.write('\r\x1b[K'); shown = false; },
  };
}

export const command: Command = {
  summary: 'measure prompt processing and generation speed (llama-bench style)',
  help,
  async run(args) {
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: {
        'n-prompt': { type: 'string', short: 'p' },
        'n-gen': { type: 'string', short: 'n' },
        'n-depth': { type: 'string', short: 'd' },
        repetitions: { type: 'string', short: 'r' },
        'no-warmup': { type: 'boolean' },
        threads: { type: 'string', short: 't' },
        device: { type: 'string' },
        numerics: { type: 'string' },
        batch: { type: 'string', short: 'b' },
        'kv-type': { type: 'string' },
        'flash-attn': { type: 'string' },
        synthetic: { type: 'string' },
        seed: { type: 'string' },
        output: { type: 'string', short: 'o' },
        'npu-target': { type: 'string' },
        'npu-mem': { type: 'string' },
        ...phaseOptions,
      },
    });
    const format = (values.output ?? 'md') as BenchFormat;
    if (!['md', 'json', 'csv'].includes(format)) throw Object.assign(new Error(`--output must be md, json or csv, got "${values.output}"`), { code: 'USAGE' });
    const kvType = kvTypeOf(values);
    const pp = list(values['n-prompt'], 'n-prompt', [512]);
    const tg = list(values['n-gen'], 'n-gen', [128]);
    const depths = list(values['n-depth'], 'n-depth', [0]);
    if (depths.some((d) => d < 0)) throw Object.assign(new Error('--n-depth must be at least 0'), { code: 'USAGE' });
    const threads = list(values.threads, 'threads', [availableParallelism()]);
    if (threads.some((t) => t < 1)) throw Object.assign(new Error('--threads must be at least 1'), { code: 'USAGE' });
    const reps = int(values.repetitions, 'repetitions', 5, 1);
    const nBatch = int(values.batch, 'batch', 512, 1);
    const deviceName = values.device ?? defaultDeviceName();
    const pv = values as Record<string, string | undefined>;
    for (const n of [deviceName, pv['prefill-device'], pv['decode-device']]) {
      if (n !== undefined && !deviceNames().includes(n)) throw Object.assign(new Error(`unknown device "${n}" (available: ${deviceNames().join(', ')})`), { code: 'USAGE' });
    }
    // checks the phase options once, before any model is built
    const phased = ['prefill-device', 'decode-device', 'phase-policy', 'offload-min-batch', 'npu-target', 'npu-mem'].some((k) => pv[k] !== undefined);
    const devices = async (threads: number) => phaseSetup({ ...values, threads: String(threads) });
    const label0 = [pv['prefill-device'] && `prefill ${pv['prefill-device']}`, pv['decode-device'] && `decode ${pv['decode-device']}`].filter(Boolean).join(', ');

    let path = positionals[0];
    let label: string | undefined;
    if (values.synthetic !== undefined) {
      if (path) throw Object.assign(new Error('give either MODEL or --synthetic, not both'), { code: 'USAGE' });
      const { shape, type } = parseSyntheticSpec(values.synthetic);
      const bar = progress(`building synthetic ${shape.name}:${type}`);
      const seed = int(values.seed, 'seed', 1, 0);
      const m = syntheticModel(shape.name, type, { seed, onProgress: (d, t) => bar.update(d, t) });
      bar.done();
      if (m.built && process.stderr.isTTY) process.stderr.write(`built ${m.path}\n`);
      path = m.path;
      label = `${shape.name}:${type}`;
      if (shape.description) process.stderr.write(`${label}: ${shape.description}\n`);
    }
    if (!path) throw Object.assign(new Error('missing MODEL argument or --synthetic SHAPE:TYPE (see --help)'), { code: 'USAGE' });

    const status = statusLine();
    let results;
    try {
      const engineDevice = label0 ? `${deviceName} (${label0})` : deviceName;
      results = await runBench(path, [ggufEdgeEngine(path, engineDevice, { kvType, flashAttn: flashAttn(values), numerics: numericsFrom(values), devices: phased || deviceName !== defaultDeviceName() ? devices : undefined })], {
        pp, tg, depths, threads, reps, nBatch, noWarmup: !!values['no-warmup'], label, onProgress: (m) => status.show(m),
      });
    } finally {
      status.clear();
    }
    process.stdout.write(formatResults(results, format));
    return 0;
  },
};
