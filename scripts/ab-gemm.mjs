#!/usr/bin/env node
// A/B of the cpu prompt-batch matmul (GEMM) kernels of two builds in one process (a shared machine's load hits
// both alike): repo roots --a (base) and --b (default: this checkout), each with a built dist/. Interleaved
// rounds of process CPU time per call (one thread), GFLOP/s, and a bit-for-bit comparison of the outputs.
// Weights: random bytes with f16 scales 2^-7, Q4_0 repacked to Q4_0r4 (and Q8_0 to Q8_0r4 in fast numerics),
// as the cpu device loads them; f32 activations quantized by matmul() as in a graph.
// Usage: node scripts/ab-gemm.mjs --a /work/main [--b .] [--type Q4_0] [--rows 2048] [--cols 2048] [--tok 512]
//        [--numerics fast|exact] [--rounds 3]
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
const arg = (n, d) => { const i = process.argv.indexOf('--' + n); return i >= 0 ? process.argv[i + 1] : d; };
if (!process.argv.includes('--a')) { console.error('--a REPO (the base build) is required'); process.exit(2); }
const TYPE = arg('type', 'Q4_0'), ROWS = +arg('rows', '2048'), COLS = +arg('cols', '2048'), TOK = +arg('tok', '512');
const NUMERICS = arg('numerics', 'fast'), ROUNDS = +arg('rounds', '3');
const SC = { Q4_0: [0], Q8_0: [0], Q4_K: [0, 2], Q6_K: [208] };
async function setup(root) {
  const d = pathToFileURL(resolve(root, 'dist')).href;
  const cpu = await import(d + '/src/backends/cpu/index.js');
  const gt = await import(d + '/src/gguf/ggml-types.js');
  (await import(d + '/src/backends/cpu/node-flags.js')).enableRelaxedSimd();
  const rt = await cpu.createCpuRuntime({ threads: 1, numerics: NUMERICS });
  const info = gt.ggmlTypeByName(TYPE);
  let wtype = info.id;
  const rb = cpu.weightRowBytes(wtype, COLS);
  const w = rt.alloc(ROWS * rb), bytes = rt.u8(w, ROWS * rb);
  let s = 12345;
  for (let i = 0; i < bytes.length; i++) { s = (s * 1664525 + 1013904223) >>> 0; bytes[i] = s >>> 24; }
  for (let o = 0; o < ROWS * rb; o += info.typeSize) for (const f of SC[TYPE] ?? []) { bytes[o + f] = 0x00; bytes[o + f + 1] = 0x20; }
  if (wtype === gt.GgmlType.Q4_0 || (wtype === gt.GgmlType.Q8_0 && NUMERICS === 'fast')) wtype = rt.repackRows4(w, ROWS, COLS, wtype);
  const x = rt.alloc(COLS * 4 * TOK), xf = rt.f32(x, COLS * TOK);
  for (let i = 0; i < xf.length; i++) xf[i] = Math.sin(i * 0.37);
  const y = rt.alloc(ROWS * 4 * TOK);
  return { rt, run: () => rt.matmul(wtype, w, ROWS, COLS, x, TOK, y), out: () => rt.f32(y, ROWS * TOK).slice() };
}
const a = await setup(arg('a', '.')), b = await setup(arg('b', '.'));
a.run(); b.run();
const ya = a.out(), yb = b.out();
let diff = 0;
for (let i = 0; i < ya.length; i++) if (!Object.is(ya[i], yb[i])) diff++;
console.log(`${TYPE} ${ROWS}x${COLS} x ${TOK} tokens, ${NUMERICS} (a: ${a.rt.simd}, b: ${b.rt.simd}): ${diff} of ${ya.length} outputs differ`);
const cpuTime = (fn, n) => { const c0 = process.cpuUsage(); for (let i = 0; i < n; i++) fn(); const c = process.cpuUsage(c0); return (c.user + c.system) / 1e6 / n; };
const flop = 2 * ROWS * COLS * TOK, n = Math.max(1, Math.round(2e9 / flop));
// a and b alternate which runs first; the summary is the median of the rounds' b/a (the load moves between rounds)
const q = [];
for (let r = 0; r < ROUNDS; r++) {
  let ta, tb;
  if (r & 1) { tb = cpuTime(b.run, n); ta = cpuTime(a.run, n); } else { ta = cpuTime(a.run, n); tb = cpuTime(b.run, n); }
  q.push(ta / tb);
  console.log(`  round ${r}: a ${(flop / ta / 1e9).toFixed(1)} GFLOP/s (${(ta * 1e3).toFixed(1)} ms)  b ${(flop / tb / 1e9).toFixed(1)} GFLOP/s (${(tb * 1e3).toFixed(1)} ms)  b/a ${(ta / tb).toFixed(2)}`);
}
q.sort((u, v) => u - v);
console.log(`  median b/a ${q[q.length >> 1].toFixed(3)} over ${ROUNDS} rounds`);
await a.rt.close(); await b.rt.close();
