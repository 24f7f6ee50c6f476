#!/usr/bin/env node
// End-to-end decode A/B of two builds in one process (the load of a shared machine hits both alike): repo roots
// --a and --b (default: this checkout), each with a built dist/, the same model file on the cpu device (flash
// attention on, fast numerics), one-token decodes from an empty context as bench's tg test. Interleaved
// rounds; median ms per token by the wall clock and by process CPU time per thread (with --threads 1 that is
// the work alone; with 2 it includes the pool's spinning). Outputs are not compared here (parity tests and
// the op A/Bs do that).
// Usage: node scripts/ab-decode.mjs --a /work/main [--b .] --model FILE.gguf [--threads 2] [-n 16] [--rounds 5]
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
const arg = (n, d) => { const i = process.argv.indexOf(n); return i >= 0 ? process.argv[i + 1] : d; };
const T = +arg('--threads', '2'), N = +arg('-n', '16'), R = +arg('--rounds', '5'), MODEL = arg('--model', '/tmp/gguf-edge-synthetic/qwen3-30b-a3b-4l-q4_k_m-seed1-v1.gguf');
if (!process.argv.includes('--a')) { console.error('--a REPO (the base build) is required'); process.exit(2); }
const dirs = { base: pathToFileURL(resolve(arg('--a', '.'), 'dist')).href, new: pathToFileURL(resolve(arg('--b', '.'), 'dist')).href };
const V = {};
for (const [k, d] of Object.entries(dirs)) {
  (await import(d + '/src/backends/cpu/node-flags.js')).enableRelaxedSimd();
  const r = await import(d + '/src/bench/runner.js');
  const e = r.ggufEdgeEngine(MODEL, 'cpu', { flashAttn: 'on', numerics: 'fast' });
  await e.load(T, N + 8, 512);
  const tokens = r.randomTokens(N, 1000);
  await e.run({ kind: 'tg', n: N }, tokens);
  V[k] = { e, tokens, walls: [], cpus: [] };
}
for (let i = 0; i < R; i++) for (const k of i & 1 ? ['new', 'base'] : ['base', 'new']) {
  const v = V[k], c0 = process.cpuUsage();
  const ms = await v.e.run({ kind: 'tg', n: N }, v.tokens);
  const c = process.cpuUsage(c0);
  v.walls.push(ms / N); v.cpus.push((c.user + c.system) / 1e3 / N / T);
}
const med = (a) => a.slice().sort((p, q) => p - q)[a.length >> 1];
const f = (k) => `${k} wall ${med(V[k].walls).toFixed(2)} cpu ${med(V[k].cpus).toFixed(2)}`;
console.log(`decode ${MODEL.split('/').pop()} t=${T} n=${N} (ms per token): ${f('base')} | ${f('new')} | wall ${(med(V.base.walls) / med(V.new.walls)).toFixed(3)}x cpu ${(med(V.base.cpus) / med(V.new.cpus)).toFixed(3)}x`);
for (const k of Object.keys(V)) await V[k].e.close();
process.exit(0);
