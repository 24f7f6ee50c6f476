// run --profile [--json] and --trace as a user runs them: the profile's rows add up to what ran, and
// the trace is a valid Chrome trace-event file with one track per device.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fixture, repoRoot } from '../helpers/fixtures.js';

const bin = resolve(repoRoot, 'bin/gguf-edge.js');
const cli = (...args: string[]) => spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8' });

test('run --profile --json --trace: per op x device rows, KV fill, a valid trace with one track per device', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gguf-edge-trace-'));
  try {
    const trace = join(dir, 't.json');
    const r = cli('run', fixture('models/stories260K.gguf'), '--prompt-tokens', '1,403,407,261,378', '-n', '4', '--temp', '0', '--json', '--profile', '--trace', trace, '-t', '1');
    assert.equal(r.status, 0, r.stderr);
    const o = JSON.parse(r.stdout);
    const p = o.profile;
    assert.equal(o.policy.policy, 'manual');
    // the prompt is one prefill evaluation, the 3 further tokens decode steps (the 4th is sampled only)
    assert.deepEqual([p.phases.prefill.tokens, p.phases.prefill.evaluations, p.phases.decode.evaluations], [5, 1, 3]);
    const nLayer = 5;
    const calls = (phase: string, op: string) => p.ops.filter((x: { phase: string; op: string }) => x.phase === phase && x.op === op).reduce((a: number, x: { calls: number }) => a + x.calls, 0);
    assert.equal(calls('prefill', 'attention'), nLayer);
    assert.equal(calls('decode', 'attention'), 3 * nLayer);
    assert.ok(p.ops.every((x: { device: string; sim_ms: number | null }) => x.device === 'cpu' && x.sim_ms === null));
    assert.equal(p.kv_cache.fill_tokens, 8);
    assert.equal(p.prompt_kv_bytes, 5 * p.kv_cache.bytes_per_token);
    assert.equal(p.kv_handover.to_decode.bytes, 0); // one device: nothing crosses
    const t = JSON.parse(readFileSync(trace, 'utf8'));
    assert.ok(Array.isArray(t.traceEvents));
    const tracks = t.traceEvents.filter((e: { ph: string }) => e.ph === 'M');
    assert.deepEqual(tracks.map((e: { args: { name: string } }) => e.args.name), ['cpu']);
    for (const e of t.traceEvents.filter((x: { ph: string }) => x.ph === 'X')) {
      assert.ok(Number.isFinite(e.ts) && e.dur > 0 && e.tid === tracks[0].tid && typeof e.name === 'string');
    }
    assert.equal(t.traceEvents.filter((e: { ph: string }) => e.ph === 'X').length, p.ops.reduce((a: number, x: { calls: number }) => a + x.calls, 0));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('bad phase options are usage errors', () => {
  for (const args of [['--phase-policy', 'fast'], ['--offload-min-batch', '0'], ['--decode-device', 'nope'], ['--npu-mem', '-3']]) {
    const r = cli('run', fixture('models/stories260K.gguf'), '-p', 'x', '-n', '1', ...args);
    assert.notEqual(r.status, 0, args.join(' '));
    assert.doesNotMatch(r.stderr, /at .*\.js:\d+/, r.stderr);
  }
});

test('bench --device sim-npu -o json: every row carries sim_tps beside tps_mean, every existing field kept; cpu rows have none', () => {
  const fields = ['test', 'threads', 'tps_mean', 'tps_sd', 'model_bytes', 'model', 'model_type', 'model_params', 'engine', 'device', 'n_prompt', 'n_gen', 'reps', 'avg_ms', 'samples_tps'];
  for (const dev of ['sim-npu', 'cpu']) {
    const r = cli('bench', '--synthetic', 'tiny-qwen3:q8_0', '-p', '16', '-n', '2', '-r', '1', '-t', '1', '--device', dev, '-o', 'json');
    assert.equal(r.status, 0, r.stderr);
    const rows = JSON.parse(r.stdout) as Record<string, unknown>[];
    assert.equal(rows.length, 2);
    for (const row of rows) {
      for (const f of fields) assert.ok(f in row, `${dev}: ${f} missing`);
      if (dev === 'sim-npu') assert.ok(typeof row.sim_tps === 'number' && row.sim_tps > 0, JSON.stringify(row));
      else assert.ok(!('sim_tps' in row));
    }
  }
});

test('bench takes the sim-npu device options: --npu-target sets the simulated time, --npu-mem is checked', () => {
  const sim = (...extra: string[]) => {
    const r = cli('bench', '--synthetic', 'tiny-qwen3:q8_0', '-p', '16', '-n', '0', '-r', '1', '-t', '1', '--device', 'sim-npu', '-o', 'json', ...extra);
    assert.equal(r.status, 0, r.stderr);
    return (JSON.parse(r.stdout) as { sim_tps: number }[])[0]!.sim_tps;
  };
  const ax = sim('--npu-target', 'ax8850'), htp = sim('--npu-target', 'htp', '--npu-mem', '7040');
  // the two presets price the same engines differently (per-call vs per-op overheads, bandwidths)
  assert.ok(ax > 0 && htp > 0 && Math.abs(ax - htp) / ax > 0.05, `ax8850 ${ax}, htp ${htp}`);
  const bad = cli('bench', '--synthetic', 'tiny-qwen3:q8_0', '-p', '16', '-n', '0', '--device', 'sim-npu', '--npu-target', 'tpu');
  assert.notEqual(bad.status, 0);
  assert.match(bad.stderr, /--npu-target must be one of/);
});

test('--phase-policy auto weighs a device named by --device against the cpu per phase (not forced onto it)', () => {
  const model = fixture('parity/qwen3-q8_0.gguf');
  const manual = cli('run', model, '--prompt-tokens', '1,2,3,4,5,6,7,8', '-n', '4', '--temp', '0', '--json', '-t', '1');
  assert.equal(manual.status, 0, manual.stderr);
  const r = cli('run', model, '--prompt-tokens', '1,2,3,4,5,6,7,8', '-n', '4', '--temp', '0', '--json', '-t', '1', '--device', 'sim-npu', '--phase-policy', 'auto');
  assert.equal(r.status, 0, r.stderr);
  // both phases list both candidates: the accelerator by its cost model, the cpu measured at load
  const m = /phase policy auto: prefill on (\S+), decode on (\S+) \(prefill: (.*); decode: (.*)\)/.exec(r.stderr);
  assert.ok(m, r.stderr);
  for (const c of [m[3]!, m[4]!]) { assert.match(c, /sim-npu [\d.]+ ms cost model/); assert.match(c, /cpu [\d.]+ ms measured/); }
  // greedy tokens within the parity rule on this fixture whichever devices were picked: same tokens here
  assert.deepEqual(JSON.parse(r.stdout).tokens, JSON.parse(manual.stdout).tokens);
});
