// `gguf-edge bench` as a user runs it: JSON / CSV / markdown output on a tiny synthetic model.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fixture, repoRoot } from '../helpers/fixtures.js';

const bin = resolve(repoRoot, 'bin/gguf-edge.js');
const cacheDir = mkdtempSync(join(tmpdir(), 'gguf-edge-bench-cli-'));
process.on('exit', () => rmSync(cacheDir, { recursive: true, force: true }));
const cli = (...args: string[]) => spawnSync(process.execPath, [bin, 'bench', ...args], {
  encoding: 'utf8', env: { ...process.env, GGUF_EDGE_SYNTHETIC_DIR: cacheDir },
});
const tiny = ['--synthetic', 'tiny-llama:q4_0', '-p', '8', '-n', '4', '-r', '2'];

test('bench -o json prints one JSON array of {test, threads, tps_mean, tps_sd, model_bytes} on stdout', () => {
  const r = cli(...tiny, '-t', '1,2', '-o', 'json');
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stderr, '', 'no progress when stderr is not a terminal');
  const a = JSON.parse(r.stdout);
  assert.ok(Array.isArray(a));
  assert.deepEqual(a.map((x: { test: string; threads: number }) => [x.test, x.threads]), [['pp8', 1], ['tg4', 1], ['pp8', 2], ['tg4', 2]]);
  for (const x of a) {
    for (const k of ['tps_mean', 'tps_sd', 'model_bytes', 'threads', 'model_params', 'avg_ms']) assert.equal(typeof x[k], 'number', k);
    assert.ok(x.tps_mean > 0 && x.tps_sd >= 0 && x.model_bytes > 0);
    assert.equal(x.samples_tps.length, 2);
    assert.equal(x.model, 'tiny-llama:q4_0');
    assert.equal(x.model_type, 'llama Q4_0');
    assert.equal(x.device, 'cpu'); // the default device
  }
});

test('bench -d: every test also at each KV cache depth, named and recorded as llama-bench does', () => {
  const r = cli(...tiny, '-d', '0,32', '-t', '2', '-o', 'json');
  assert.equal(r.status, 0, r.stderr);
  const a = JSON.parse(r.stdout) as { test: string; n_depth: number; n_prompt: number; n_gen: number; tps_mean: number }[];
  assert.deepEqual(a.map((x) => [x.test, x.n_depth, x.n_prompt, x.n_gen]), [['pp8', 0, 8, 0], ['pp8 @ d32', 32, 8, 0], ['tg4', 0, 0, 4], ['tg4 @ d32', 32, 0, 4]]);
  for (const x of a) assert.ok(x.tps_mean > 0);
  // a negative depth is a usage error naming the option
  const bad = cli(...tiny, '-d', '-1');
  assert.notEqual(bad.status, 0);
  assert.match(bad.stderr, /n-depth/);
});

test('bench -o csv: a header and one row per test', () => {
  const r = cli(...tiny, '-t', '1', '-o', 'csv');
  assert.equal(r.status, 0, r.stderr);
  const lines = r.stdout.trimEnd().split('\n');
  assert.equal(lines.length, 3);
  const head = lines[0]!.split(',');
  for (const k of ['test', 'threads', 'tps_mean', 'tps_sd', 'model_bytes']) assert.ok(head.includes(k), k);
  const rows = lines.slice(1).map((l) => Object.fromEntries(l.split(',').map((v, i) => [head[i], v])));
  assert.deepEqual(rows.map((x) => x.test), ['pp8', 'tg4']);
  for (const x of rows) { assert.ok(Number(x.tps_mean) > 0); assert.equal(x.threads, '1'); }
});

test('bench (markdown, default) on a model file: a llama-bench style table', () => {
  const r = cli(fixture('parity/qwen3-q8_0.gguf'), '-p', '8', '-n', '4', '-r', '2', '-t', '1');
  assert.equal(r.status, 0, r.stderr);
  const lines = r.stdout.trimEnd().split('\n');
  assert.equal(lines.length, 4);
  assert.match(lines[0]!, /^\| model +\| type .*\| threads \| +test \| +t\/s \|$/);
  assert.match(lines[1]!, /^\| -+ \|.*-: \|$/);
  assert.match(lines[2]!, /qwen3-q8_0\.gguf \| qwen3 Q8_0 .*\| +1 \| +pp8 \| +\d+\.\d\d ± \d+\.\d\d \|$/);
  assert.match(lines[3]!, /\| +tg4 \| +\d+\.\d\d ± \d+\.\d\d \|$/);
});

test('bench usage errors exit non-zero with one line', () => {
  for (const args of [['-o', 'xml', ...tiny], ['--synthetic', 'nope:q4_0'], ['--device', 'nope', ...tiny], []]) {
    const r = cli(...args);
    assert.notEqual(r.status, 0, args.join(' '));
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.match(r.stderr, /^gguf-edge bench: /);
  }
  const h = cli('--help');
  assert.equal(h.status, 0);
  for (const o of ['--n-prompt', '--n-gen', '--repetitions', '--threads', '--device', '--synthetic', '--output', '--batch', '--seed', '--no-warmup', '--kv-type']) assert.ok(h.stdout.includes(o), o);
});
