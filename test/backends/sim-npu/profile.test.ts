// The profile of prefill on sim-npu and decode on cpu: every prefill matmul ran on sim-npu (with
// simulated time), every decode op on the cpu, and the KV hand-over to the decode device moved exactly
// the prompt's K/V rows (not the padding of the 128-token static shape), with simulated link time.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createCpuDevice } from '../../../src/backends/cpu/device.js';
import { createSimNpu } from '../../../src/backends/sim-npu/index.js';
import { openGguf } from '../../../src/gguf/open.js';
import { loadModel } from '../../../src/runtime/model.js';
import { Context } from '../../../src/runtime/context.js';
import { Profiler } from '../../../src/sched/profile.js';
import { fixture } from '../../helpers/fixtures.js';

const cpu = await createCpuDevice({ threads: 2 });
const npu = await createSimNpu({ threads: 1 });
after(async () => { await npu.close(); await cpu.close(); });

for (const name of ['llama-q4_0', 'gemma3-q8_0']) {
  test(`${name}: profile of a prompt on sim-npu and 4 decode steps on cpu`, async () => {
    const file = openGguf(fixture(`parity/${name}.gguf`));
    try {
      const model = loadModel(file, { device: cpu });
      const hp = model.hp;
      const profiler = new Profiler();
      const ctx = await Context.create(model, { nCtx: 256, devices: [npu, cpu], prefillDevice: npu, decodeDevice: cpu, profiler });
      const prompt = [1, 403, 407, 261, 378, 432, 383, 286, 261, 376, 298, 315, 421];
      await ctx.decode(prompt);
      for (const t of [300, 301, 302, 303]) await ctx.decode([t]);
      const r = profiler.report();
      ctx.close();
      const prefillMatmuls = r.ops.filter((o) => o.phase === 'prefill' && o.op === 'mul_mat');
      // the embedding lookup (get_rows) is host work; every matmul of the prefill is an engine's
      assert.deepEqual(prefillMatmuls.map((o) => o.device), ['sim-npu'], JSON.stringify(prefillMatmuls));
      assert.ok(prefillMatmuls[0]!.sim_ms !== null && prefillMatmuls[0]!.sim_ms > 0);
      const decodeDevices = new Set(r.ops.filter((o) => o.phase === 'decode').map((o) => o.device));
      assert.deepEqual([...decodeDevices], ['cpu']);
      assert.equal(r.phases.prefill.tokens, prompt.length);
      assert.equal(r.phases.decode.tokens, 4);
      // K and V rows of every layer for the prompt's positions, f16
      const kvBytes = hp.nLayer * prompt.length * (hp.nHeadKv * hp.headDimK + hp.nHeadKv * hp.headDimV) * 2;
      assert.equal(r.kv_handover.to_decode.bytes, kvBytes);
      assert.equal(r.kv_handover.to_prefill.bytes, 0);
      // PCIe Gen2 x1 (ax8850): the hand-over's simulated time is its bytes over 0.5 GB/s plus 50 us a copy
      const h = r.kv_handover.to_decode;
      assert.ok(Math.abs(h.sim_ms - 1000 * (kvBytes / 0.5e9 + h.copies * 50e-6)) < 1e-6, JSON.stringify(h));
    } finally {
      file.source.close?.();
    }
  });
}
