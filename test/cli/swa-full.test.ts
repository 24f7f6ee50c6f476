// --swa-full on the CLI: inspect's estimate of the sliding-window rings is what a real Context allocates (with and
// without --swa-full), and `run` reports the ring in its profile, or none with --swa-full, the tokens the same.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { openGguf } from '../../src/gguf/open.js';
import { loadModel } from '../../src/runtime/model.js';
import { Context } from '../../src/runtime/context.js';
import { getDevice } from '../../src/backends/registry.js';
import { fixture, repoRoot } from '../helpers/fixtures.js';

const bin = resolve(repoRoot, 'bin/gguf-edge.js');
const cli = (...args: string[]) => spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8' });
const model = fixture('parity/gemma3-f16.gguf');

test('inspect gemma3-f16 -c 512 -b 16 [--swa-full]: the rings and the full caches as a Context allocates them', async () => {
  const f = openGguf(model);
  try {
    const m = loadModel(f, { device: await getDevice('reference') });
    for (const full of [false, true]) {
      const r = cli('inspect', model, '--json', '-c', '512', '-b', '16', ...(full ? ['--swa-full'] : []));
      assert.equal(r.status, 0, r.stderr);
      const mem = JSON.parse(r.stdout).summary.memory;
      const ctx = new Context(m, { nCtx: 512, nBatch: 16, swaFull: full });
      try {
        assert.equal(mem.kv, ctx.kvBytesPerToken * ctx.kvCapacity + ctx.kvRingBytes);
        assert.equal(mem.kv_bytes_per_token, ctx.kvBytesPerToken);
        assert.equal(mem.kv_swa_ring, ctx.kvRingBytes);
        assert.deepEqual(mem.swa_ring, full ? null : { window: 16, period: 256, rows: 320 });
        assert.equal(mem.arena, [...ctx.sched.arenaBytes().values()].reduce((a, b) => a + b, 0));
      } finally { ctx.close(); }
      // the sliding-window layers' full size is the same figure either way
      assert.equal(mem.kv_swa_full, m.hp.swaLayers.filter((x) => x).length * 512 * 2 * m.hp.nHeadKv * m.hp.headDimK * 2);
    }
    const text = cli('inspect', model, '-c', '512', '-b', '16');
    assert.match(text.stdout, /sliding-window layers: rings of 320 rows \(window 16 \+ batch, padded to 256, window mirrored\)/);
  } finally { f.source.close?.(); }
});

test('run --swa-full: the profile has no ring, the tokens are the ring run\'s', () => {
  const runs = [[], ['--swa-full']].map((extra) => {
    const r = cli('run', model, '--prompt-tokens', '1,403,407,261', '-n', '8', '--temp', '0', '--json', '--profile', '-c', '512', '-b', '16', ...extra);
    assert.equal(r.status, 0, r.stderr);
    return JSON.parse(r.stdout);
  });
  assert.deepEqual(runs[0].profile.kv_cache.swa_ring, { window: 16, period: 256, rows: 320, bytes: runs[0].profile.kv_cache.swa_ring.bytes });
  assert.ok(runs[0].profile.kv_cache.swa_ring.bytes > 0);
  assert.equal(runs[1].profile.kv_cache.swa_ring, null);
  assert.ok(runs[1].profile.kv_cache.bytes_per_token > runs[0].profile.kv_cache.bytes_per_token);
  assert.deepEqual(runs[0].tokens, runs[1].tokens);
});
