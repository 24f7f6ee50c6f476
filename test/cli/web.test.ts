// `gguf-edge web MODEL`: the served headers a page running the engine needs (COOP/COEP, Range, MIME types),
// loopback by default, /model.gguf byte-identical to the file, nothing outside the served folders.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fixture, repoRoot } from '../helpers/fixtures.js';

const MODEL = fixture('models/stories260K.gguf');

async function start(args: string[]): Promise<{ base: string; stop(): void }> {
  const p = spawn(process.execPath, [resolve(repoRoot, 'bin/gguf-edge.js'), 'web', ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  const base = await new Promise<string>((ok, fail) => {
    p.stderr.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /gguf-edge web: (http:\/\/\S+\/)/.exec(err);
      if (m) ok(m[1]!);
    });
    p.on('exit', (code) => fail(new Error(`web exited ${code}: ${err}`)));
  });
  return { base, stop: () => p.kill('SIGTERM') };
}

test('web: COOP/COEP, Range, MIME types, loopback; --no-isolation drops the isolation headers', async () => {
  const file = readFileSync(MODEL);
  const s = await start([MODEL, '--port', '0']);
  try {
    assert.match(s.base, /^http:\/\/127\.0\.0\.1:\d+\/$/, 'loopback by default');
    const page = await fetch(s.base);
    assert.equal(page.status, 200);
    assert.equal(page.headers.get('cross-origin-opener-policy'), 'same-origin');
    assert.equal(page.headers.get('cross-origin-embedder-policy'), 'require-corp');
    assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
    assert.match(await page.text(), /gguf-edge/);
    for (const [path, type] of [['gguf-edge.js', /^text\/javascript/], ['worker-browser.js', /^text\/javascript/], ['demo.css', /^text\/css/]] as const) {
      const r = await fetch(s.base + path);
      assert.equal(r.status, 200, path);
      assert.match(r.headers.get('content-type') ?? '', type, path);
    }
    const cfg = await (await fetch(s.base + 'config.json')).json() as { model: { url: string; size: number; name: string } };
    assert.deepEqual(cfg.model, { url: '/model.gguf', name: 'stories260K.gguf', size: file.length });
    const whole = await fetch(s.base + 'model.gguf');
    assert.equal(whole.headers.get('accept-ranges'), 'bytes');
    assert.deepEqual(new Uint8Array(await whole.arrayBuffer()), new Uint8Array(file));
    const part = await fetch(s.base + 'model.gguf', { headers: { Range: 'bytes=100-199' } });
    assert.equal(part.status, 206);
    assert.equal(part.headers.get('content-range'), `bytes 100-199/${file.length}`);
    assert.deepEqual(new Uint8Array(await part.arrayBuffer()), new Uint8Array(file.subarray(100, 200)));
    const tail = await fetch(s.base + 'model.gguf', { headers: { Range: 'bytes=-10' } });
    assert.deepEqual(new Uint8Array(await tail.arrayBuffer()), new Uint8Array(file.subarray(file.length - 10)));
    const past = await fetch(s.base + 'model.gguf', { headers: { Range: `bytes=${file.length}-` } });
    assert.equal(past.status, 416);
    assert.equal(past.headers.get('content-range'), `bytes */${file.length}`);
    // If-Range with another validator: the whole file
    const stale = await fetch(s.base + 'model.gguf', { headers: { Range: 'bytes=0-9', 'If-Range': '"other"' } });
    assert.equal(stale.status, 200);
    await stale.arrayBuffer();
    for (const bad of ['..%2Fpackage.json', '%2E%2E/%2E%2E/package.json', 'nope.js']) assert.equal((await fetch(s.base + bad)).status, 404, bad);
    assert.equal((await fetch(s.base, { method: 'POST' })).status, 405);
  } finally { s.stop(); }

  const n = await start(['--port', '0', '--no-isolation']);
  try {
    const page = await fetch(n.base);
    assert.equal(page.headers.get('cross-origin-opener-policy'), null);
    assert.equal(page.headers.get('cross-origin-embedder-policy'), null);
    assert.deepEqual(await (await fetch(n.base + 'config.json')).json(), { model: null, isolation: false });
    assert.equal((await fetch(n.base + 'model.gguf')).status, 404, 'no MODEL given');
  } finally { n.stop(); }
});
