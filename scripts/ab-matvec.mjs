#!/usr/bin/env node
// A/B of the cpu decode matvec kernels of two builds in one process (the load of a shared machine hits both
// alike): repo roots --a and --b (default: this checkout), each with a built dist/. Interleaved rounds, median
// GB/s of weights streamed (wall and process CPU time per thread), and a bit-for-bit comparison of the outputs.
// Weights as bench:kernels makes them (random quants, f16 scales 2^-7, Q4_0/Q8_0 repacked to r4), fast numerics.
// Usage: node scripts/ab-matvec.mjs --a /work/main [--b .] [--threads 1] [--mb 600] [--cols 1024]
//        [--types Q8_0,Q4_0,Q4_K,Q6_K] [--tok 1] [--rounds 7] [--split 1024]
//        (--tok 4: several sequences' decode tokens, dot4v; --split R: R-row matrices one after the other)
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
const arg = (n, d) => { const i = process.argv.indexOf('--' + n); return i >= 0 ? process.argv[i + 1] : d; };
const T = +arg('threads', '1'), MB = +arg('mb', '600'), TYPES = arg('types', 'Q8_0,Q4_0,Q4_K,Q6_K').split(','), TOK = +arg('tok', '1'), R = +arg('rounds', '7'), COLS = +arg('cols', '1024'), SPLIT = +arg('split', '0');
if (!process.argv.includes('--a')) { console.error('--a REPO (the base build) is required'); process.exit(2); }
const dirs = { base: pathToFileURL(resolve(arg('a', '.'), 'dist')).href, new: pathToFileURL(resolve(arg('b', '.'), 'dist')).href };
const V = {};
for (const [k, d] of Object.entries(dirs)) {
  const cpu = await import(d + '/src/backends/cpu/index.js');
  const gt = await import(d + '/src/gguf/ggml-types.js');
  const nf = await import(d + '/src/backends/cpu/node-flags.js');
  nf.enableRelaxedSimd();
  V[k] = { cpu, gt, rt: await cpu.createCpuRuntime({ threads: T, numerics: 'fast' }) };
}
const SC = { Q4_0: [[0], 18], Q8_0: [[0], 34], Q4_K: [[0, 2], 144], Q6_K: [[208], 210], Q5_K: [[0, 2], 176], Q3_K: [[108], 110], Q2_K: [[80, 82], 84], IQ4_XS: [[0], 136] };
for (const name of TYPES) {
  const S = {};
  for (const k of Object.keys(V)) {
    const { cpu, gt, rt } = V[k];
    let wt = gt.ggmlTypeByName(name).id;
    const rb = cpu.weightRowBytes(wt, COLS), rows = Math.floor(MB * 2 ** 20 / rb / (SPLIT || 64)) * (SPLIT || 64);
    const m = rt.mark(), w = rt.alloc(rows * rb), b = rt.u8(w, rows * rb), u = new Uint32Array(b.buffer, w, (rows * rb) >> 2);
    let s = 12345; for (let i = 0; i < u.length; i++) { s = (s * 1664525 + 1013904223) >>> 0; u[i] = s; }
    const sc = SC[name]; for (let o = 0; o < rows * rb; o += sc[1]) for (const f of sc[0]) { b[o + f] = 0; b[o + f + 1] = 0x20; }
    if (name === 'Q4_0' || name === 'Q8_0') wt = rt.repackRows4(w, rows, COLS, wt);
    const x = rt.alloc(COLS * 4 * TOK), xf = rt.f32(x, COLS * TOK); for (let i = 0; i < xf.length; i++) xf[i] = Math.sin(i);
    const y = rt.alloc(rows * 4 * TOK), at = cpu.activationTypeFor(wt), a = rt.alloc(cpu.activationRowBytes(at, COLS) * TOK);
    rt.quantize(at, x, COLS, TOK, a);
    // --split R: consecutive R-row matrices, one call each (decode's stream of layer-sized matmuls, each split
    // into the pool's chunks) instead of one call over all rows
    const fn = SPLIT ? () => { for (let r = 0; r < rows; r += SPLIT) rt.matmulQ(wt, w + r * rb, SPLIT, COLS, a, TOK, y + r * 4 * TOK, SPLIT * 4, undefined, 0); }
      : () => rt.matmulQ(wt, w, rows, COLS, a, TOK, y, undefined, undefined, 0);
    fn();
    S[k] = { fn, rt, m, y, rows, gb: rows * rb / 1e9, walls: [], cpus: [] };
  }
  const ya = V.base.rt.u8(S.base.y, S.base.rows * 4 * TOK), yb = V.new.rt.u8(S.new.y, S.new.rows * 4 * TOK);
  let same = ya.length === yb.length; for (let i = 0; same && i < ya.length; i++) if (ya[i] !== yb[i]) same = false;
  for (let r = 0; r < R; r++) for (const k of (r & 1 ? ['new', 'base'] : ['base', 'new'])) {
    const st = S[k]; const n = Math.max(2, Math.ceil(0.25 / (st.gb / 5)));
    const c0 = process.cpuUsage(), t0 = performance.now();
    for (let i = 0; i < n; i++) st.fn();
    const dt = (performance.now() - t0) / 1000 / n, c = process.cpuUsage(c0);
    st.walls.push(st.gb * TOK / dt); st.cpus.push(st.gb * TOK / ((c.user + c.system) / 1e6 / n / T));
  }
  const med = a => a.slice().sort((p, q) => p - q)[a.length >> 1], mx = a => Math.max(...a);
  const f = k => `${k} wall med ${med(S[k].walls).toFixed(2)} best ${mx(S[k].walls).toFixed(2)} cpu ${med(S[k].cpus).toFixed(2)}`;
  console.log(`${name} ${(S.base.gb * 1e3).toFixed(0)} MB t=${T} tok=${TOK}${SPLIT ? ` split=${SPLIT}` : ''} (GB/s of weights x tokens): ${f('base')} | ${f('new')} | ratio ${(med(S.new.walls) / med(S.base.walls)).toFixed(3)} | bits ${same ? 'same' : 'DIFFER'}`);
  for (const k of Object.keys(V)) V[k].rt.release(S[k].m);
}
for (const k of Object.keys(V)) await V[k].rt.close();
