// One static compute arena per device (issue #9 item 1): a context sizes its arenas at creation for
// the worst case, so 500 random prompt lengths and a 200-turn chat leave the wasm memory exactly where
// the first turn put it, and the process RSS and the JS heap flat (the plan cache is bounded). Before:
// every new batch size added a plan and an arena for the context's whole life (60 lengths: wasm
// 2.4 -> 7.5 MiB). RSS is compared over the second half only: V8's JIT, its heap pages and malloc's
// arenas add ~40 MiB over the first 100-250 turns of any workload, then level off (measured on a
// shared 2-core machine: 69.9 MiB at turn 0, 108.7 at 100, 109.4 at 450; under heavy load the second
// half has moved by up to 19 MiB as V8 commits heap pages, hence the 32 MiB bound there: the exact
// guards are the wasm memory and the runtime's allocation top).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import v8 from 'node:v8';
import vm from 'node:vm';
import { createCpuDevice } from '../../src/backends/cpu/device.js';
import { openGguf } from '../../src/gguf/open.js';
import { loadModel } from '../../src/runtime/model.js';
import { Context } from '../../src/runtime/context.js';
import { createSampler } from '../../src/runtime/sampler.js';
import { generate } from '../../src/runtime/generate.js';
import { referenceDevice } from '../../src/backends/reference/device.js';
import { fixture } from '../helpers/fixtures.js';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

const device = await createCpuDevice({ threads: 2 });
after(() => device.close());

/** deterministic xorshift stream */
function rng(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => { x ^= x << 13; x ^= x >>> 17; x ^= x << 5; return (x >>> 0) / 2 ** 32; };
}
const mib = (n: number) => `${(n / 2 ** 20).toFixed(2)} MiB`;
const settle = () => { gc(); gc(); return { rss: process.memoryUsage().rss, heap: process.memoryUsage().heapUsed }; };

test('500 random prompt lengths: wasm memory flat after the first prompt, RSS and heap within noise', async () => {
  const file = openGguf(fixture('models/stories260K.gguf'));
  try {
    const model = loadModel(file, { device });
    const nBatch = 16;
    const ctx = new Context(model, { nCtx: 64, nBatch });
    const r = rng(7);
    const prompt = (n: number) => Array.from({ length: n }, () => 1 + Math.floor(r() * (ctx.nVocab - 1)));
    const turn = async (n: number) => { ctx.clear(); await ctx.decode(prompt(n)); await ctx.decode([5]); };
    await turn(1 + Math.floor(r() * 40)); // spans several batches when > nBatch
    const bytes1 = device.runtime.memory.buffer.byteLength, used1 = device.runtime.used();
    let m1 = settle();
    const lengths = new Set<number>();
    for (let i = 0; i < 499; i++) {
      const n = 1 + Math.floor(r() * 40);
      lengths.add(n);
      await turn(n);
      assert.equal(device.runtime.memory.buffer.byteLength, bytes1, `wasm memory grew at prompt ${i + 2} (${n} tokens)`);
      if (i === 249) m1 = settle();
    }
    const m2 = settle();
    console.log(`${lengths.size} distinct lengths: wasm ${mib(bytes1)} (used ${mib(used1)}); from turn 250: RSS ${mib(m1.rss)} -> ${mib(m2.rss)}; heap ${mib(m1.heap)} -> ${mib(m2.heap)}`);
    assert.equal(lengths.size, 40);
    assert.equal(device.runtime.used(), used1, 'the runtime allocated after the first prompt');
    // one plan per shape kept for the context's life cost ~0.1-0.5 MiB of JS heap each on this model
    assert.ok(m2.heap - m1.heap < 2 * 2 ** 20, `JS heap grew by ${mib(m2.heap - m1.heap)}`);
    assert.ok(m2.rss - m1.rss < 32 * 2 ** 20, `RSS grew by ${mib(m2.rss - m1.rss)}`);
    ctx.close();
  } finally {
    file.source.close?.();
  }
});

test('200-turn chat through generate(): wasm memory flat after the first turn, RSS and heap within noise', async () => {
  const file = openGguf(fixture('models/stories260K.gguf'));
  try {
    const model = loadModel(file, { device });
    const ctx = new Context(model, { nCtx: 256, nBatch: 32 });
    const r = rng(11);
    const sampler = createSampler(ctx.nVocab, { seed: 3, temp: 0.8 });
    const turn = async () => {
      // a new user message every turn (a new prompt length), a short reply; reset when the context is full, as chat does
      const n = 2 + Math.floor(r() * 30);
      if (ctx.nPast + n + 5 > ctx.nCtx) ctx.clear();
      const msg = Array.from({ length: n }, () => 1 + Math.floor(r() * (ctx.nVocab - 1)));
      const res = await generate(ctx, null, msg, { nPredict: 4, sampler, stopAtEog: false });
      assert.equal(res.tokens.length, 4);
    };
    await turn();
    const bytes1 = device.runtime.memory.buffer.byteLength, used1 = device.runtime.used();
    let m1 = settle();
    for (let i = 0; i < 199; i++) {
      await turn();
      assert.equal(device.runtime.memory.buffer.byteLength, bytes1, `wasm memory grew at turn ${i + 2}`);
      if (i === 99) m1 = settle();
    }
    const m2 = settle();
    console.log(`chat: wasm ${mib(bytes1)}; from turn 100: RSS ${mib(m1.rss)} -> ${mib(m2.rss)}; heap ${mib(m1.heap)} -> ${mib(m2.heap)}`);
    assert.equal(device.runtime.memory.buffer.byteLength, bytes1, 'wasm memory grew after the first turn');
    assert.equal(device.runtime.used(), used1, 'the runtime allocated after the first turn');
    assert.ok(m2.heap - m1.heap < 2 * 2 ** 20, `JS heap grew by ${mib(m2.heap - m1.heap)}`);
    assert.ok(m2.rss - m1.rss < 32 * 2 ** 20, `RSS grew by ${mib(m2.rss - m1.rss)}`);
    ctx.close();
  } finally {
    file.source.close?.();
  }
});

test('every shape is placed inside the arenas reserved at creation, and logits do not depend on the plan cache', async () => {
  const file = openGguf(fixture('parity/qwen2-q8_0.gguf'));
  const model = loadModel(file, { device: referenceDevice() });
  const a = new Context(model, { nCtx: 64, nBatch: 16, maxPlans: 1 });
  const arena = a.sched.arenaBytes().get('reference')!;
  const b = new Context(model, { nCtx: 64, nBatch: 16 });
  const prompt = [1, 403, 407, 261, 378, 432, 383, 286, 300, 301, 302, 303, 304, 305, 306, 307, 308, 309, 310];
  for (const n of [3, 19, 1, 7, 16, 2, 19]) {
    a.clear(); b.clear();
    const la = Float32Array.from(await a.decode(prompt.slice(0, n), true));
    const lb = await b.decode(prompt.slice(0, n), true);
    assert.deepEqual(Array.from(la), Array.from(lb), `logits of a ${n}-token prompt`);
    assert.equal(a.sched.arenaBytes().get('reference'), arena);
  }
  a.close(); b.close();
  file.source.close?.();
});

test('close() returns the memory: 20 contexts created, used and closed in turn leave the wasm memory and its live bytes unchanged', async () => {
  const file = openGguf(fixture('models/stories260K.gguf'));
  try {
    const model = loadModel(file, { device });
    const cycle = async (nCtx: number) => {
      const ctx = new Context(model, { nCtx, nBatch: 32 });
      await ctx.decode(Array.from({ length: 20 }, (_, i) => 1 + i));
      await ctx.decode([7]);
      ctx.close();
    };
    await cycle(256); // the runtime's own scratch (kept across contexts) reaches its size here
    const live = device.runtime.liveBytes(), bytes = device.runtime.memory.buffer.byteLength;
    for (let i = 0; i < 20; i++) await cycle(128 + 64 * (i % 3));
    assert.equal(device.runtime.liveBytes(), live, 'a closed context left live allocations');
    assert.equal(device.runtime.memory.buffer.byteLength, bytes, 'wasm memory grew over create/close cycles');
  } finally {
    file.source.close?.();
  }
});
