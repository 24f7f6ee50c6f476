// The example plug-in device in a real model run: loaded from its path into the registry, listed ahead
// of the cpu device, it takes the nodes it claims (F16 matmuls, norms, elementwise ops) and every other
// node (embedding lookup, rope, attention, ...) falls back to the cpu device. The greedy tokens must be
// llama.cpp's own (the recorded reference), prompt and 32 decode steps.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadDevicePlugin } from '../../../src/backends/plugins.js';
import { closeDevices, getDevice } from '../../../src/backends/registry.js';
import { openGguf } from '../../../src/gguf/open.js';
import { Context } from '../../../src/runtime/context.js';
import { loadModel } from '../../../src/runtime/model.js';
import { fixture, repoRoot } from '../../helpers/fixtures.js';

await loadDevicePlugin(resolve(repoRoot, 'examples/device-plugin/host-f32.js'));
after(() => closeDevices());

test('host-f32 plug-in + cpu fallback: llama.cpp greedy tokens on TinyStories-656K.f16', async () => {
  const plugin = await getDevice('host-f32');
  const cpu = await getDevice('cpu', { threads: 2 });
  const model = loadModel(openGguf(fixture('models/TinyStories-656K.f16.gguf')), { device: cpu });
  const ctx = new Context(model, { nCtx: 128, devices: [plugin, cpu] });
  const greedy = JSON.parse(readFileSync(fixture('reference/greedy-llama.cpp.json'), 'utf8'));
  const c = greedy.cases.find((x: { model: string }) => x.model === 'TinyStories-656K.f16.gguf');
  assert.ok(c, 'no TinyStories-656K.f16 case in the greedy reference');

  // both devices run part of every plan, the plug-in only what it claims
  for (const nTok of [c.prompt_ids.length, 1]) {
    const splits = ctx.describePlan(nTok);
    const on = (d: string) => splits.filter((s) => s.device === d).reduce((a, s) => a + s.nodes, 0);
    assert.ok(on('host-f32') > 0 && on('cpu') > 0, `${nTok} tokens: ${JSON.stringify(splits)}`);
  }

  const argmax = (l: Float32Array) => { let b = 0; for (let j = 1; j < l.length; j++) if (l[j]! > l[b]!) b = j; return b; };
  let logits = await ctx.decode(c.prompt_ids);
  const out: number[] = [];
  while (out.length < c.default.generated_ids.length) {
    out.push(argmax(logits));
    logits = await ctx.decode([out[out.length - 1]!]);
  }
  assert.deepEqual(out, c.default.generated_ids);
});
