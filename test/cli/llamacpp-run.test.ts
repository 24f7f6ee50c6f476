// `run` against llama.cpp itself (node-llama-cpp's prebuilt CPU build, offline): the acceptance
// command's 64 greedy tokens, and a model file written by our GGUF writer loading in llama.cpp.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { llamaGreedy, llamaGreedyShifted } from '../helpers/llamacpp.js';
import { needPeers } from '../helpers/peers.js';
import { openGguf } from '../../src/gguf/open.js';
import { writeGguf } from '../../src/gguf/writer.js';
import { toWriteInput } from '../../src/gguf/rewrite.js';
import { fixture, repoRoot } from '../helpers/fixtures.js';

const bin = resolve(repoRoot, 'bin/gguf-edge.js');

test('gguf-edge run stories260K -p "Once upon a time" -n 64 --temp 0 prints the same text as llama.cpp', async (t) => {
  if (!needPeers(t, 'node-llama-cpp')) return;
  const model = fixture('models/stories260K.gguf');
  const theirs = await llamaGreedy(model, 'Once upon a time', 64);
  const r = spawnSync(process.execPath, [bin, 'run', model, '-p', 'Once upon a time', '-n', '64', '--temp', '0', '--json'], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const ours = JSON.parse(r.stdout);
  assert.deepEqual(ours.tokens, theirs.ids);
  assert.equal(ours.text, theirs.text);
  const plain = spawnSync(process.execPath, [bin, 'run', model, '-p', 'Once upon a time', '-n', '64', '--temp', '0'], { encoding: 'utf8' });
  assert.equal(plain.stdout, `Once upon a time${theirs.text}\n`);
});

test('a file written by our GGUF writer (v3, re-aligned to 64) loads in llama.cpp and generates the same tokens', async (t) => {
  if (!needPeers(t, 'node-llama-cpp')) return;
  const dir = mkdtempSync(join(tmpdir(), 'gguf-edge-writer-'));
  try {
    const src = openGguf(fixture('parity/qwen3-q4_k_m.gguf'));
    const input = toWriteInput(src);
    input.metadata.push(['general.alignment', { type: 'u32', value: 64 }]);
    input.tensors.reverse(); // a different tensor order than the converter's
    const path = join(dir, 'rewritten.gguf');
    writeFileSync(path, writeGguf(input));
    const a = await llamaGreedy(fixture('parity/qwen3-q4_k_m.gguf'), 'Once upon a time', 12);
    const b = await llamaGreedy(path, 'Once upon a time', 12);
    assert.deepEqual(b.ids, a.ids);
    assert.equal(a.ids.length, 12);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('gguf-edge run --keep: past a full context (a shift in place) the greedy tokens are llama.cpp\'s with its K-shift', async (t) => {
  if (!needPeers(t, 'node-llama-cpp')) return;
  const model = fixture('models/stories260K.gguf');
  const r = spawnSync(process.execPath, [bin, 'run', model, '-p', 'Once upon a time', '-n', '150', '--temp', '0', '-c', '64', '--keep', '5', '--ignore-eos', '--json', '--probs', '2'], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const ours = JSON.parse(r.stdout) as { prompt_tokens: number[]; tokens: number[]; probs: { top: [number, number][] }[] };
  assert.equal(ours.tokens.length, 150, 'generation goes on past the context size');
  const theirs = await llamaGreedyShifted(model, ours.prompt_tokens, 64, 5, 150);
  // llama.cpp writes the tokens after a shift into the freed cells, so its attention sums the cache in another
  // order than ours (positions in row order): last-bit differences, which flip the argmax only at a near tie.
  // The tokens must agree up to the first step whose top-1/top-2 margin is under 1e-3, past the shift.
  const firstShift = 64 - ours.prompt_tokens.length;
  let n = 0;
  while (n < 150 && ours.probs[n]!.top[0]![1] - ours.probs[n]!.top[1]![1] >= 1e-3) n++;
  assert.ok(n > firstShift + 8, `the comparison covers ${n} tokens, the shift happens at token ${firstShift}`);
  assert.deepEqual(ours.tokens.slice(0, n), theirs.slice(0, n));
  // without --keep the context size ends it
  const stop = spawnSync(process.execPath, [bin, 'run', model, '-p', 'Once upon a time', '-n', '150', '--temp', '0', '-c', '64', '--ignore-eos', '--json'], { encoding: 'utf8' });
  assert.equal(stop.status, 0, stop.stderr);
  assert.ok((JSON.parse(stop.stdout) as { tokens: number[] }).tokens.length < 64);
});
