#!/usr/bin/env node
// A/B of the cpu device's recurrent-layer ops (qwen35's Gated DeltaNet layer: ssm_conv, gated_delta_net, silu,
// sigmoid, l2_norm; swiglu) between two builds in one process (a shared machine's load hits both alike): repo roots --a
// and --b (default: this checkout), each with a built dist/. The ops run through the real compile path
// (GraphBuilder graph, cpu device, the node runners compile.ts binds), interleaved rounds, median of process
// CPU time per call (and wall), and a bit-for-bit comparison of the two builds' outputs and states.
// Shapes: qwen3.5-0.8b's (16 heads of 128, conv 4 over 6144 channels) unless told.
// Usage: node scripts/ab-recurrent.mjs --a /work/main [--b .] [--threads 1] [--tok 128] [--rounds 7]
//        [--ops ssm_conv,gated_delta_net,silu,sigmoid,l2_norm,swiglu] [--heads 16] [--S 128]
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { cpuUsage } from 'node:process';
const arg = (n, d) => { const i = process.argv.indexOf('--' + n); return i >= 0 ? process.argv[i + 1] : d; };
const T = +arg('threads', '1'), TOK = +arg('tok', '128'), R = +arg('rounds', '7'), H = +arg('heads', '16'), S = +arg('S', '128');
const OPS = arg('ops', 'ssm_conv,gated_delta_net,silu,sigmoid,l2_norm').split(',');
if (!process.argv.includes('--a')) { console.error('--a REPO (the base build) is required'); process.exit(2); }
const dirs = { base: pathToFileURL(resolve(arg('a', '.'), 'dist')).href, new: pathToFileURL(resolve(arg('b', '.'), 'dist')).href };
const CH = 3 * H * S;

function rand(n, seed, scale = 1) {
  const a = new Float32Array(n);
  let s = seed >>> 0;
  for (let i = 0; i < n; i++) { s = (s * 1664525 + 1013904223) >>> 0; a[i] = ((s / 2 ** 32) * 2 - 1) * scale; }
  return a;
}
function unit(a) { for (let h = 0; h < a.length; h += S) { let ss = 0; for (let i = h; i < h + S; i++) ss += a[i] * a[i]; for (let i = h; i < h + S; i++) a[i] /= Math.sqrt(ss); } return a; }

// one graph per op: its leaves' data, the node the device computes
function build(GB, op) {
  const b = new GB();
  const x = (name, shape, role = 'input') => b.leaf(name, role, 'f32', shape);
  const data = new Map();
  let out;
  if (op === 'ssm_conv') {
    const st = x('conv', [3 * CH], 'state'), xx = x('x', [CH, TOK]), w = x('w', [4, CH], 'weight');
    out = b.ssmConv(st, xx, w);
    data.set(st, rand(3 * CH, 1)); data.set(xx, rand(CH * TOK, 2, 3)); data.set(w, rand(4 * CH, 3));
  } else if (op === 'gated_delta_net') {
    const st = x('ssm', [S * S * H], 'state');
    const [q, k, v, g, beta] = [['q', S * H], ['k', S * H], ['v', S * H], ['g', H], ['beta', H]].map(([n, w]) => x(n, [w, TOK]));
    out = b.gatedDeltaNet(st, q, k, v, g, beta, { headDim: S, nHeadK: H, nHeadV: H });
    data.set(st, rand(S * S * H, 4, 0.1)); data.set(q, unit(rand(S * H * TOK, 5))); data.set(k, unit(rand(S * H * TOK, 6))); data.set(v, rand(S * H * TOK, 7, 2));
    data.set(g, Float32Array.from(rand(H * TOK, 8), (z) => -2 * Math.abs(z))); data.set(beta, Float32Array.from(rand(H * TOK, 9), (z) => 0.5 + 0.45 * z));
  } else if (op === 'silu') {
    const a = x('a', [CH, TOK]); out = b.silu(a, CH); data.set(a, rand(CH * TOK, 10, 8));
  } else if (op === 'swiglu') {
    const a = x('a', [CH, TOK]), u = x('u', [CH, TOK]); out = b.swiglu(a, u); data.set(a, rand(CH * TOK, 13, 8)); data.set(u, rand(CH * TOK, 14));
  } else if (op === 'sigmoid') {
    const a = x('a', [H, TOK]); out = b.sigmoid(a); data.set(a, rand(H * TOK, 11, 8));
  } else if (op === 'l2_norm') {
    const a = x('a', [2 * H * S, TOK]); out = b.l2Norm(a, 1e-6, S); data.set(a, rand(2 * H * S * TOK, 12));
  } else throw new Error(`unknown op ${op}`);
  b.setGroup('blk.0');
  return { g: b.finish({ tokens: -1, positions: -1, outputRows: -1 }, out, TOK, TOK), data, out };
}
const u8 = (a) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
// every tensor in its own buffer of the device (as the conformance suite places them), the op's node bound once
function prepare(device, g, data, tensorBytes) {
  const bt = device.bufferType(), at = [], bufs = [];
  for (const t of g.tensors) {
    const bytes = Math.max(4, tensorBytes(t));
    const buffer = bt.allocate(bytes, t.role === 'weight' ? 'weights' : t.role === 'state' ? 'state' : t.role === 'input' ? 'input' : 'compute');
    bufs.push(buffer);
    at[t.id] = { buffer, offset: 0, nBytes: bytes };
  }
  const backend = device.createBackend(), ctx = { graph: g, placement: (id) => at[id] };
  const reset = () => { for (const [t, d] of data) at[t.id].buffer.set(0, u8(d)); };
  const read = (t) => { const b = at[t.id].buffer.get(0, at[t.id].nBytes); return new Float32Array(b.buffer, b.byteOffset, b.byteLength >> 2).slice(); };
  return { reset, compute: () => backend.compute(ctx, g.nodes), read, close: () => { backend.close?.(); for (const b of bufs) b.free(); } };
}

const V = {};
for (const [k, d] of Object.entries(dirs)) {
  const nf = await import(d + '/src/backends/cpu/node-flags.js');
  nf.enableRelaxedSimd();
  const dev = await import(d + '/src/backends/cpu/device.js');
  const gr = await import(d + '/src/graph/graph.js');
  const cc = await import(d + '/src/backends/cpu/compile.js');
  V[k] = { dev: await dev.createCpuDevice({ threads: T, numerics: 'exact' }), GB: gr.GraphBuilder, tensorBytes: cc.tensorBytes };
}
const med = (a) => a.slice().sort((x, y) => x - y)[a.length >> 1];
console.log(`recurrent ops: ${H} heads of ${S}, ${CH} conv channels, ${TOK} tokens, ${T} thread(s), ${R} rounds (ms per call: CPU / wall)`);
for (const op of OPS) {
  const runs = {};
  for (const k of Object.keys(V)) {
    const { dev, GB, tensorBytes } = V[k];
    const { g, data, out } = build(GB, op);
    const st = [...data.keys()].find((t) => t.role === 'state');
    runs[k] = { ...prepare(dev, g, data, tensorBytes), out, st };
  }
  const t = { base: [], new: [] }, w = { base: [], new: [] };
  for (let r = 0; r < R; r++) {
    for (const k of Object.keys(V)) {
      const run = runs[k];
      run.reset();
      const c0 = cpuUsage(), t0 = performance.now();
      await run.compute();
      const ms = performance.now() - t0, c = cpuUsage(c0);
      if (r > 0) { t[k].push((c.user + c.system) / 1000); w[k].push(ms); }
    }
  }
  const outs = (k) => { const r = runs[k]; return [r.read(r.out), ...(r.st ? [r.read(r.st)] : [])]; };
  const ob = outs('base'), on = outs('new');
  const same = ob.every((a, j) => a.length === on[j].length && a.every((v, i) => Object.is(v, on[j][i])));
  for (const k of Object.keys(V)) runs[k].close();
  const cb = med(t.base), cn = med(t.new);
  console.log(`${op.padEnd(16)} base ${cb.toFixed(2)} / ${med(w.base).toFixed(2)}   new ${cn.toFixed(2)} / ${med(w.new).toFixed(2)}   ${(cb / cn).toFixed(2)}x   ${same ? 'same bits' : 'BITS DIFFER'}`);
}
for (const k of Object.keys(V)) await V[k].dev.close();
