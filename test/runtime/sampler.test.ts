// The sampler chain against direct computations of what each llama.cpp sampler keeps.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createSampler, argmax, topProbs } from '../../src/runtime/sampler.js';
import { Mt19937 } from '../../src/runtime/rng.js';

test('mt19937 matches the C++ standard reference value', () => {
  // the C++ standard requires the 10000th output of a default-seeded mt19937 (seed 5489) to be 4123659995
  const r = new Mt19937(5489);
  let v = 0;
  for (let i = 0; i < 10000; i++) v = r.nextU32();
  assert.equal(v, 4123659995);
});

test('temperature 0 is argmax with the lowest id on ties', () => {
  const s = createSampler(5, { temp: 0 });
  assert.equal(s.sample(Float32Array.of(1, 3, 2, 3, 0)), 1);
  assert.equal(argmax(Float32Array.of(-1, -1)), 0);
});

test('top-k 1 is greedy whatever the temperature; same seed, same tokens', () => {
  const logits = Float32Array.from({ length: 100 }, (_, i) => Math.sin(i) * 3);
  const g = createSampler(100, { temp: 1.5, topK: 1, seed: 1 });
  assert.equal(g.sample(logits), argmax(logits));
  const a = createSampler(100, { temp: 1, topK: 0, topP: 1, minP: 0, seed: 7 });
  const b = createSampler(100, { temp: 1, topK: 0, topP: 1, minP: 0, seed: 7 });
  const xs = Array.from({ length: 50 }, () => a.sample(logits));
  assert.deepEqual(xs, Array.from({ length: 50 }, () => b.sample(logits)));
});

test('sampling frequencies follow softmax(logits / temp) (top-k/p/min-p off)', () => {
  const logits = Float32Array.of(2, 1, 0, -1);
  const s = createSampler(4, { temp: 0.7, topK: 0, topP: 1, minP: 0, seed: 123 });
  const counts = [0, 0, 0, 0];
  const N = 20000;
  for (let i = 0; i < N; i++) counts[s.sample(logits)]!++;
  const z = [...logits].map((l) => Math.exp(l / 0.7));
  const sum = z.reduce((a, b) => a + b);
  z.forEach((p, i) => assert.ok(Math.abs(counts[i]! / N - p / sum) < 0.015, `token ${i}: ${counts[i]! / N} vs ${p / sum}`));
});

test('top-k, top-p and min-p keep exactly the tokens llama.cpp keeps', () => {
  const logits = Float32Array.of(0, 5, 4, 3, 2, 1);
  const seen = (p: Parameters<typeof createSampler>[1]) => {
    const s = createSampler(6, { temp: 1, seed: 9, ...p });
    const set = new Set<number>();
    for (let i = 0; i < 4000; i++) set.add(s.sample(logits));
    return [...set].sort();
  };
  assert.deepEqual(seen({ topK: 2, topP: 1, minP: 0 }), [1, 2]);
  // probabilities of 5,4,3,...: 0.636, 0.234, 0.086, ... -> top-p 0.8 keeps 2 tokens, 0.9 keeps 3
  assert.deepEqual(seen({ topK: 0, topP: 0.8, minP: 0 }), [1, 2]);
  assert.deepEqual(seen({ topK: 0, topP: 0.9, minP: 0 }), [1, 2, 3]);
  // min-p 0.1 keeps p >= 0.1 * p_max: e^-2 = 0.135 keeps logit 3, e^-3 = 0.05 drops logit 2
  assert.deepEqual(seen({ topK: 0, topP: 1, minP: 0.1 }), [1, 2, 3]);
});

test('top-k keeps the lowest ids among ties at its threshold, wherever they sit', () => {
  // reference: every token ordered by (logit desc, id asc), the first k kept
  const keep = (logits: Float32Array, k: number) => [...logits.keys()].sort((a, b) => logits[b]! - logits[a]! || a - b).slice(0, k).sort((a, b) => a - b);
  const rng = new Mt19937(3);
  for (let trial = 0; trial < 40; trial++) {
    const n = 6 + (rng.nextU32() % 20);
    // few distinct values: ties at the threshold everywhere, low ids included
    const logits = Float32Array.from({ length: n }, () => rng.nextU32() % 4);
    const k = 1 + (rng.nextU32() % (n - 1));
    const s = createSampler(n, { temp: 1, topK: k, topP: 1, minP: 0, seed: trial });
    const set = new Set<number>();
    for (let i = 0; i < 3000; i++) set.add(s.sample(logits));
    assert.deepEqual([...set].sort((a, b) => a - b), keep(logits, k), `logits ${[...logits]}, top-k ${k}`);
  }
});

test('repetition, frequency and presence penalties (llama.cpp formulas)', () => {
  const s = createSampler(3, { temp: 0, repeatPenalty: 2, frequencyPenalty: 0, presencePenalty: 0 });
  s.accept(0);
  // token 0: logit 3 -> 3/2 = 1.5 < token 1's 2
  assert.equal(s.sample(Float32Array.of(3, 2, -5)), 1);
  const f = createSampler(3, { temp: 0, frequencyPenalty: 1, presencePenalty: 0.5 });
  f.accept(1); f.accept(1);
  // token 1: 4 - 2*1 - 0.5 = 1.5 < token 2's 1.6
  assert.equal(f.sample(Float32Array.of(0, 4, 1.6)), 2);
});

test('topProbs is the softmax over the whole vocabulary', () => {
  const t = topProbs(Float32Array.of(0, Math.log(3)), 2);
  assert.deepEqual(t.map((x) => x[0]), [1, 0]);
  assert.ok(Math.abs(t[0]![1] - 0.75) < 1e-7);
});
