// `npm run bench:npu`: the NPU table of BENCHMARKS.md. For each synthetic model, pp (one prompt of
// N tokens) and tg (M one-token steps after it), wall and simulated tok/s, for: all-cpu; all on sim-npu
// (ax8850, htp); prefill on sim-npu, decode on cpu (ax8850, htp). Simulated time: the run's wall time
// with the time spent in sim-npu (its computes and copies) replaced by the cost model's seconds for
// them (src/backends/sim-npu/cost-model.ts); an all-cpu run's simulated time is its wall time.
//
// Usage: npm run bench:npu -- [--models a:q8_0,b:q4_0] [--pp 512] [--tg 128] [-t N] [--json] [--modes SUBSTR,..] [--predict]

import { parseArgs } from 'node:util';
import { enableRelaxedSimd } from '../src/backends/cpu/node-flags.js';
import { createCpuDevice } from '../src/backends/cpu/device.js';
import { createSimNpu } from '../src/backends/sim-npu/index.js';
import type { SimNpuDevice } from '../src/backends/sim-npu/device.js';
import { openGguf } from '../src/gguf/open.js';
import { loadModel } from '../src/runtime/model.js';
import { Context, type ContextOptions } from '../src/runtime/context.js';
import { parseSyntheticSpec } from '../src/bench/shapes.js';
import { syntheticModel } from '../src/bench/synthetic.js';
import { syntheticGraph } from '../src/bench/npu-predict.js';
import { NPU_TARGETS, predictGraph } from '../src/backends/sim-npu/cost-model.js';

interface Row { model: string; mode: string; test: string; tokens: number; wall_tps: number; sim_tps: number; npu_engine_calls: number }

// relaxed SIMD on Node 20 (see src/backends/cpu/node-flags.ts), before any kernel compiles
enableRelaxedSimd();

const { values } = parseArgs({ options: { models: { type: 'string' }, pp: { type: 'string' }, tg: { type: 'string' }, threads: { type: 'string', short: 't' }, json: { type: 'boolean' }, predict: { type: 'boolean' }, modes: { type: 'string' } } });
const only = values.modes?.split(',');
const models = (values.models ?? 'qwen3-0.6b:q8_0,llama-3.2-1b:q4_0').split(',');
const pp = Number(values.pp ?? 512), tg = Number(values.tg ?? 128);
const threads = values.threads ? Number(values.threads) : undefined;

if (values.predict) {
  // --predict: the simulated figures of the NPU modes from the shapes alone (deterministic; no weights,
  // no run): what a run reports as sim tok/s for its NPU parts. The KV cache has pp + tg + 127 slots
  // (the context's capacity with a padded chunk's overhang); decode-on-cpu rows have no simulated part.
  const cap = pp + tg + 127, chunks = Math.ceil(pp / 128);
  for (const spec of models) {
    const g128 = syntheticGraph(spec, { nTokens: 128, nCtx: cap }), g1 = syntheticGraph(spec, { nTokens: 1, nCtx: cap });
    const hp = { layers: g1.tensors.filter((t) => t.role === 'state').length / 2, kvRow: g1.tensors.filter((t) => t.role === 'state').reduce((a, t) => a + t.shape[0]!, 0) };
    for (const t of Object.values(NPU_TARGETS)) {
      const chunk = predictGraph(t, g128), step = predictGraph(t, g1);
      // NPU prefill, cpu decode: after each chunk its K/V rows (f16) cross to the cpu, one copy per layer and K/V
      const handover = chunks * 2 * hp.layers * t.transferS + (pp * hp.kvRow * 2) / t.linkBytesPerS;
      const rowsOut = [
        [`sim-npu ${t.name} (all)`, `pp${pp}`, pp / (chunks * chunk.seconds)],
        [`sim-npu ${t.name} (all)`, `tg${tg}`, 1 / step.seconds],
        [`sim-npu ${t.name} prefill, cpu decode`, `pp${pp}`, pp / (chunks * chunk.seconds + (Number.isFinite(handover) ? handover : 0))],
      ] as const;
      for (const [mode, test, tps] of rowsOut) process.stdout.write(`${spec.padEnd(18)} ${mode.padEnd(32)} ${test.padEnd(6)} sim ${tps.toFixed(1).padStart(8)} tok/s (predicted)\n`);
    }
  }
  process.exit(0);
}

const cpu = await createCpuDevice({ threads });
/** The run modes; fresh sim-npu devices per model (engines of one model never crowd the next one's memory). */
async function makeModes() {
  const npus = { ax8850: await createSimNpu({ npuTarget: 'ax8850', threads }), htp: await createSimNpu({ npuTarget: 'htp', threads }) };
  const modes: { mode: string; npu?: SimNpuDevice; opts: Partial<ContextOptions> }[] = [{ mode: 'cpu', opts: {} }];
  for (const [t, npu] of Object.entries(npus)) {
    modes.push({ mode: `sim-npu ${t} (all)`, npu, opts: { devices: [npu, cpu], prefillDevice: npu, decodeDevice: npu } });
    modes.push({ mode: `sim-npu ${t} prefill, cpu decode`, npu, opts: { devices: [npu, cpu], prefillDevice: npu, decodeDevice: cpu } });
  }
  return { modes, close: async () => { for (const d of Object.values(npus)) await d.close(); } };
}

const rows: Row[] = [];
for (const spec of models) {
  const { shape, type } = parseSyntheticSpec(spec);
  const { path } = syntheticModel(shape.name, type, { onProgress: () => {} });
  const file = openGguf(path);
  const model = loadModel(file, { device: cpu });
  const ids = Int32Array.from({ length: pp }, (_, i) => 1 + ((i * 7919) % (model.hp.nVocab - 1)));
  const { modes, close } = await makeModes();
  for (const m of modes) {
    if (only && !only.some((o) => m.mode.includes(o))) continue;
    const ctx = await Context.create(model, { nCtx: pp + tg, ...m.opts });
    // one warm-up token so plans and kernels are ready
    await ctx.decode([1]);
    ctx.clear();
    const measure = async (test: string, n: number, run: () => Promise<void>) => {
      const s0 = m.npu?.stats();
      const t0 = performance.now();
      await run();
      const wall = (performance.now() - t0) / 1e3;
      const s1 = m.npu?.stats();
      const sim = s0 && s1 ? wall - (s1.wallSeconds - s0.wallSeconds) + (s1.seconds - s0.seconds) : wall;
      const row: Row = { model: spec, mode: m.mode, test, tokens: n, wall_tps: n / wall, sim_tps: n / sim, npu_engine_calls: s0 && s1 ? s1.engineCalls - s0.engineCalls : 0 };
      rows.push(row);
      if (!values.json) process.stdout.write(`${spec.padEnd(18)} ${m.mode.padEnd(32)} ${test.padEnd(6)} wall ${row.wall_tps.toFixed(1).padStart(8)} tok/s   sim ${row.sim_tps.toFixed(1).padStart(8)} tok/s   engine calls ${row.npu_engine_calls}\n`);
    };
    await measure(`pp${pp}`, pp, async () => { await ctx.decode(ids); });
    let next = 1;
    await measure(`tg${tg}`, tg, async () => { for (let i = 0; i < tg; i++) { await ctx.decode([next]); next = 1 + ((next * 31) % (model.hp.nVocab - 1)); } });
    ctx.close();
  }
  await close();
  file.source.close?.();
}
if (values.json) process.stdout.write(JSON.stringify(rows) + '\n');
await cpu.close();
