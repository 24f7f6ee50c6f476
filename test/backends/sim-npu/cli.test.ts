// `run MODEL --prefill-device sim-npu --decode-device cpu` as a user runs it: llama.cpp's greedy tokens
// (fixture reference, compared up to the first near-tie as the parity rule does), and `--profile --json`
// showing every prefill matmul on sim-npu, every decode op on the cpu, and a KV hand-over of exactly the
// prompt's K/V bytes; with --npu-target htp the hand-over costs no simulated time (shared memory); with a
// --npu-mem too small for any layer everything falls back to the cpu with the same tokens.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fixture, repoRoot } from '../../helpers/fixtures.js';
import { MARGIN, type RefFile } from '../../helpers/parity.js';

const bin = resolve(repoRoot, 'bin/gguf-edge.js');
const cli = (...args: string[]) => spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8' });

interface OpRow { phase: string; op: string; device: string; calls: number; sim_ms: number | null }

for (const name of ['qwen3-q8_0', 'llama-q4_0']) {
  test(`run ${name} --prefill-device sim-npu --decode-device cpu --profile --json: llama.cpp's tokens, every prefill matmul on sim-npu`, () => {
    const ref = JSON.parse(readFileSync(fixture(`parity/${name}.ref.json`), 'utf8')) as RefFile;
    const seq = ref.sequences[0]!;
    // steps compared: up to the first near-tie of llama.cpp's top-2 (the parity rule)
    let n = 0;
    while (n < seq.steps.length && n < 6 && seq.steps[n]!.top[0]![1] - seq.steps[n]!.top[1]![1] >= MARGIN) n++;
    assert.ok(n > 0);
    for (const target of ['ax8850', 'htp']) {
      const r = cli('run', fixture(`parity/${name}.gguf`), '--prompt-tokens', seq.prompt.join(','), '-n', String(n), '--temp', '0', '--ignore-eos', '--json', '--profile',
        '--prefill-device', 'sim-npu', '--decode-device', 'cpu', '--npu-target', target, '-t', '1');
      assert.equal(r.status, 0, r.stderr);
      const o = JSON.parse(r.stdout);
      assert.deepEqual(o.tokens, seq.steps.slice(0, n).map((s) => s.token), `${target}: greedy tokens vs llama.cpp`);
      const p = o.profile;
      assert.deepEqual(o.policy.fallbacks, []);
      const ops = p.ops as OpRow[];
      const prefillMatmul = ops.filter((x) => x.phase === 'prefill' && x.op === 'mul_mat');
      assert.deepEqual(prefillMatmul.map((x) => x.device), ['sim-npu']);
      assert.ok(prefillMatmul[0]!.sim_ms! > 0);
      assert.ok(ops.filter((x) => x.phase === 'decode').every((x) => x.device === 'cpu'), JSON.stringify(ops.filter((x) => x.phase === 'decode')));
      assert.equal(p.prompt_kv_bytes, seq.prompt.length * p.kv_cache.bytes_per_token);
      assert.equal(p.kv_handover.to_decode.bytes, p.prompt_kv_bytes);
      if (target === 'htp') assert.equal(p.kv_handover.to_decode.sim_ms, 0);
      else assert.ok(p.kv_handover.to_decode.sim_ms >= (1000 * p.prompt_kv_bytes) / 0.5e9);
    }
  });
}

test('run with --npu-mem too small for any layer: every group falls back to the cpu at load, same tokens', () => {
  const ref = JSON.parse(readFileSync(fixture('parity/qwen3-q8_0.ref.json'), 'utf8')) as RefFile;
  const seq = ref.sequences[0]!;
  const r = cli('run', fixture('parity/qwen3-q8_0.gguf'), '--prompt-tokens', seq.prompt.join(','), '-n', '2', '--temp', '0', '--ignore-eos', '--json',
    '--prefill-device', 'sim-npu', '--decode-device', 'cpu', '--npu-mem', '0.05', '-t', '1');
  assert.equal(r.status, 0, r.stderr);
  const o = JSON.parse(r.stdout);
  assert.deepEqual(o.tokens, seq.steps.slice(0, 2).map((s) => s.token));
  assert.ok(o.policy.fallbacks.length > 0 && o.policy.fallbacks.every((f: string) => /OVER_BUDGET/.test(f)), o.policy.fallbacks.join('\n'));
});

test('--npu-target and --npu-mem: bad values are usage errors', () => {
  const a = cli('run', fixture('parity/qwen3-q8_0.gguf'), '--prompt-tokens', '1,2', '-n', '1', '--prefill-device', 'sim-npu', '--npu-target', 'tpu');
  assert.notEqual(a.status, 0);
  assert.match(a.stderr, /--npu-target must be one of ax8850, htp, got "tpu"/);
  const b = cli('run', fixture('parity/qwen3-q8_0.gguf'), '--prompt-tokens', '1,2', '-n', '1', '--prefill-device', 'sim-npu', '--npu-mem', '-3');
  assert.notEqual(b.status, 0);
  assert.match(b.stderr, /--npu-mem/);
});
