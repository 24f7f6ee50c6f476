// The cpu device allocates nothing per decoded token: one real decode step of a fixture model is captured
// at the device (the splits the scheduler hands it, with their placements), then computed 1,000 more times
// while V8 is watched: no young-generation (scavenge) collection may happen and the new space may not grow
// (any object allocated per step, 12 bytes at least, would show as 12 KB against a bound of 10 KB). Covers the WASM kernels and the reference
// fallbacks the device runs: gemma2 (softcap attention and logits, geglu), gemma3 (geglu), and exact
// numerics (Q4_0/Q4_K weights with rows % 8 != 0 take the reference matmul). The scheduler/context side of
// a decode step is proven in test/runtime/decode-noalloc.test.ts.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { probeAllocation } from '../../helpers/alloc-probe.js';
import v8 from 'node:v8';
import type { Backend, ComputeContext, Device } from '../../../src/backends/backend.js';
import { createCpuDevice } from '../../../src/backends/cpu/device.js';
import { openGguf } from '../../../src/gguf/open.js';
import { loadModel } from '../../../src/runtime/model.js';
import { Context } from '../../../src/runtime/context.js';
import { argmax } from '../../../src/runtime/sampler.js';
import { fixture } from '../../helpers/fixtures.js';

const fast = await createCpuDevice({ threads: 2 });
const exact = await createCpuDevice({ threads: 2, numerics: 'exact' });
after(async () => { await fast.close(); await exact.close(); });

type Compute = Backend['compute'];
/** Records every compute call the device's backends get (the backend's own compute, context, nodes). */
function recordCalls(device: Device): { calls: [Compute, ComputeContext, readonly number[]][]; restore(): void } {
  const calls: [Compute, ComputeContext, readonly number[]][] = [];
  const create = device.createBackend;
  (device as { createBackend: () => Backend }).createBackend = () => {
    const b = create.call(device);
    const compute = b.compute.bind(b);
    b.compute = (ctx: ComputeContext, nodes: readonly number[]) => { calls.push([compute, ctx, nodes]); return compute(ctx, nodes); };
    return b;
  };
  return { calls, restore: () => { (device as { createBackend: () => Backend }).createBackend = create; } };
}

// Optimized code is what allocates nothing (unoptimized code boxes every double it computes): compile it on
// the main thread as soon as functions are hot, so a loaded machine starving V8's background compiler cannot
// leave the measured steps running unoptimized.
v8.setFlagsFromString('--no-concurrent-recompilation');
v8.setFlagsFromString('--no-concurrent-osr');


for (const [name, numerics, attn] of ([['qwen3-q4_k_m', 'fast'], ['llama-q8_0', 'fast'], ['gemma2-q4_0', 'fast'], ['gemma3-q4_k_m', 'fast'],
  ['qwen3-q4_k_m', 'exact'], ['gemma2-q4_k', 'exact'], ['gemma3-q4_0', 'exact'],
  // flash attention: the attn_flash kernel (softcap: gemma2; sliding window: gemma3). (An f32 cache takes the
  // reference flashAttention, whose glibc expf/tanhf calls box their doubles: not allocation-free, not covered.)
  ['qwen3-q4_k_m', 'fast', 'fa'], ['gemma2-q4_0', 'fast', 'fa'], ['gemma3-q4_k_m', 'exact', 'fa'], ['lfm2-q4_0', 'fast', 'fa'], ['gemma4-q4_0', 'fast', 'fa']] as const).map((e) => [e[0], e[1], (e as readonly string[])[2] ?? ''] as const)) {
  test(`cpu device, ${name} (${numerics}${attn ? `, ${attn}` : ''}): 1,000 decode steps allocate nothing`, async () => {
    const device = numerics === 'fast' ? fast : exact;
    const file = openGguf(fixture(`parity/${name}.gguf`));
    const rec = recordCalls(device);
    try {
      const model = loadModel(file, { device });
      const ctx = new Context(model, { nCtx: 256, ...(attn ? { flashAttn: 'on' as const } : {}), });
      let logits = await ctx.decode([1, 2, 3, 4, 5]);
      logits = await ctx.decode([argmax(logits)]);
      rec.calls.length = 0;
      await ctx.decode([argmax(logits)]); // the step replayed below
      const step = rec.calls.slice();
      assert.ok(step.length > 0, 'the decode step reached the cpu device');
      const run = () => { for (let i = 0; i < step.length; i++) void step[i]![0](step[i]![1], step[i]![2]); };
      const { grown, scavenges } = await probeAllocation(run, 20);
      console.log(`# ${name} ${numerics} ${attn}: ${step.length} splits, new space +${grown} bytes over 1,000 steps, ${scavenges} scavenges`);
      assert.equal(scavenges, 0, `${scavenges} young-generation collections during 1,000 decode steps`);
      assert.ok(grown < 10240, `the new space grew by ${grown} bytes over 1,000 decode steps`);
      ctx.close();
    } finally {
      rec.restore();
      file.source.close?.();
    }
  });
}
