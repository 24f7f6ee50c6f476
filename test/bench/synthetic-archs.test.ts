// The synthetic qwen35 (Gated DeltaNet hybrid) and qwen3moe (MoE) benchmark models: laid out exactly as the
// llama.cpp-rule parity fixtures (names, order, dims, per-tensor Q4_K_M types, metadata keys), and a reduced
// version of each bench shape (its real layer width; fewer layers, experts and vocab) loads in our engine and in
// llama.cpp v0.4.0 (node-llama-cpp): finite logits, next-token probabilities within 2e-2 of llama.cpp's and the
// same greedy token wherever llama.cpp's top-2 gap exceeds 2e-2, over a prompt batch and 3 decode steps.
// Not bit-exact: at these real dims both archs differ from llama.cpp by up to ~5e-3 in probability (measured
// 2026-12-02; dense qwen3 at dim 1024 agrees to 1e-7 the same way), which the parity fixtures' small dims
// do not show; NOTES.md has it as an open item.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Token } from 'node-llama-cpp';
import { openGguf } from '../../src/gguf/open.js';
import { ggmlTypeName } from '../../src/gguf/ggml-types.js';
import { getDevice } from '../../src/backends/registry.js';
import { loadModel } from '../../src/runtime/model.js';
import { Context } from '../../src/runtime/context.js';
import { SHAPES, type ModelShape } from '../../src/bench/shapes.js';
import { syntheticMetadata, syntheticTensors, writeSyntheticModel } from '../../src/bench/synthetic.js';
import { importPeer } from '../../bench/peers.js';
import { needPeers } from '../helpers/peers.js';
import { fixture } from '../helpers/fixtures.js';

const tmp = mkdtempSync(join(tmpdir(), 'gguf-edge-synth-archs-'));
process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));

// the parity fixtures' dims (../shared/fixtures/parity/README.md)
const base = { nVocab: 512, nCtxTrain: 512, eps: 1e-6 };
const FIXTURE_SHAPES: [string, ModelShape][] = [
  ['qwen35-q4_k_m', {
    ...base, name: 'q35', arch: 'qwen35', nEmbd: 256, nLayer: 4, nHead: 4, nHeadKv: 2, headDim: 128, nFf: 256, ropeBase: 1e7, tied: true,
    ropeDims: 32, ropeSections: [6, 5, 5, 0], deltaNet: { convKernel: 4, stateSize: 64, nHeadK: 2, nHeadV: 4, fullAttentionInterval: 4 },
  }],
  ['qwen3moe-q4_k_m', {
    ...base, name: 'q3m', arch: 'qwen3moe', nEmbd: 256, nLayer: 2, nHead: 4, nHeadKv: 2, headDim: 128, nFf: 512, ropeBase: 1e6, tied: false,
    moe: { nExpert: 6, nExpertUsed: 3, nFfExp: 256 },
  }],
];

test('synthetic qwen35 / qwen3moe Q4_K_M: the tensors (order, dims, types) and metadata keys of the parity fixtures', () => {
  for (const [name, shape] of FIXTURE_SHAPES) {
    const f = openGguf(fixture(`parity/${name}.gguf`));
    const theirs = f.tensors.map((t) => `${t.name} ${t.dims.join('x')} ${ggmlTypeName(t.type)}`);
    const theirKeys = [...f.metadata.keys()].sort();
    f.source.close?.();
    const ours = syntheticTensors(shape, 'q4_k_m').map((t) => `${t.name} ${t.dims.join('x')} ${ggmlTypeName(t.type)}`);
    assert.deepEqual(ours, theirs, name);
    assert.deepEqual(syntheticMetadata(shape, 'q4_k_m', 1).map(([k]) => k).sort(), theirKeys, name);
  }
});

/** A bench shape cut down for a test: the real layer width, fewer layers / experts / vocab. */
function reduced(shape: ModelShape, nLayer: number, nVocab: number, nExpert?: number): ModelShape {
  return { ...shape, name: `${shape.name}-reduced`, nLayer, nVocab, moe: shape.moe && nExpert ? { ...shape.moe, nExpert } : shape.moe };
}

const nodeLlamaCpp = () => importPeer<typeof import('node-llama-cpp')>('node-llama-cpp');

test('reduced qwen3.5-0.8b and qwen3-30b-a3b-4l shapes (Q4_K_M): our engine and llama.cpp load them and agree on greedy tokens', async (t) => {
  if (!needPeers(t, 'node-llama-cpp')) return;
  const { getLlama, LlamaLogLevel } = await nodeLlamaCpp();
  const llama = await getLlama({ gpu: false, build: 'never', skipDownload: true, logLevel: LlamaLogLevel.error });
  const cases: ModelShape[] = [
    reduced(SHAPES['qwen3.5-0.8b']!, 4, 1024), // 3 Gated DeltaNet layers + 1 attention layer
    reduced(SHAPES['qwen3-30b-a3b-4l']!, 2, 1024, 16), // top-8 of 16 experts
  ];
  try {
    for (const shape of cases) {
      const path = join(tmp, `${shape.name}.gguf`);
      writeSyntheticModel(path, shape, 'q4_k_m');
      // a prompt batch, then 3 one-token steps (a fixed continuation: both engines see the same tokens)
      const prompt = [1, 300, 301, 302, 303, 304], cont = [100, 200, 300];
      const model = await llama.loadModel({ modelPath: path });
      const lctx = await model.createContext({ contextSize: 64, threads: 2, flashAttention: false });
      let theirs: Map<Token, number>[];
      try {
        const feed = [...prompt, ...cont] as unknown as Token[];
        const res = await lctx.getSequence().controlledEvaluate(feed.map((tok, i) => (i >= prompt.length - 1 ? [tok, { generateNext: { probabilities: true } }] as const : tok)));
        theirs = res.slice(prompt.length - 1).map((r) => r!.next!.probabilities!);
      } finally {
        await lctx.dispose();
        await model.dispose();
      }
      // ours on the reference device (the plain-TS oracle)
      const f = openGguf(path);
      const ctx = new Context(loadModel(f, { device: await getDevice('reference') }), { nCtx: 64 });
      let clear = 0;
      try {
        let logits = await ctx.decode(prompt);
        for (let i = 0; i <= cont.length; i++) {
          assert.equal(logits.length, shape.nVocab);
          let mx = -Infinity;
          for (const v of logits) { assert.ok(Number.isFinite(v), `${shape.name} step ${i}: non-finite logit`); mx = Math.max(mx, v); }
          let z = 0;
          for (const v of logits) z += Math.exp(v - mx);
          const p = theirs[i]!;
          let maxDiff = 0;
          for (const [tok, q] of p) maxDiff = Math.max(maxDiff, Math.abs(Math.exp(logits[tok as unknown as number]! - mx) / z - q));
          assert.ok(maxDiff < 2e-2, `${shape.name} step ${i}: probabilities differ by ${maxDiff}`);
          const [t1, t2] = [...p.entries()].sort((x, y) => y[1] - x[1]);
          const ours = Array.from(logits.keys()).reduce((b, k) => (logits[k]! > logits[b]! ? k : b), 0);
          if (t1![1] - t2![1] > 2e-2) { assert.equal(ours, t1![0] as unknown as number, `${shape.name} step ${i}: greedy token`); clear++; }
          if (i < cont.length) logits = await ctx.decode([cont[i]!]);
        }
      } finally {
        ctx.close();
        f.source.close?.();
      }
      assert.ok(clear >= cont.length, `${shape.name}: only ${clear} of ${cont.length + 1} steps had a clear top-2 gap`);
      rmSync(path, { force: true });
    }
  } finally {
    await llama.dispose();
  }
});
