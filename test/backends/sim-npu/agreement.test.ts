// Prefill on sim-npu against the all-cpu run where no llama.cpp parity holds by construction: the
// parity fixtures whose weights the encoder requantizes to int8 (f32, f16, K-quants) and the real tiny
// models. Over every prompt position: top-1 agreement and mean KL(cpu || sim-npu) of the next-token
// distributions, held to the thresholds justified in NOTES.md ("sim-npu: agreement thresholds").
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createCpuDevice } from '../../../src/backends/cpu/device.js';
import { createSimNpu } from '../../../src/backends/sim-npu/index.js';
import { openGguf } from '../../../src/gguf/open.js';
import { loadModel, type Model } from '../../../src/runtime/model.js';
import { Context, type ContextOptions } from '../../../src/runtime/context.js';
import { tokenizerFromGguf } from '../../../src/tokenizer/index.js';
import { buildTransformer } from '../../../src/models/transformer.js';
import { fixture } from '../../helpers/fixtures.js';
import { PARITY_ARCHS, type RefFile } from '../../helpers/parity.js';
import { agreement } from './agreement.js';

/** Thresholds (NOTES.md): mean KL over positions; top-1 agreement over all positions and over decisive ones. */
const MAX_MEAN_KL = 0.01;
const MIN_TOP1 = 0.8;
const MIN_DECISIVE_TOP1 = 0.85;

const cpu = await createCpuDevice({ threads: 2 });
const npu = await createSimNpu({ threads: 1 });
after(async () => { await npu.close(); await cpu.close(); });

/** Logits of every position of every prompt (rows of nVocab), on a fresh context each. */
async function allLogits(model: Model, prompts: number[][], opts: Partial<ContextOptions>): Promise<Float32Array[]> {
  const out: Float32Array[] = [];
  for (const p of prompts) {
    const ctx = new Context(model, { nCtx: 256, ...opts });
    await ctx.ready();
    out.push(Float32Array.from(await ctx.decode(p, true)));
    ctx.close();
  }
  return out;
}

const STORY = 'Once upon a time, there was a little girl named Lily. She loved to play outside in the sunshine. One day, she saw a big, red ball in the park. She ran to the ball and kicked it high into the sky.';

const cases: { name: string; path: string; prompts: (m: Model) => number[][] }[] = [];
for (const arch of PARITY_ARCHS) for (const type of ['f32', 'f16', 'q4_k', 'q6_k', 'q4_k_m']) {
  const name = `${arch}-${type}`;
  cases.push({ name, path: `parity/${name}.gguf`, prompts: () => (JSON.parse(readFileSync(fixture(`parity/${name}.ref.json`), 'utf8')) as RefFile).sequences.map((s) => s.prompt) });
}
for (const f of ['TinyStories-656K-Q8_0.gguf', 'TinyStories-656K.f16.gguf', 'stories260K.gguf', 'tinyllamas-stories-260k-f32.gguf']) {
  cases.push({ name: f, path: `models/${f}`, prompts: (m) => [tokenizerFromGguf(m.file).tokenize(STORY, { addSpecial: true })] });
}

for (const c of cases) {
  test(`agreement ${c.name}: prefill on sim-npu vs all-cpu, every prompt position`, async (t) => {
    const file = openGguf(fixture(c.path));
    try {
      const model = loadModel(file, { device: cpu });
      const prompts = c.prompts(model);
      const before = npu.stats().engineCalls;
      const want = await allLogits(model, prompts, {});
      const got = await allLogits(model, prompts, { devices: [npu, cpu], prefillDevice: npu, decodeDevice: cpu });
      // the layer groups sim-npu can take (all, unless a weight's rows are not a multiple of 32): each ran once per prompt
      const g = buildTransformer(model.spec, model.hp, model.weights, { nTokens: 128, nOutputs: 128, nCtx: 256, kvType: 'f16' });
      const groups = npu.claimGroups!(g), nGroups = groups.length;
      const groupsOnNpu = groups.filter((gr) => gr.nodes.every((id) => npu.supportsOp(g.tensors[id]!, g))).length;
      assert.ok(groupsOnNpu > 0);
      assert.equal(npu.stats().engineCalls - before, prompts.length * groupsOnNpu, 'every supported layer group ran on sim-npu');
      const a = agreement(want, got, model.hp.nVocab);
      t.diagnostic(`${c.name}: ${a.positions} positions, top-1 agreement ${(100 * a.top1).toFixed(1)}% (${(100 * a.decisiveTop1).toFixed(1)}% of the ${a.decisive} with a top-2 margin >= 0.01), mean KL ${a.meanKl.toExponential(2)}, max KL ${a.maxKl.toExponential(2)}, ${groupsOnNpu}/${nGroups} layer groups on sim-npu`);
      assert.ok(a.top1 >= MIN_TOP1, `top-1 agreement ${(100 * a.top1).toFixed(1)}% < ${100 * MIN_TOP1}%`);
      assert.ok(a.decisiveTop1 >= MIN_DECISIVE_TOP1, `top-1 agreement where the margin is clear ${(100 * a.decisiveTop1).toFixed(1)}% < ${100 * MIN_DECISIVE_TOP1}%`);
      assert.ok(a.meanKl <= MAX_MEAN_KL, `mean KL ${a.meanKl.toExponential(2)} > ${MAX_MEAN_KL}`);
    } finally {
      file.source.close?.();
    }
  });
}
