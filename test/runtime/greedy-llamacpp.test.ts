// The real tiny models against llama.cpp's recorded greedy runs (fixtures/reference/greedy-llama.cpp.json):
// every recorded step, teacher-forced with llama.cpp's tokens, top-5 raw logits within a measured tolerance.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { referenceDevice } from '../../src/backends/reference/device.js';
import { openGguf } from '../../src/gguf/open.js';
import { loadModel } from '../../src/runtime/model.js';
import { Context } from '../../src/runtime/context.js';
import { argmax } from '../../src/runtime/sampler.js';
import { tokenizerFromGguf } from '../../src/tokenizer/index.js';
import { fixture } from '../helpers/fixtures.js';

interface Mode { generated_ids: number[]; top5_per_step: [number, number][][] }
interface Case { model: string; prompt: string; n_predict: number; prompt_ids: number[]; default: Mode; f32kv: Mode }
const ref: { cases: Case[] } = JSON.parse(readFileSync(fixture('reference/greedy-llama.cpp.json'), 'utf8'));
const device = referenceDevice();

// Max |our logit - llama.cpp's| over the recorded top-5 of every step, ~10% over what was measured on the
// reference device (`node scripts/run-tests.mjs greedy-llamacpp` prints the figures). That build ran its own
// kernel orders (upstream llama.cpp, AVX2/AVX-512), not the parity fixtures' v0.4.0, so these are tolerances,
// not bits. 'default' ran flash attention (AUTO), which keeps K·Q and the softmax weights in other precisions
// than our non-flash attention: that, not the weights, is the 1e-2..2e-1 there (f32kv: no flash attention).
const LOGIT_TOL: Record<string, number> = {
  'stories260K.gguf/default': 1e-2, 'stories260K.gguf/f32kv': 7e-6, // measured 9.04e-3, 6.22e-6
  'TinyStories-656K-Q8_0.gguf/default': 0.19, 'TinyStories-656K-Q8_0.gguf/f32kv': 6e-7, // 1.72e-1, 4.99e-7
  'TinyStories-656K.f16.gguf/default': 8e-3, 'TinyStories-656K.f16.gguf/f32kv': 7.7e-4, // 7.30e-3, 6.95e-4
};

for (const c of ref.cases) {
  for (const mode of ['default', 'f32kv'] as const) {
    test(`greedy ${c.model} "${c.prompt}" (${mode}), every step teacher-forced`, async (t) => {
      const file = openGguf(fixture(`models/${c.model}`));
      const tok = tokenizerFromGguf(file);
      assert.deepEqual(tok.tokenize(c.prompt, { addSpecial: true, parseSpecial: true }), c.prompt_ids, 'prompt tokenization');
      const model = loadModel(file, { device });
      const ctx = new Context(model, { nCtx: 256, kvType: mode === 'f32kv' ? 'f32' : 'f16' });
      const m = c[mode];
      let logits = await ctx.decode(c.prompt_ids);
      let maxLogitErr = 0;
      let nearTies = 0;
      for (let k = 0; k < m.generated_ids.length; k++) {
        if (k > 0) logits = await ctx.decode([m.generated_ids[k - 1]!]); // llama.cpp's token, whatever ours was
        const top = m.top5_per_step[k]!;
        for (const [id, l] of top) maxLogitErr = Math.max(maxLogitErr, Math.abs(logits[id]! - l));
        // our argmax must be llama.cpp's wherever its top-1 logit beats its top-2 by more than twice our error
        const ours = argmax(logits);
        if (top[0]![1] - top[1]![1] > 2 * LOGIT_TOL[`${c.model}/${mode}`]!) assert.equal(ours, m.generated_ids[k], `step ${k}: token ${ours}, llama.cpp ${m.generated_ids[k]}`);
        else nearTies++;
      }
      const tol = LOGIT_TOL[`${c.model}/${mode}`]!;
      t.diagnostic(`${c.model} "${c.prompt}" ${mode}: ${m.generated_ids.length} steps, max logit err ${maxLogitErr.toExponential(2)} (tolerance ${tol}), ${nearTies} near ties`);
      assert.ok(maxLogitErr <= tol, `logits differ by ${maxLogitErr} > ${tol}`);
      ctx.close();
      file.source.close?.();
    });
  }
}

test('GGUF v1 file gives the same tokens as the v3 file of the same weights', async () => {
  const run = async (name: string) => {
    const file = openGguf(fixture(`models/${name}`));
    const model = loadModel(file, { device });
    const ctx = new Context(model, { nCtx: 128 });
    const out: number[] = [];
    let logits = await ctx.decode([1, 403, 407, 261, 378]);
    for (let i = 0; i < 24; i++) { const t = argmax(logits); out.push(t); logits = await ctx.decode([t]); }
    return { version: file.version, out };
  };
  const v1 = await run('tinyllamas-stories-260k-f32.gguf');
  const v3 = await run('stories260K.gguf');
  assert.equal(v1.version, 1);
  assert.equal(v3.version, 3);
  assert.deepEqual(v1.out, v3.out);
});
