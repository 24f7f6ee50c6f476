#!/usr/bin/env node
// A/B of one mixture-of-experts FFN block on the cpu device, two builds in one process (the load of a shared
// machine hits both alike): repo roots --a and --b (default: this checkout), each with a built dist/.
// The block is qwen3moe's (src/models/transformer.ts): router mul_mat (F32) -> soft_max -> top_k ->
// moe_weights, then up / gate mul_mat_id (--gate type), swiglu, down mul_mat_id (--down type), moe_sum.
// Default shape: Qwen3-30B-A3B's layer (2048 wide, 128 experts of 768, top 8). Every step gets a fresh
// activation row (so the experts change and their weights come from DRAM); the same rows for both builds.
// Reports median ms per step (wall and process CPU time per thread) and compares every step's output bit for bit.
// Usage: node scripts/ab-moe.mjs --a /work/main [--b .] [--threads 2] [--steps 40] [--rounds 7]
//        [--gate Q4_K] [--down Q6_K] [--embd 2048] [--ff 768] [--experts 128] [--used 8] [--tok 1] [--numerics fast]
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
const arg = (n, d) => { const i = process.argv.indexOf('--' + n); return i >= 0 ? process.argv[i + 1] : d; };
const T = +arg('threads', '2'), STEPS = +arg('steps', '40'), R = +arg('rounds', '7');
const E = +arg('embd', '2048'), FF = +arg('ff', '768'), NE = +arg('experts', '128'), K = +arg('used', '8'), TOK = +arg('tok', '1');
const GATE = arg('gate', 'Q4_K'), DOWN = arg('down', 'Q6_K'), NUM = arg('numerics', 'fast');
if (!process.argv.includes('--a')) { console.error('--a REPO (the base build) is required'); process.exit(2); }
const dirs = { base: pathToFileURL(resolve(arg('a', '.'), 'dist')).href, new: pathToFileURL(resolve(arg('b', '.'), 'dist')).href };

// deterministic data, identical for both builds
let seed = 12345;
const rnd = () => { seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0; return seed; };
const SC = { Q4_0: [[0], 18], Q8_0: [[0], 34], Q4_K: [[0, 2], 144], Q6_K: [[208], 210], Q5_K: [[0, 2], 176], Q3_K: [[108], 110], Q2_K: [[80, 82], 84] };
function weights(gt, name, cols, rows) {
  const t = gt.ggmlTypeByName(name), rb = cols / t.blockSize * t.typeSize, b = new Uint8Array(rb * rows), u = new Uint32Array(b.buffer);
  for (let i = 0; i < u.length; i++) u[i] = rnd();
  const sc = SC[name]; for (let o = 0; o < b.length; o += sc[1]) for (const f of sc[0]) { b[o + f] = 0; b[o + f + 1] = 0x20; }
  return { id: t.id, bytes: b };
}
const f32 = (n, amp) => { const a = new Float32Array(n); for (let i = 0; i < n; i++) a[i] = ((rnd() / 2 ** 32) * 2 - 1) * amp; return a; };
const V = {};
let data = null;
for (const [k, d] of Object.entries(dirs)) {
  const nf = await import(d + '/src/backends/cpu/node-flags.js');
  nf.enableRelaxedSimd();
  const gt = await import(d + '/src/gguf/ggml-types.js');
  const { GraphBuilder } = await import(d + '/src/graph/graph.js');
  const { createCpuDevice } = await import(d + '/src/backends/cpu/device.js');
  if (!data) {
    data = {
      router: new Uint8Array(f32(E * NE, 0.05).buffer),
      up: weights(gt, GATE, E, FF * NE), gate: weights(gt, GATE, E, FF * NE), down: weights(gt, DOWN, FF, E * NE),
      xs: Array.from({ length: STEPS }, () => new Uint8Array(f32(E * TOK, 1).buffer)),
    };
  }
  const device = await createCpuDevice({ threads: T, numerics: NUM });
  const b = new GraphBuilder();
  b.setGroup('blk.0');
  const wr = b.leaf('router', 'weight', gt.GgmlType.F32, [E, NE]);
  const wu = b.leaf('up', 'weight', data.up.id, [E, FF, NE]), wg = b.leaf('gate', 'weight', data.gate.id, [E, FF, NE]), wd = b.leaf('down', 'weight', data.down.id, [FF, E, NE]);
  const x = b.leaf('x', 'input', 'f32', [E, TOK]);
  const probs = b.softMax(b.mulMat(wr, x));
  const ids = b.topK(probs, K);
  const wts = b.moeWeights(probs, ids, { norm: true, scale: 1 });
  const up = b.mulMatId(wu, x, ids), gate = b.mulMatId(wg, x, ids);
  const out = b.moeSum(b.mulMatId(wd, b.swiglu(gate, up), ids), wts);
  const g = b.finish({ tokens: -1, positions: -1, outputRows: -1 }, out, TOK, TOK);
  const bt = device.bufferType(), pl = [];
  const src = new Map([[wr.id, data.router], [wu.id, data.up.bytes], [wg.id, data.gate.bytes], [wd.id, data.down.bytes]]);
  for (const t of g.tensors) {
    const n = Math.max(4, t.role === 'weight' ? src.get(t.id).length : t.shape.reduce((a, c) => a * c, 1) * 4);
    const buffer = bt.allocate(n, t.role === 'weight' ? 'weights' : t.role === 'input' ? 'input' : 'compute');
    pl[t.id] = { buffer, offset: 0, nBytes: n };
    if (t.role === 'weight') {
      buffer.set(0, src.get(t.id));
      t.dtype = device.prepareWeight(pl[t.id], t.dtype, t.shape);
    }
  }
  const be = device.createBackend(), ctx = { graph: g, placement: (id) => pl[id] };
  const outBytes = out.shape.reduce((a, c) => a * c, 1) * 4;
  let hash = 0;
  const step = (i) => {
    pl[x.id].buffer.set(0, data.xs[i]);
    be.compute(ctx, g.nodes);
    const o = new Int32Array(pl[out.id].buffer.get(0, outBytes).buffer);
    for (let j = 0; j < o.length; j++) hash = (Math.imul(hash, 31) + o[j]) | 0;
  };
  step(0);
  V[k] = { device, step, walls: [], cpus: [], get hash() { return hash; }, reset() { hash = 0; } };
}
let same = true;
for (let r = 0; r < R; r++) {
  for (const k of r & 1 ? ['new', 'base'] : ['base', 'new']) {
    const v = V[k];
    v.reset();
    const c0 = process.cpuUsage(), t0 = performance.now();
    for (let i = 0; i < STEPS; i++) v.step(i);
    const dt = (performance.now() - t0) / STEPS, c = process.cpuUsage(c0);
    v.walls.push(dt); v.cpus.push((c.user + c.system) / 1e3 / STEPS / T);
  }
  if (V.base.hash !== V.new.hash) same = false;
}
const med = (a) => a.slice().sort((p, q) => p - q)[a.length >> 1];
const f = (k) => `${k} wall ${med(V[k].walls).toFixed(3)} cpu ${med(V[k].cpus).toFixed(3)}`;
console.log(`moe ${E}x${FF}x${NE} top${K} up/gate ${GATE} down ${DOWN} tok=${TOK} t=${T} (ms per block): ${f('base')} | ${f('new')} | wall ${(med(V.base.walls) / med(V.new.walls)).toFixed(3)}x cpu ${(med(V.base.cpus) / med(V.new.cpus)).toFixed(3)}x | bits ${same ? 'same' : 'DIFFER'}`);
for (const k of Object.keys(V)) await V[k].device.close();
