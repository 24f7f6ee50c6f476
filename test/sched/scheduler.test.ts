// The scheduler with two devices: an accelerator-like device that only takes matmuls for
// batches >= 4, and the reference device for the rest. Splits, cross-device copies and the
// phase policy must not change a single bit of the result.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Device } from '../../src/backends/backend.js';
import { referenceDevice } from '../../src/backends/reference/device.js';
import { hostBufferType } from '../../src/backends/host-buffer.js';
import { openGguf } from '../../src/gguf/open.js';
import { loadModel } from '../../src/runtime/model.js';
import { Context } from '../../src/runtime/context.js';
import { planArena } from '../../src/sched/arena.js';
import { fixture } from '../helpers/fixtures.js';

/** A second device with its own buffers that runs only mul_mat (and prefers it for batches >= 4). */
function matmulOnlyDevice(): Device {
  const ref = referenceDevice();
  const bt = hostBufferType('accel-host');
  const dev: Device = {
    name: 'accel',
    kind: 'sim',
    description: 'test accelerator: matmul only, batch >= 4',
    memory: () => ({ free: 0, total: 0 }),
    bufferType: () => bt,
    supportsOp: (n) => n.op === 'mul_mat',
    prefersOp: (_n, _g, batch) => batch >= 4,
    createBackend: () => ({ device: dev, compute: (ctx, nodes) => ref.createBackend().compute(ctx, nodes) }),
  };
  return dev;
}

test('arena plan: overlapping lifetimes never share bytes, disjoint ones reuse', () => {
  const p = planArena([
    { id: 1, size: 100, first: 0, last: 2 },
    { id: 2, size: 100, first: 1, last: 3 },
    { id: 3, size: 100, first: 3, last: 4 }, // can reuse 1's bytes
  ], 64);
  assert.notEqual(p.offsets.get(1), p.offsets.get(2));
  assert.equal(p.offsets.get(3), p.offsets.get(1));
  assert.equal(p.size, 256);
});

test('two devices: prompt matmuls on the accelerator, decode on the reference device, identical logits', async () => {
  const file = openGguf(fixture('parity/qwen2-q8_0.gguf'));
  const ref = referenceDevice();
  const accel = matmulOnlyDevice();
  const model = loadModel(file, { device: ref });
  const prompt = [1, 403, 407, 261, 378, 432, 383, 286];
  const single = new Context(model, { nCtx: 64 });
  const a1 = Float32Array.from(await single.decode(prompt));
  const a2 = Float32Array.from(await single.decode([300]));
  const split = new Context(model, { nCtx: 64, devices: [accel, ref] });
  const prefill = split.describePlan(prompt.length);
  assert.ok(prefill.some((s) => s.device === 'accel') && prefill.some((s) => s.device === 'reference'), JSON.stringify(prefill));
  assert.deepEqual(split.describePlan(1).map((s) => s.device), ['reference']);
  const b1 = await split.decode(prompt);
  assert.deepEqual(Array.from(b1), Array.from(a1));
  const b2 = await split.decode([300]);
  assert.deepEqual(Array.from(b2), Array.from(a2));
  single.close();
  split.close();
});

test('phase policy: --prefill-device forces every op the device supports onto it', async () => {
  const file = openGguf(fixture('parity/llama-f16.gguf'));
  const ref = referenceDevice();
  const accel = matmulOnlyDevice();
  const model = loadModel(file, { device: ref });
  const ctx = new Context(model, { nCtx: 32, devices: [ref, accel], prefillDevice: accel });
  const splits = ctx.describePlan(3);
  assert.ok(splits.filter((s) => s.device === 'accel').length >= 2);
  const out = await ctx.decode([1, 2, 3]);
  const base = new Context(model, { nCtx: 32 });
  assert.deepEqual(Array.from(out), Array.from(await base.decode([1, 2, 3])));
});
