// node cmp.mjs <fixture> <seq> all|gen [step]: runs our reference backend on the same tokens and, for every
// llama.cpp tensor of the dump, finds our node output with the smallest max difference (0 = bit
// identical) and lists the rows (token positions) that differ. The first non-zero line is the op to fix.
import { readFileSync, existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { readDump } from './readdump.mjs';
const R = new URL('../../dist/', import.meta.url).href;
const { referenceDevice, computeNode } = await import(R + 'src/backends/reference/device.js');
const { openGguf } = await import(R + 'src/gguf/open.js');
const { loadModel } = await import(R + 'src/runtime/model.js');
const { Context } = await import(R + 'src/runtime/context.js');
const { nElements } = await import(R + 'src/graph/graph.js');
const [name, si, mode, stepArg] = process.argv.slice(2);
const step = +(stepArg ?? 0);
const FX = process.env.GGUF_EDGE_FIXTURES ? process.env.GGUF_EDGE_FIXTURES + '/parity/' : new URL('../../../shared/fixtures/parity/', import.meta.url).pathname;
const ref = JSON.parse(readFileSync(FX + name + '.ref.json', 'utf8'));
const seq = ref.sequences[+si];
const dumpPath = `${process.env.OUT ?? '/tmp/ggml-oracle'}/${name}.${si}.${mode}.bin`;
if (!existsSync(dumpPath)) spawnSync('node', [new URL('run.mjs', import.meta.url).pathname, name, si, mode, '32'], { stdio: 'inherit' });
const gg = readDump(dumpPath).filter(t => t.step === step);
// ours
const base = referenceDevice();
let rec = null;
const dev = { ...base, createBackend() { const be = base.createBackend(); return { device: dev, compute(ctx, nodes) {
  for (const id of nodes) { const t = ctx.graph.tensors[id]; computeNode(ctx.graph, t, ctx.placement);
    if (rec && t.dtype === 'f32' && t.op !== 'kv_store') { const p = ctx.placement(id); const v = p.buffer.hostView(p.offset, p.nBytes);
      rec.push({ name: t.name, op: t.op, shape: t.shape, data: new Float32Array(v.buffer.slice(v.byteOffset, v.byteOffset + 4 * nElements(t))) }); } } } }; } };
const file = openGguf(FX + name + '.gguf');
const model = loadModel(file, { device: dev });
const ctx = new Context(model, { nCtx: 256, kvType: 'f16' });
if (mode === 'all') { rec = []; await ctx.decode(seq.prompt, true); }
else { if (step === 0) rec = []; await ctx.decode(seq.prompt); for (let k = 0; k < step; k++) { if (k === step - 1) rec = []; await ctx.decode([seq.continuation[k]]); } }
const ours = rec;
const skip = new Set(['VIEW', 'PERMUTE', 'RESHAPE', 'SET_ROWS', 'TRANSPOSE', 'SOFT_MAX', 'CPY', 'GET_ROWS']);
let shown = 0;
for (const t of gg) {
  if (skip.has(t.op) || t.type !== 0) continue;
  if (t.name.startsWith('kq-')) continue;
  const n = t.data.length;
  let best = null, bestD = Infinity, bestRows = null;
  for (const o of ours) {
    if (o.data.length !== n) continue;
    let d = 0;
    for (let i = 0; i < n; i++) { const e = Math.abs(o.data[i] - t.data[i]); if (e > d) d = e; if (d > bestD) break; }
    if (d < bestD) { bestD = d; best = o; }
  }
  let info = '';
  if (best && bestD > 0) {
    const rowLen = t.name.startsWith('kqv-') ? t.ne[0] : (t.ne[0] * (t.op === 'ROPE' ? t.ne[1] : 1));
    const rows = new Set(), cnt = { n: 0 };
    for (let i = 0; i < n; i++) if (best.data[i] !== t.data[i]) { rows.add(Math.floor(i / rowLen)); cnt.n++; }
    info = `diffs ${cnt.n} rows ${[...rows].slice(0, 12).join(',')}`;
  }
  console.log(`${t.name.padEnd(22)} ${t.op.padEnd(9)} ${t.ne.join('x').padEnd(14)} ours ${best ? best.name + '/' + best.op : '-'} maxdiff ${bestD.toExponential(2)} ${info}`);
}
file.source.close?.();
