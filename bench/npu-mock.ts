// `npm run bench:npu-mock [-- --shape qwen3-0.6b --type q8_0 --tokens 128,1 --threads 2 --reps 5 --group blk.0]`:
// one node group of a synthetic model run through the mock NPU runtime (engine blob, int8 matmuls on the
// cpu kernels) and through the cpu device itself (the same nodes, the file's weights), alternating runs,
// median wall time of each. The mock should take about as long as the cpu device.
import { parseArgs } from 'node:util';
import type { Placement } from '../src/backends/backend.js';
import { createCpuDevice } from '../src/backends/cpu/device.js';
import { enableRelaxedSimd } from '../src/backends/cpu/node-flags.js';
import { graphGroups, modelGraphs } from '../src/backends/npu/compile-model.js';
import { encodeGroupEngine } from '../src/backends/npu/encoder.js';
import { createMockNpuRuntime } from '../src/backends/npu/mock-runtime.js';
import { nElements } from '../src/graph/graph.js';
import { openGguf } from '../src/gguf/open.js';
import { syntheticModel } from '../src/bench/synthetic.js';
import type { SyntheticType } from '../src/bench/shapes.js';

enableRelaxedSimd();
const { values: v } = parseArgs({ options: {
  shape: { type: 'string', default: 'qwen3-0.6b' }, type: { type: 'string', default: 'q8_0' }, tokens: { type: 'string', default: '128,1' },
  threads: { type: 'string', default: '2' }, reps: { type: 'string', default: '5' }, group: { type: 'string', default: 'blk.0' }, ctx: { type: 'string', default: '512' },
} });
const threads = Number(v.threads), reps = Number(v.reps), nCtx = Number(v.ctx);
const model = syntheticModel(v.shape!, v.type as SyntheticType);
const mg = modelGraphs(openGguf(model.path), nCtx);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

const npu = await createMockNpuRuntime({ threads });
const cpu = await createCpuDevice({ threads });
console.log(`${v.shape}:${v.type} group ${v.group}, ${threads} threads, median of ${reps} alternating runs`);
for (const nTok of v.tokens!.split(',').map(Number)) {
  const g = mg.graph(nTok, 1);
  const group = graphGroups(g).find((x) => x.name === v.group);
  if (!group) throw new Error(`no group ${v.group}`);
  const enc = encodeGroupEngine({ graph: g, group, nTokens: nTok, weightBytes: (id) => mg.weightBytes(g, id) }, 'ax8850');
  // the mock: load, bind inputs (positions 0..n-1), in/out cache in place
  const ctx = npu.createContext(0);
  const h = ctx.loadEngine(enc.blob);
  const info = ctx.engineInfo(h);
  const ins = info.inputs.map((io) => {
    const p = ctx.malloc(io.bytes), b = new Uint8Array(io.bytes);
    if (io.dtype === 'i32') new Int32Array(b.buffer).forEach((_, i, a) => { a[i] = i; });
    else if (io.dtype === 'f32') new Float32Array(b.buffer).forEach((_, i, a) => { a[i] = Math.sin(i) * 0.5; });
    ctx.memcpyHostToDevice(p, b);
    return p;
  });
  const outs = info.outputs.map((io) => { const k = info.inputs.findIndex((i) => i.name === io.name); return k >= 0 ? ins[k]! : ctx.malloc(io.bytes); });
  // the cpu device: the same nodes on the file's weights (repacked as the device does at load)
  const bt = cpu.bufferType();
  const place = new Map<number, Placement>();
  const at = (id: number): Placement => {
    let p = place.get(id);
    if (!p) {
      const t = g.tensors[id]!;
      const bytes = t.role === 'weight' ? mg.weightBytes(g, id) : null;
      const n = bytes ? bytes.length : (t.dtype === 'f16' ? 2 : 4) * Math.max(1, nElements(t));
      const buf = bt.allocate(n, t.role === 'weight' ? 'weights' : 'compute');
      if (bytes) buf.set(0, bytes);
      else if (t.dtype === 'i32') buf.set(0, new Uint8Array(Int32Array.from({ length: n / 4 }, (_, i) => i).buffer));
      p = { buffer: buf, offset: 0, nBytes: n };
      if (t.role === 'weight' && typeof t.dtype === 'number') t.dtype = cpu.prepareWeight?.(p, t.dtype, t.shape) ?? t.dtype;
      place.set(id, p);
    }
    return p;
  };
  for (const id of group.nodes) for (const s of [id, ...g.tensors[id]!.src]) at(s);
  const be = cpu.createBackend();
  const cctx = { graph: g, placement: at };
  const tNpu: number[] = [], tCpu: number[] = [];
  ctx.execute(h, ins, outs); await be.compute(cctx, group.nodes); // warm-up
  for (let r = 0; r < reps; r++) {
    let t0 = performance.now();
    ctx.execute(h, ins, outs);
    tNpu.push(performance.now() - t0);
    t0 = performance.now();
    await be.compute(cctx, group.nodes);
    tCpu.push(performance.now() - t0);
  }
  console.log(`  ${String(nTok).padStart(4)} tokens: mock npu ${median(tNpu).toFixed(2)} ms, cpu device ${median(tCpu).toFixed(2)} ms (ratio ${(median(tNpu) / median(tCpu)).toFixed(2)}); blob ${(enc.blob.length / 2 ** 20).toFixed(1)} MiB`);
  ctx.destroy();
}
await npu.close();
await cpu.close();
