// The small form of `npm run fuzz` (issue #9 item 4): 1,500 seeded mutations of real model files of
// every supported architecture, GGUF v1 and v3, and a 150k-token vocabulary model, each run through
// parse, full model load on the cpu device, tokenizer load, tokenize, one decode step and a sampled
// piece. Every outcome must be success or a typed error; memory stays bounded. (The time per case is
// reported here and checked by `npm run fuzz`, not asserted: this machine's load is not ours to know.)
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createCpuDevice } from '../../src/backends/cpu/device.js';
import { formatStats, fuzz, fuzzSeeds, runCase, VOCAB_150K } from './model-fuzz.js';
import { parseGguf } from '../../src/gguf/reader.js';
import { metaArrayLength } from '../../src/gguf/reader.js';

const device = await createCpuDevice({ threads: 1 });
after(() => device.close());
const seeds = fuzzSeeds();

test('every unmutated seed loads, tokenizes and decodes (the fuzz starts from working files)', async () => {
  for (const s of seeds) assert.equal(await runCase(s.bytes, device), 'ok', s.name);
  const big = seeds.find((s) => s.name.startsWith('150k'))!;
  assert.equal(metaArrayLength(parseGguf(big.bytes), 'tokenizer.ggml.tokens'), VOCAB_150K);
});

test('1,500 seeded mutations: each a success or a typed error, memory bounded', async () => {
  const stats = await fuzz(seeds, device, { cases: 1500, seed: 20261201 });
  console.log(formatStats(stats));
  assert.deepEqual(stats.failures, [], 'untyped outcomes');
  const ok = stats.counts.get('ok') ?? 0;
  assert.ok(ok > 50 && ok < 1400, `${ok} successes: the mutations must reach both outcomes`);
  // the validators answer, not only the parser
  for (const code of ['GgufError BAD_HPARAM', 'GgufError BAD_TENSOR_SHAPE', 'GgufError TRUNCATED', 'GgufError COUNT_TOO_LARGE']) {
    assert.ok((stats.counts.get(code) ?? 0) > 0, `no ${code}`);
  }
  assert.equal(stats.byKind.size, 6, 'every mutation kind ran');
  // nothing a mutated count asked for was allocated: the wasm memory holds about one model and its context
  const wasm = device.runtime.memory.buffer.byteLength;
  assert.ok(wasm < 256 * 2 ** 20, `wasm memory grew to ${(wasm / 2 ** 20).toFixed(0)} MiB`);
});
