#!/usr/bin/env node
// A/B of the cpu prompt-batch attention (attn_ggml, the default non-flash order) of two builds in one process:
// repo roots --a (base) and --b (default: this checkout), each with a built dist/. Interleaved rounds of process
// CPU time per call (one thread by default), and a bit-for-bit comparison of the outputs.
// Shapes default to qwen3-0.6b (16 heads over 8 kv heads of 128), a causal batch of --tok tokens at positions 0..tok-1.
// Usage: node scripts/ab-attn.mjs --a /work/main [--b .] [--tok 512] [--heads 16] [--kv 8] [--hd 128] [--rounds 3]
//        [--threads 1] [--kscale 2] (K values in [-kscale, kscale]: 20 puts scores > 87 apart) [--flash] (attn_flash instead)
//        [--wall] (wall time per call instead of process CPU time) [--decode] (one query token at position tok - 1 over the tok cached rows: a decode step at depth tok - 1)
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
const arg = (n, d) => { const i = process.argv.indexOf('--' + n); return i >= 0 ? process.argv[i + 1] : d; };
if (!process.argv.includes('--a')) { console.error('--a REPO (the base build) is required'); process.exit(2); }
const TOK = +arg('tok', '512'), NH = +arg('heads', '16'), NKV = +arg('kv', '8'), HD = +arg('hd', '128');
const KS = +arg('kscale', '2'), ROUNDS = +arg('rounds', '3'), THREADS = +arg('threads', '1'), FLASH = process.argv.includes('--flash');
const NQ = process.argv.includes('--decode') ? 1 : TOK;
function f2h(x) {
  const f = new Float32Array(1), u = new Uint32Array(f.buffer); f[0] = x;
  const b = u[0], s = (b >>> 16) & 0x8000, e = ((b >>> 23) & 0xff) - 127 + 15, m = b & 0x7fffff;
  if (e <= 0) return s; if (e >= 31) return s | 0x7c00;
  return s | (e << 10) | (m >>> 13);
}
async function setup(root) {
  const d = pathToFileURL(resolve(root, 'dist')).href;
  const cpu = await import(d + '/src/backends/cpu/index.js');
  (await import(d + '/src/backends/cpu/node-flags.js')).enableRelaxedSimd();
  const rt = await cpu.createCpuRuntime({ threads: THREADS });
  const rowBytes = NKV * HD * 2;
  const k = rt.alloc(TOK * rowBytes), v = rt.alloc(TOK * rowBytes);
  const kh = rt.u8(k, TOK * rowBytes), vh = rt.u8(v, TOK * rowBytes);
  const k16 = new Uint16Array(kh.buffer, kh.byteOffset, TOK * NKV * HD), v16 = new Uint16Array(vh.buffer, vh.byteOffset, TOK * NKV * HD);
  for (let i = 0; i < k16.length; i++) { k16[i] = f2h(Math.sin(i * 0.731) * KS); v16[i] = f2h(Math.cos(i * 0.377)); }
  const q = rt.alloc(NQ * NH * HD * 4), qf = rt.f32(q, NQ * NH * HD);
  for (let i = 0; i < qf.length; i++) qf[i] = Math.sin(i * 0.113) * 1.5;
  const pos = rt.alloc(NQ * 4), pi = new Int32Array(rt.u8(pos, NQ * 4).buffer, pos, NQ);
  for (let i = 0; i < NQ; i++) pi[i] = TOK - NQ + i;
  const out = rt.alloc(NQ * NH * HD * 4);
  const args = { q, k, v, out, nTokens: NQ, nHead: NH, nKvHead: NKV, headDim: HD, scale: 1 / Math.sqrt(HD), positions: pos, maxPos: TOK - 1, window: 0 };
  if (FLASH) rt.reserveAttentionFlash(HD); else rt.reserveAttentionGgml(HD, TOK - 1, NKV, NH);
  return { rt, run: () => FLASH ? rt.attentionFlash(args) : rt.attentionGgml(args), out: () => rt.f32(out, NQ * NH * HD).slice() };
}
const a = await setup(arg('a', '.')), b = await setup(arg('b', '.'));
a.run(); b.run();
const ya = a.out(), yb = b.out();
let diff = 0;
for (let i = 0; i < ya.length; i++) if (!Object.is(ya[i], yb[i])) diff++;
console.log(`attention ${FLASH ? 'flash' : 'ggml'} ${NQ} tokens over ${TOK} rows, ${NH}/${NKV} heads of ${HD}, ${THREADS} thread(s) (a: ${a.rt.simd}, b: ${b.rt.simd}): ${diff} of ${ya.length} outputs differ`);
const WALL = process.argv.includes("--wall");
const cpuTime = (fn, n) => { const t0 = performance.now(), c0 = process.cpuUsage(); for (let i = 0; i < n; i++) fn(); const c = process.cpuUsage(c0); return WALL ? (performance.now() - t0) / 1e3 / n : (c.user + c.system) / 1e6 / n; };
const n = Math.max(1, Math.round(2e9 / (NQ * TOK * NH * HD * (NQ > 1 ? 2 : 1))));
const q = [];
for (let r = 0; r < ROUNDS; r++) {
  let ta, tb;
  if (r & 1) { tb = cpuTime(b.run, n); ta = cpuTime(a.run, n); } else { ta = cpuTime(a.run, n); tb = cpuTime(b.run, n); }
  q.push(ta / tb);
  console.log(`  round ${r}: a ${(ta * 1e3).toFixed(3)} ms  b ${(tb * 1e3).toFixed(3)} ms  b/a ${(ta / tb).toFixed(2)}`);
}
q.sort((u, v) => u - v);
console.log(`  median b/a ${q[q.length >> 1].toFixed(3)} over ${ROUNDS} rounds`);
await a.rt.close(); await b.rt.close();
