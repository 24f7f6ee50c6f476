// Bench statistics and output formats.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatResults, toCsv } from '../../src/bench/format.js';
import { benchTests, meanSd, randomTokens, testName, type BenchResult } from '../../src/bench/runner.js';

const r = (o: Partial<BenchResult>): BenchResult => ({
  test: 'pp512', threads: 2, tps_mean: 123.456, tps_sd: 1.5, model_bytes: 395367872, model: 'a,"b".gguf', model_type: 'qwen3 Q4_K_M',
  model_params: 596049920, engine: 'gguf-edge', device: 'cpu', n_prompt: 512, n_gen: 0, n_depth: 0, reps: 5, avg_ms: 4147.3, samples_tps: [123], ...o,
});

test('mean and sample standard deviation of tokens/s, like llama-bench', () => {
  assert.deepEqual(meanSd([]), { mean: 0, sd: 0 });
  assert.deepEqual(meanSd([5]), { mean: 5, sd: 0 });
  const s = meanSd([2, 4, 4, 4, 5, 5, 7, 9]);
  assert.equal(s.mean, 5);
  assert.ok(Math.abs(s.sd - Math.sqrt(32 / 7)) < 1e-12);
});

test('tests: pp sizes then tg lengths, zeros dropped; random tokens are seeded and in range', () => {
  assert.deepEqual(benchTests({ pp: [512, 0], tg: [128] }), [{ kind: 'pp', n: 512 }, { kind: 'tg', n: 128 }]);
  // llama-bench's -d: each test at every depth, named as llama-bench names them
  const d = benchTests({ pp: [512], tg: [128], depths: [0, 4096] });
  assert.deepEqual(d, [{ kind: 'pp', n: 512 }, { kind: 'pp', n: 512, depth: 4096 }, { kind: 'tg', n: 128 }, { kind: 'tg', n: 128, depth: 4096 }]);
  assert.deepEqual(d.map(testName), ['pp512', 'pp512 @ d4096', 'tg128', 'tg128 @ d4096']);
  const a = randomTokens(1000, 151936), b = randomTokens(1000, 151936);
  assert.deepEqual(a, b);
  assert.ok(a.every((t) => t >= 0 && t < 151936));
  assert.ok(new Set(a).size > 990);
});

test('csv quotes cells with commas and quotes; md shows mean ± sd; json round-trips', () => {
  const rows = [r({}), r({ test: 'tg128', n_prompt: 0, n_gen: 128, tps_mean: 30, tps_sd: 0.25 })];
  const csv = toCsv(rows).trimEnd().split('\n');
  assert.equal(csv.length, 3);
  assert.ok(csv[1]!.startsWith('"a,""b"".gguf",qwen3 Q4_K_M,395367872,596049920,gguf-edge,cpu,2,pp512,512,0,5,'));
  const md = formatResults(rows, 'md');
  assert.match(md, /\| +377\.05 MiB \| +596\.05 M \|.*\| +2 \| +pp512 \| +123\.46 ± 1\.50 \|/);
  assert.match(md, /\| +tg128 \| +30\.00 ± 0\.25 \|/);
  assert.deepEqual(JSON.parse(formatResults(rows, 'json')), rows);
});
