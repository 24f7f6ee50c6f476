// Aggregate decode throughput of continuous batching: N sequences of one Context (nSeq = N) decoding at once,
// one decodeSeqs call (one graph evaluation, one pass over the weights) per step of N tokens. Prints tokens/s
// for each N (all streams together, and per stream) and the scaling over N = 1. A measurement, not a unit test.
//
// Usage: npm run bench:batch -- [MODEL | --synthetic SHAPE:TYPE] [--parallel 1,2,4] [-n 64] [--prompt 16]
//          [-t THREADS] [--numerics fast|exact] [--json]
// Default: --synthetic qwen3-0.6b:q4_k_m, 2 threads, N = 1, 2, 4, 64 tokens per stream after a 16-token prompt.

import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { createCpuDevice } from '../src/backends/cpu/device.js';
import { randomTokens } from '../src/bench/runner.js';
import { parseSyntheticSpec } from '../src/bench/shapes.js';
import { syntheticModel } from '../src/bench/synthetic.js';
import { openGguf } from '../src/gguf/open.js';
import { Context, type SeqTokens } from '../src/runtime/context.js';
import { loadModel } from '../src/runtime/model.js';
import { enableRelaxedSimd } from '../src/backends/cpu/node-flags.js';
// relaxed SIMD on Node 20 (see src/backends/cpu/node-flags.ts), before any kernel compiles
enableRelaxedSimd();

function argmaxAt(l: Float32Array, off: number, n: number): number {
  let best = off;
  for (let i = off + 1; i < off + n; i++) if (l[i]! > l[best]!) best = i;
  return best - off;
}

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      synthetic: { type: 'string' },
      parallel: { type: 'string' },
      'n-gen': { type: 'string', short: 'n' },
      prompt: { type: 'string' },
      threads: { type: 'string', short: 't' },
      numerics: { type: 'string' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(readFileSync(new URL(import.meta.url), 'utf8').split('\n').filter((l) => l.startsWith('//')).map((l) => l.slice(3)).join('\n') + '\n');
    return 0;
  }
  const ns = (values.parallel ?? '1,2,4').split(',').map(Number);
  if (ns.some((n) => !Number.isInteger(n) || n < 1)) throw new Error(`--parallel: positive integers, got ${values.parallel}`);
  const nGen = Number(values['n-gen'] ?? 64), nPrompt = Number(values.prompt ?? 16), threads = Number(values.threads ?? 2);
  const numerics = (values.numerics ?? 'fast') as 'fast' | 'exact';
  let path = positionals[0], label = path;
  if (!path) {
    const spec = values.synthetic ?? 'qwen3-0.6b:q4_k_m';
    const { shape, type } = parseSyntheticSpec(spec);
    path = syntheticModel(shape.name, type).path;
    label = spec;
  }
  const device = await createCpuDevice({ threads, numerics });
  const file = openGguf(path!);
  const model = loadModel(file, { device });
  const nv = model.hp.nVocab;
  const rows: { n: number; seconds: number; tokens: number; tokPerSec: number; perStream: number }[] = [];
  for (const n of ns) {
    const warm = 4;
    const ctx = new Context(model, { nCtx: n * (nPrompt + nGen + warm + 1), nSeq: n });
    const prompts = Array.from({ length: n }, (_, s) => Array.from(randomTokens(nPrompt, nv, 7 + s)));
    let out = await ctx.decodeSeqs(prompts.map((tokens, seq) => ({ seq, tokens, logits: 'last' })));
    const toks = prompts.map(() => [0]);
    const batch: SeqTokens[] = toks.map((tokens, seq) => ({ seq, tokens, logits: 'last' }));
    const step = async () => {
      for (let s = 0; s < n; s++) toks[s]![0] = argmaxAt(out, s * nv, nv);
      out = await ctx.decodeSeqs(batch);
    };
    for (let i = 0; i < warm; i++) await step(); // plans made, JIT warm
    const t0 = performance.now();
    for (let i = 0; i < nGen; i++) await step();
    const seconds = (performance.now() - t0) / 1000;
    const tokens = n * nGen;
    rows.push({ n, seconds, tokens, tokPerSec: tokens / seconds, perStream: nGen / seconds });
    ctx.close();
  }
  const base = rows.find((r) => r.n === 1)?.tokPerSec;
  if (values.json) {
    process.stdout.write(JSON.stringify({ model: label, device: device.description, threads, numerics, n_prompt: nPrompt, n_gen: nGen, runs: rows.map((r) => ({ ...r, scaling: base ? r.tokPerSec / base : null })) }, null, 2) + '\n');
  } else {
    process.stdout.write(`${label}, ${device.description}; ${nGen} decode steps per stream after a ${nPrompt}-token prompt\n`);
    process.stdout.write('streams  aggregate tok/s  per stream tok/s  scaling\n');
    for (const r of rows) process.stdout.write(`${String(r.n).padStart(7)}  ${r.tokPerSec.toFixed(2).padStart(15)}  ${r.perStream.toFixed(2).padStart(16)}  ${base ? (r.tokPerSec / base).toFixed(2) + 'x' : '-'}\n`);
  }
  file.source.close?.();
  await device.close();
  return 0;
}

main().then((c) => { process.exitCode = c; }, (e) => { process.stderr.write(`${(e as Error).stack ?? e}\n`); process.exitCode = 1; });
