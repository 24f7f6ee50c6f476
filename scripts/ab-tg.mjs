#!/usr/bin/env node
// A/B of whole one-token decode steps (tg; attention as the device picks it, logits compared; scripts/ab-decode.mjs: flash attention on) of two builds in one process, interleaved run by run (the load of a
// shared machine hits both alike): repo roots --a and --b (default: this checkout), each with a built dist/.
// Each run is llama-bench's tg: --n one-token decodes from an empty context (cpu device, default numerics).
// Prints per build the median wall tokens/s and the process CPU ms per token (both pools' threads; the
// idle build's workers sleep in Atomics.wait), and checks that both builds produced the same logits.
// Usage: node scripts/ab-tg.mjs --a /work/main [--b .] --model FILE.gguf [--threads 2] [--n 32] [--rounds 4] [--depth 0]
// (--depth D: the context first holds D prompt tokens, evaluated once; each run decodes after them, llama-bench's -d)
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
const arg = (n, d) => { const i = process.argv.indexOf('--' + n); return i >= 0 ? process.argv[i + 1] : d; };
if (!process.argv.includes('--a') || !process.argv.includes('--model')) { console.error('--a REPO and --model FILE are required'); process.exit(2); }
const T = +arg('threads', '2'), N = +arg('n', '32'), R = +arg('rounds', '4'), MODEL = arg('model'), D = +arg('depth', '0');
const dirs = { base: pathToFileURL(resolve(arg('a', '.'), 'dist')).href, new: pathToFileURL(resolve(arg('b', '.'), 'dist')).href };
const E = {};
for (const [k, d] of Object.entries(dirs)) {
  (await import(d + '/src/backends/cpu/node-flags.js')).enableRelaxedSimd();
  const reg = await import(d + '/src/backends/registry.js');
  const { openGguf } = await import(d + '/src/gguf/open.js');
  const { loadModel } = await import(d + '/src/runtime/model.js');
  const { Context } = await import(d + '/src/runtime/context.js');
  const dev = await reg.getDevice('cpu', { threads: T });
  const file = openGguf(MODEL);
  const model = loadModel(file, { device: dev });
  const ctx = await Context.create(model, { nCtx: D + N + 1, nBatch: D ? 512 : 1, kvType: 'f16', flashAttn: 'auto', host: dev });
  for (let p = 0; p < D; p += 512) await ctx.decode(Int32Array.from({ length: Math.min(512, D - p) }, (_, i) => (p + i) * 31 % 997 + 3));
  E[k] = { ctx, walls: [], cpus: [], logits: null };
}
const tokens = Int32Array.from({ length: N }, (_, i) => (i * 7919 + 13) % 1000);
async function run(e) {
  e.ctx.truncate(D);
  const c0 = process.cpuUsage(), t0 = performance.now();
  let out;
  for (let i = 0; i < N; i++) out = await e.ctx.decode(tokens.subarray(i, i + 1));
  const ms = performance.now() - t0, c = process.cpuUsage(c0);
  e.walls.push(N * 1000 / ms); e.cpus.push((c.user + c.system) / 1000 / N);
  return out;
}
for (const k of Object.keys(E)) { await run(E[k]); E[k].walls.length = 0; E[k].cpus.length = 0; } // warm-up
for (let r = 0; r < R; r++) for (const k of (r & 1 ? ['new', 'base'] : ['base', 'new'])) {
  const out = await run(E[k]);
  if (r === 0) E[k].logits = Float32Array.from(out?.logits ?? out ?? []);
}
const med = a => a.slice().sort((p, q) => p - q)[a.length >> 1];
const la = E.base.logits, lb = E.new.logits;
let same = la.length === lb.length && la.length > 0; for (let i = 0; same && i < la.length; i++) if (!Object.is(la[i], lb[i])) same = false;
const f = k => `${k} ${med(E[k].walls).toFixed(2)} t/s (best ${Math.max(...E[k].walls).toFixed(2)}) cpu ${med(E[k].cpus).toFixed(1)} ms/tok`;
console.log(`${MODEL.split('/').pop()} t=${T} tg${N}${D ? ' @ d' + D : ''} x${R}: ${f('base')} | ${f('new')} | wall ratio ${(med(E.new.walls) / med(E.base.walls)).toFixed(3)} | logits ${same ? 'same' : 'DIFFER (' + la.length + ')'}`);
for (const k of Object.keys(E)) E[k].ctx.close();
process.exit(0);
