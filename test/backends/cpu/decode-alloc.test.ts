// Decoding allocates nothing that lasts: 400 one-token steps of a real fixture model on the cpu
// device leave the wasm memory's high-water mark where the first step put it, and the JS heap
// (after a full GC) flat between step 100 (once the JIT has settled: it moves the heap by a few
// hundred KiB before) and step 400; a leak of even one typed-array view per op would show.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import v8 from 'node:v8';
import vm from 'node:vm';
import { createCpuDevice } from '../../../src/backends/cpu/device.js';
import { openGguf } from '../../../src/gguf/open.js';
import { loadModel } from '../../../src/runtime/model.js';
import { Context } from '../../../src/runtime/context.js';
import { argmax } from '../../../src/runtime/sampler.js';
import { fixture } from '../../helpers/fixtures.js';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

const device = await createCpuDevice({ threads: 2 });
after(() => device.close());

for (const name of ['qwen3-q4_k_m', 'llama-q8_0']) {
  test(`400 decode steps of ${name}: wasm high-water mark and JS heap flat`, async () => {
    const file = openGguf(fixture(`parity/${name}.gguf`));
    try {
      const model = loadModel(file, { device });
      const ctx = new Context(model, { nCtx: 512 });
      let logits = await ctx.decode([1, 2, 3]);
      let used1 = 0, heap100 = 0;
      for (let step = 1; step <= 400; step++) {
        logits = await ctx.decode([argmax(logits)]);
        if (step === 1) used1 = device.runtime.used();
        if (step === 100) { gc(); gc(); heap100 = process.memoryUsage().heapUsed; }
      }
      gc(); gc();
      const heap400 = process.memoryUsage().heapUsed;
      assert.equal(device.runtime.used(), used1, 'wasm memory grew after the first decode step');
      const growth = heap400 - heap100;
      console.log(`${name}: wasm used ${(used1 / 2 ** 20).toFixed(1)} MiB; JS heap after GC step 100 ${(heap100 / 2 ** 20).toFixed(2)} MiB, step 400 ${(heap400 / 2 ** 20).toFixed(2)} MiB (${growth >= 0 ? '+' : ''}${(growth / 1024).toFixed(0)} KiB)`);
      // V8's own bookkeeping (optimized code, feedback) moves the heap by up to ~300 KiB under load; one
      // leaked typed-array view per op (~60 ops a token) would add ~1.4 MiB over these 300 steps.
      assert.ok(growth < 1024 * 1024, `JS heap grew by ${(growth / 1024).toFixed(0)} KiB over 300 decode steps`);
      ctx.close();
    } finally {
      file.source.close?.();
    }
  });
}
