// The CLI as a user runs it: the bin script in a child process.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fixture, repoRoot } from '../helpers/fixtures.js';

const bin = resolve(repoRoot, 'bin/gguf-edge.js');
const cli = (...args: string[]) => spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8' });
const greedy = JSON.parse(readFileSync(fixture('reference/greedy-llama.cpp.json'), 'utf8'));

test('run stories260K -n 64 --temp 0 prints llama.cpp\'s text', () => {
  const r = cli('run', fixture('models/stories260K.gguf'), '-p', 'Once upon a time', '-n', '64', '--temp', '0');
  assert.equal(r.status, 0, r.stderr);
  const c = greedy.cases.find((x: { model: string; prompt: string }) => x.model === 'stories260K.gguf' && x.prompt === 'Once upon a time');
  // llama.cpp's recorded 32-token greedy text is a prefix of our 64-token run
  assert.ok(r.stdout.startsWith('Once upon a time' + c.default.generated_text), r.stdout);
  assert.match(r.stderr, /tok\/s/);
});

test('run --json prints one object with the documented fields', () => {
  const r = cli('run', fixture('models/stories260K.gguf'), '--prompt-tokens', '1,403,407,261,378', '-n', '8', '--temp', '0', '--json', '--probs', '3');
  assert.equal(r.status, 0, r.stderr);
  const o = JSON.parse(r.stdout);
  assert.deepEqual(o.prompt_tokens, [1, 403, 407, 261, 378]);
  assert.deepEqual(o.tokens, greedy.cases[0].default.generated_ids.slice(0, 8));
  assert.equal(typeof o.text, 'string');
  assert.equal(o.probs.length, 8);
  assert.equal(o.probs[0].top.length, 3);
  for (const k of ['load_ms', 'prompt_ms', 'gen_ms', 'pp_tps', 'tg_tps']) assert.equal(typeof o.timings[k], 'number');
});

test('seeded sampling is reproducible', () => {
  const a = cli('run', fixture('models/stories260K.gguf'), '-p', 'Lily', '-n', '16', '--seed', '42', '--json');
  const b = cli('run', fixture('models/stories260K.gguf'), '-p', 'Lily', '-n', '16', '--seed', '42', '--json');
  assert.deepEqual(JSON.parse(a.stdout).tokens, JSON.parse(b.stdout).tokens);
});

test('a missing or corrupt model exits non-zero with one clear line', () => {
  const r = cli('run', '/nonexistent.gguf', '-p', 'x');
  assert.notEqual(r.status, 0);
  assert.equal(r.stdout, '');
  assert.equal(r.stderr.trim().split('\n').length, 1);
  assert.match(r.stderr, /NOT_FOUND.*no such file/);
  const bad = cli('inspect', fixture('parity/inputs.json'));
  assert.notEqual(bad.status, 0);
  assert.match(bad.stderr, /BAD_MAGIC/);
  assert.doesNotMatch(bad.stderr, /at .*\.js/);
});

test('inspect --json lists metadata and tensors', () => {
  const r = cli('inspect', fixture('models/TinyStories-656K-Q8_0.gguf'), '--json');
  assert.equal(r.status, 0, r.stderr);
  const o = JSON.parse(r.stdout);
  assert.equal(o.version, 3);
  assert.equal(o.tensors.length, 20);
  assert.equal(o.metadata['general.architecture'], 'llama');
  assert.equal(o.tensors.find((t: { name: string }) => t.name === 'token_embd.weight').type, 'Q8_0');
});

test('--numerics exact reproduces the reference device bit for bit; fast stays within the parity tolerance', () => {
  // a Q8_0 model: the type whose fast kernel differs most from ggml's order
  const model = fixture('parity/llama-q8_0.gguf');
  const ref = JSON.parse(readFileSync(fixture('parity/llama-q8_0.ref.json'), 'utf8'));
  const prompt = (ref.sequences[0].prompt as number[]).join(',');
  const go = (...extra: string[]) => {
    const r = cli('run', model, '--prompt-tokens', prompt, '-n', '4', '--temp', '0', '--json', '--probs', '5', ...extra);
    assert.equal(r.status, 0, r.stderr);
    return JSON.parse(r.stdout) as { tokens: number[]; probs: { top: [number, number][] }[] };
  };
  const oracle = go('--device', 'reference');
  const exact = go('--numerics', 'exact');
  const fast = go('--numerics', 'fast');
  assert.deepEqual(exact, { ...exact, tokens: oracle.tokens, probs: oracle.probs });
  assert.deepEqual(fast.tokens, oracle.tokens);
  fast.probs.forEach((p, i) => p.top.forEach(([, q], k) => assert.ok(Math.abs(q - oracle.probs[i]!.top[k]![1]) < 0.02)));
  // and llama.cpp's own first greedy token
  assert.equal(oracle.tokens[0], ref.sequences[0].continuation[0]);
  const bad = cli('run', model, '-p', 'x', '--numerics', 'sloppy');
  assert.notEqual(bad.status, 0);
  assert.match(bad.stderr, /--numerics must be fast or exact/);
});
