// The benchmark peer is wired right: node-llama-cpp's prebuilt llama.cpp loads offline (nothing
// built or downloaded), reproduces a recorded parity greedy token, and loads our synthetic models.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Token } from 'node-llama-cpp';
import { importPeer } from '../../bench/peers.js';
import { needPeers } from '../helpers/peers.js';

// llama.cpp comes from the optional peer setup (peers/, `npm run setup:peers`)
const nodeLlamaCpp = () => importPeer<typeof import('node-llama-cpp')>('node-llama-cpp');
async function getLlama() {
  const { getLlama: get, LlamaLogLevel } = await nodeLlamaCpp();
  return get({ gpu: false, build: 'never', skipDownload: true, logLevel: LlamaLogLevel.error });
}
import { getDevice } from '../../src/backends/registry.js';
import { openGguf } from '../../src/gguf/open.js';
import { Context } from '../../src/runtime/context.js';
import { loadModel } from '../../src/runtime/model.js';
import { syntheticModel } from '../../src/bench/synthetic.js';
import { fixture } from '../helpers/fixtures.js';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

// a full garbage collection on demand (--expose-gc, set at run time: a new context then sees `gc`)
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

const cacheDir = mkdtempSync(join(tmpdir(), 'gguf-edge-peer-'));
process.on('exit', () => rmSync(cacheDir, { recursive: true, force: true }));

async function llamaNext(llama: Awaited<ReturnType<typeof getLlama>>, path: string, prompt: number[]): Promise<number> {
  const model = await llama.loadModel({ modelPath: path });
  const ctx = await model.createContext({ contextSize: 256, threads: 1, flashAttention: false });
  try {
    const seq = ctx.getSequence();
    const toks = prompt as unknown as Token[];
    const res = await seq.controlledEvaluate([...toks.slice(0, -1), [toks[toks.length - 1]!, { generateNext: { token: true, options: { temperature: 0 } } }]]);
    return res[res.length - 1]!.next!.token! as unknown as number;
  } finally {
    await ctx.dispose();
    await model.dispose();
  }
}

test('node-llama-cpp (prebuilt, offline) reproduces llama-f32 greedy and loads a synthetic model', async (t) => {
  if (!needPeers(t, 'node-llama-cpp')) return;
  const llama = await getLlama();
  try {
    assert.equal(llama.gpu, false);
    const ref = JSON.parse(readFileSync(fixture('parity/llama-f32.ref.json'), 'utf8'));
    for (const seq of ref.sequences.slice(0, 2)) {
      assert.equal(await llamaNext(llama, fixture('parity/llama-f32.gguf'), seq.prompt), seq.continuation[0]);
    }
    // a synthetic Q4_K_M model: llama.cpp loads it and agrees with our reference device on the greedy token
    const { path } = syntheticModel('tiny-qwen3', 'q4_k_m', { cacheDir });
    const prompt = [1, 300, 301, 302, 303];
    const theirs = await llamaNext(llama, path, prompt);
    const f = openGguf(path);
    const ctx = new Context(loadModel(f, { device: await getDevice('reference') }), { nCtx: 32 });
    const logits = await ctx.decode(prompt);
    ctx.close();
    f.source.close?.();
    const order = Array.from(logits.keys()).sort((a, b) => logits[b]! - logits[a]!);
    if (logits[order[0]!]! - logits[order[1]!]! > 1e-2) assert.equal(theirs, order[0]);
    else assert.ok(order.slice(0, 2).includes(theirs));
  } finally {
    await llama.dispose();
  }
});

test('llama.cpp loads the synthetic q5_k_m, q3_k_m, q6_k and iq4_xs mixes and agrees with the reference device', async (t) => {
  if (!needPeers(t, 'node-llama-cpp')) return;
  const llama = await getLlama();
  try {
    const prompt = [1, 300, 301, 302, 303];
    for (const mix of ['q5_k_m', 'q3_k_m', 'q6_k', 'iq4_xs'] as const) {
      const { path } = syntheticModel('tiny-qwen3', mix, { cacheDir });
      const theirs = await llamaNext(llama, path, prompt);
      const f = openGguf(path);
      const ctx = new Context(loadModel(f, { device: await getDevice('reference') }), { nCtx: 32 });
      const logits = await ctx.decode(prompt);
      ctx.close();
      f.source.close?.();
      const order = Array.from(logits.keys()).sort((a, b) => logits[b]! - logits[a]!);
      if (logits[order[0]!]! - logits[order[1]!]! > 1e-2) assert.equal(theirs, order[0], mix);
      else assert.ok(order.slice(0, 2).includes(theirs), mix);
    }
  } finally {
    await llama.dispose();
  }
});

test("bench:compare's llama-bench timing decodes whole batches into the sequence's KV cells and clears them", async (t) => {
  if (!needPeers(t, 'node-llama-cpp')) return;
  const { llamaBenchTimer, checkPositions } = await import('../../bench/llamacpp-timing.js');
  const llama = await getLlama();
  try {
    const { path } = syntheticModel('tiny-qwen3', 'q4_k_m', { cacheDir });
    const model = await llama.loadModel({ modelPath: path });
    // a context of exactly the batch: controlledEvaluate would split it (one cell kept free), one decode does not
    const ctx = await model.createContext({ contextSize: 256, batchSize: 256, threads: 1, flashAttention: true, sequences: 1 });
    try {
      // the sequence object is not kept here: the timer must hold it, or node-llama-cpp's FinalizationRegistry
      // disposes the sequence's cells when the collector takes it (bench:compare failed at random on that)
      const tm = llamaBenchTimer(ctx, ctx.getSequence());
      assert.equal(tm.maxPosition(), -1);
      const toks = Uint32Array.from({ length: 256 }, (_, i) => 3 + ((i * 37) % 500));
      for (let rep = 0; rep < 2; rep++) {
        await tm.decode(toks, 0);
        for (let i = 0; i < 2; i++) { collectGarbage(); await new Promise((r) => setTimeout(r, 50)); }
        assert.doesNotThrow(() => checkPositions(tm, 0, 255), 'the whole batch is in the cache, also after a garbage collection');
        tm.clear();
        assert.equal(tm.maxPosition(), -1, 'cleared');
      }
      for (let i = 0; i < 4; i++) await tm.decode(toks.subarray(i, i + 1), i);
      assert.equal(tm.maxPosition(), 3);
      // a depth kept between runs (bench -d): the cells from a position on dropped, the ones before kept
      await tm.decode(toks.subarray(4, 100), 4);
      tm.truncate(64);
      assert.equal(tm.maxPosition(), 63);
      await tm.decode(toks.subarray(64, 65), 64);
      assert.equal(tm.maxPosition(), 64);
    } finally {
      await ctx.dispose();
      await model.dispose();
    }
  } finally {
    await llama.dispose();
  }
});
