// Recurrent layers' state in a Context (lfm2 short conv, qwen35 Gated DeltaNet): allocated once per context,
// fixed in size whatever the length; clear() restarts it at zeros (the same prompt then gives the same logits
// bit for bit as in a fresh context); a partial truncate is refused with a typed error, as llama.cpp refuses
// partial removal for recurrent models, while truncating to the current length is allowed. A static-shape
// accelerator (sim-npu, which has none of the recurrent ops) leaves those layers to the cpu and never pads a
// prompt chunk, which would run the recurrent layers over the pad tokens: llama.cpp's tokens, same tolerances.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createCpuDevice } from '../../src/backends/cpu/device.js';
import { createSimNpu } from '../../src/backends/sim-npu/index.js';
import { openGguf } from '../../src/gguf/open.js';
import { loadModel } from '../../src/runtime/model.js';
import { Context, ContextError } from '../../src/runtime/context.js';
import { fixture } from '../helpers/fixtures.js';
import { MARGIN, readRef, runParity, tolerance } from '../helpers/parity.js';

const cpu = await createCpuDevice({ threads: 2 });
const npu = await createSimNpu({ threads: 1 });
after(async () => { await npu.close(); await cpu.close(); });

// state sizes from the fixtures' shapes (README): lfm2 3 conv layers of (3 - 1) x 128 values; 2 attention
// layers, 2 KV heads of 32. qwen35: 3 GDN layers with a (4 - 1) x 256 conv state and 4 heads of 32 x 32;
// 1 attention layer, 2 KV heads of 64. f32 states, f16 KV cache.
for (const [name, stateBytes, kvBytes] of [
  ['lfm2-q8_0', 3 * 2 * 128 * 4, 2 * 2 * 64 * 2],
  ['qwen35-q8_0', 3 * (3 * 256 + 4 * 32 * 32) * 4, 1 * 2 * 128 * 2],
] as const) {
  test(`${name}: fixed-size state, clear restarts it, partial truncate refused`, async () => {
    const file = openGguf(fixture(`parity/${name}.gguf`));
    try {
      const model = loadModel(file, { device: cpu });
      const prompt = readRef(name).sequences[0]!.prompt;
      const fresh = new Context(model, { nCtx: 64 });
      const want = Float32Array.from(await fresh.decode(prompt));
      fresh.close();
      const ctx = new Context(model, { nCtx: 64 });
      assert.equal(ctx.recurrentStateBytes, stateBytes);
      assert.equal(ctx.kvBytesPerToken, kvBytes);
      await ctx.decode(prompt);
      await ctx.decode([5, 6, 7]);
      const n = ctx.nPast;
      assert.throws(() => ctx.truncate(n - 2), (e: unknown) => e instanceof ContextError && e.code === 'RECURRENT_STATE');
      assert.equal(ctx.nPast, n, 'a refused truncate leaves the context as it was');
      ctx.truncate(n); // to the current length: nothing to roll back
      ctx.truncate(n + 10);
      assert.equal(ctx.nPast, n);
      ctx.clear();
      assert.equal(ctx.nPast, 0);
      const got = await ctx.decode(prompt);
      assert.deepEqual(new Uint32Array(got.buffer, got.byteOffset, got.length), new Uint32Array(want.buffer), 'the state after clear() is a fresh one');
      ctx.close();
    } finally {
      file.source.close?.();
    }
  });
}

for (const name of ['lfm2-q8_0', 'qwen35-q8_0']) {
  test(`${name}: prefill on sim-npu (static shapes 1 and 128): the recurrent layers fall back to the cpu, no pad tokens, llama.cpp's tokens`, async () => {
    const file = openGguf(fixture(`parity/${name}.gguf`));
    try {
      const ctx = await Context.create(loadModel(file, { device: cpu }), { nCtx: 256, devices: [npu, cpu], prefillDevice: npu, decodeDevice: cpu });
      const notes = ctx.sched.fallbacks.join('\n');
      assert.match(notes, name.startsWith('lfm2') ? /ssm_conv/ : /gated_delta_net|ssm_conv|l2_norm|softplus|sigmoid/);
      ctx.close();
    } finally {
      file.source.close?.();
    }
    const r = await runParity(name, cpu, tolerance('q8_0'), MARGIN, 'f16', { devices: [npu, cpu], prefillDevice: npu, decodeDevice: cpu });
    assert.ok(r.compared > 3 * 4, `${r.compared} steps compared`);
    assert.deepEqual(r.failures, [], r.failures.slice(0, 3).join('; '));
  });
}
