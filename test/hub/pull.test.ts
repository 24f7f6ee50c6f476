// The real download code (src/hub) against a local server that answers as the Hugging Face hub does
// (test/helpers/fake-hub.ts): resolve redirects, ETag / X-Linked-Etag sha256, Range resume after a cut
// connection, wrong bytes refused, quant tags through the manifest API or the file list, split models
// fetched together, offline reuse, tokens, and the CLI (pull, run -hf, verify) through HF_ENDPOINT.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pull, parseHfRef, pickGguf } from '../../src/hub/pull.js';
import { HubError } from '../../src/hub/errors.js';
import { cachedFilePath } from '../../src/hub/cache.js';
import { openGguf } from '../../src/gguf/open.js';
import { writeSplit } from '../../src/gguf/split-write.js';
import { startFakeHub, type FakeHub } from '../helpers/fake-hub.js';
import { fixture, repoRoot } from '../helpers/fixtures.js';

// the sha256 of ggml-org's tinyllamas/stories260K.gguf (../shared/fixtures/PROVENANCE.md)
const STORIES_SHA256 = '270cba1bd5109f42d03350f60406024560464db173c0e387d91f0426d3bd256d';
const bin = resolve(repoRoot, 'bin/gguf-edge.js');
const greedy = JSON.parse(readFileSync(fixture('reference/greedy-llama.cpp.json'), 'utf8'));
const storiesIds: number[] = greedy.cases.find((c: { model: string; prompt: string }) => c.model === 'stories260K.gguf' && c.prompt === 'Once upon a time').default.generated_ids;

const stories = () => new Uint8Array(readFileSync(fixture('models/stories260K.gguf')));
const q8 = () => new Uint8Array(readFileSync(fixture('models/TinyStories-656K-Q8_0.gguf')));

/** the CLI in a child process, asynchronously (the fake hub runs in this process) */
function cli(env: Record<string, string>, ...args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((ok) => {
    const p = spawn(process.execPath, [bin, ...args], { env: { ...process.env, HF_HUB_OFFLINE: '', HF_TOKEN: '', ...env } });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d) => { stdout += d; });
    p.stderr.on('data', (d) => { stderr += d; });
    p.on('close', (status) => ok({ status, stdout, stderr }));
  });
}

async function withHub(repos: Parameters<typeof startFakeHub>[0], fn: (hub: FakeHub, cache: string) => Promise<void>): Promise<void> {
  const hub = await startFakeHub(repos);
  const cache = mkdtempSync(join(tmpdir(), 'gguf-edge-cache-'));
  try { await fn(hub, cache); } finally { await hub.close(); rmSync(cache, { recursive: true, force: true }); }
}

const errCode = async (p: Promise<unknown>): Promise<string> => {
  try { await p; } catch (e) { assert.ok(e instanceof HubError, String(e)); return e.code; }
  assert.fail('no error');
};

test('OWNER/REPO[:QUANT|FILE] parsing and llama.cpp\'s file pick (Q4_K_M, then Q8_0, first shards only)', () => {
  assert.deepEqual(parseHfRef('ggml-org/models:tinyllamas/stories260K.gguf'), { repo: 'ggml-org/models', file: 'tinyllamas/stories260K.gguf' });
  assert.deepEqual(parseHfRef('bartowski/Qwen-GGUF:q4_k_m'), { repo: 'bartowski/Qwen-GGUF', tag: 'q4_k_m' });
  assert.deepEqual(parseHfRef('a/b'), { repo: 'a/b' });
  // node-llama-cpp's hf: URIs
  assert.deepEqual(parseHfRef('hf:bartowski/Qwen-GGUF:Q4_K_M'), { repo: 'bartowski/Qwen-GGUF', tag: 'Q4_K_M' });
  assert.deepEqual(parseHfRef('hf:ggml-org/models/tinyllamas/stories260K.gguf'), { repo: 'ggml-org/models', file: 'tinyllamas/stories260K.gguf' });
  for (const bad of ['nope', 'a/b/c', 'a/b:../x.gguf']) assert.throws(() => parseHfRef(bad), (e: HubError) => e.code === 'BAD_REF');
  const files = ['README.md', 'm-Q8_0.gguf', 'mmproj-m-Q4_K_M.gguf', 'm-Q4_K_M-00002-of-00002.gguf', 'm-Q4_K_M-00001-of-00002.gguf', 'm-IQ4_XS.gguf'];
  assert.equal(pickGguf(files, undefined), 'm-Q4_K_M-00001-of-00002.gguf');
  assert.equal(pickGguf(files, 'q8_0'), 'm-Q8_0.gguf');
  assert.equal(pickGguf(files, 'Q5_K_M'), undefined);
  assert.equal(pickGguf(['x-IQ4_XS.gguf'], undefined), 'x-IQ4_XS.gguf');
});

test('pull REPO:FILE follows the resolve redirect, keeps the hub\'s sha256, and reuses the cache while the ETag holds', () => withHub(
  { 'ggml-org/models': { files: [{ path: 'tinyllamas/stories260K.gguf', bytes: stories() }] } },
  async (hub, cache) => {
    const r = await pull('ggml-org/models:tinyllamas/stories260K.gguf', { endpoint: hub.url, cacheDir: cache });
    assert.equal(r.path, join(cache, 'ggml-org_models_tinyllamas_stories260K.gguf'));
    assert.deepEqual(new Uint8Array(readFileSync(r.path)), stories());
    assert.equal(r.files[0]!.sha256, STORIES_SHA256);
    assert.equal(readFileSync(`${r.path}.etag`, 'utf8'), STORIES_SHA256);
    assert.equal(r.files[0]!.cached, false);
    const gets = hub.requests.filter((q) => q.method === 'GET');
    assert.deepEqual(gets.map((q) => [q.url, q.status]), [['/ggml-org/models/resolve/main/tinyllamas/stories260K.gguf', 302], [`/cdn/${STORIES_SHA256}`, 200]]);
    hub.requests.length = 0;
    const again = await pull('ggml-org/models:tinyllamas/stories260K.gguf', { endpoint: hub.url, cacheDir: cache });
    assert.equal(again.files[0]!.cached, true);
    assert.deepEqual(hub.requests.map((q) => q.method), ['HEAD']);
    assert.equal(await errCode(pull('ggml-org/models:tinyllamas/nope.gguf', { endpoint: hub.url, cacheDir: cache })), 'FILE_NOT_FOUND');
    assert.equal(await errCode(pull('nobody/nothing:x.gguf', { endpoint: hub.url, cacheDir: cache })), 'UNAUTHORIZED');
  }));

test('a connection cut mid-body resumes with Range + If-Range (206), within one run and in the next run', () => withHub(
  { 'ggml-org/models': { files: [{ path: 'stories260K.gguf', bytes: stories() }] } },
  async (hub, cache) => {
    hub.cut.set(STORIES_SHA256, { times: 1, after: 300_000 });
    const r = await pull('ggml-org/models:stories260K.gguf', { endpoint: hub.url, cacheDir: cache, retryDelayMs: 10 });
    assert.deepEqual(new Uint8Array(readFileSync(r.path)), stories());
    const cdn = hub.requests.filter((q) => q.url.startsWith('/cdn/') && q.method === 'GET');
    assert.equal(cdn.length, 2);
    assert.equal(cdn[1]!.headers.range, 'bytes=300000-');
    assert.equal(cdn[1]!.headers['if-range'], `"${STORIES_SHA256}"`);
    assert.equal(cdn[1]!.status, 206);
    // killed mid-download (one attempt, the cut): the part stays; the next run carries on from it
    rmSync(r.path); rmSync(`${r.path}.etag`);
    hub.requests.length = 0;
    hub.cut.set(STORIES_SHA256, { times: 1, after: 500_000 });
    assert.equal(await errCode(pull('ggml-org/models:stories260K.gguf', { endpoint: hub.url, cacheDir: cache, attempts: 1 })), 'NETWORK');
    assert.equal(existsSync(r.path), false);
    assert.equal(readFileSync(`${r.path}.part`).length, 500_000);
    const next = await pull('ggml-org/models:stories260K.gguf', { endpoint: hub.url, cacheDir: cache });
    assert.deepEqual(new Uint8Array(readFileSync(next.path)), stories());
    const last = hub.requests.filter((q) => q.url.startsWith('/cdn/')).at(-1)!;
    assert.equal(last.headers.range, 'bytes=500000-');
    assert.equal(last.status, 206);
    assert.equal(existsSync(`${r.path}.part`), false);
  }));

test('a part of a file that changed on the hub since is not spliced: the new version comes whole', () => withHub(
  { 'ggml-org/models': { files: [{ path: 'm.gguf', bytes: stories() }] } },
  async (hub, cache) => {
    hub.cut.set(STORIES_SHA256, { times: 1, after: 200_000 });
    assert.equal(await errCode(pull('ggml-org/models:m.gguf', { endpoint: hub.url, cacheDir: cache, attempts: 1 })), 'NETWORK');
    hub.repos['ggml-org/models']!.files[0]!.bytes = q8(); // a new commit replaced the file
    hub.requests.length = 0;
    const r = await pull('ggml-org/models:m.gguf', { endpoint: hub.url, cacheDir: cache });
    assert.deepEqual(new Uint8Array(readFileSync(r.path)), q8());
    const get = hub.requests.filter((q) => q.url.startsWith('/cdn/'));
    assert.equal(get.length, 1);
    assert.equal(get[0]!.headers.range, undefined);
    assert.equal(get[0]!.status, 200);
  }));

test('two pulls of one file at once: one downloads, the other waits for it and finds it cached; a stale lock is taken over', () => withHub(
  { 'ggml-org/models': { files: [{ path: 'stories260K.gguf', bytes: stories() }] } },
  async (hub, cache) => {
    const o = { endpoint: hub.url, cacheDir: cache };
    const [a, b] = await Promise.all([pull('ggml-org/models:stories260K.gguf', o), pull('ggml-org/models:stories260K.gguf', o)]);
    assert.deepEqual([a.files[0]!.cached, b.files[0]!.cached].sort(), [false, true]);
    assert.equal(hub.requests.filter((q) => q.url.startsWith('/cdn/')).length, 1);
    assert.deepEqual(new Uint8Array(readFileSync(a.path)), stories());
    // a lock left by a process that is gone
    rmSync(a.path);
    writeFileSync(`${a.path}.lock`, '2147483646');
    const c = await pull('ggml-org/models:stories260K.gguf', o);
    assert.deepEqual(new Uint8Array(readFileSync(c.path)), stories());
    assert.equal(existsSync(`${a.path}.lock`), false);
  }));

test('bytes whose sha256 is not the hub\'s are refused and nothing is left that looks valid', () => withHub(
  { 'ggml-org/models': { files: [{ path: 'stories260K.gguf', bytes: stories() }] } },
  async (hub, cache) => {
    hub.corrupt.add(STORIES_SHA256);
    assert.equal(await errCode(pull('ggml-org/models:stories260K.gguf', { endpoint: hub.url, cacheDir: cache })), 'SHA256_MISMATCH');
    assert.deepEqual(readdirSync(cache), []);
  }));

test('quant tags: the manifest API (cached for offline use), else the file list (its lfs.oid checked)', () => withHub(
  {
    'tiny/stories-GGUF': {
      files: [{ path: 'README.md', bytes: new TextEncoder().encode('# card\n'), git: true }, { path: 'stories-F32.gguf', bytes: stories() }, { path: 'stories-Q8_0.gguf', bytes: q8() }],
      manifests: { latest: 'stories-Q8_0.gguf', Q8_0: 'stories-Q8_0.gguf', F32: 'stories-F32.gguf' },
    },
    'tiny/no-manifest': { files: [{ path: 'a-F32.gguf', bytes: stories() }, { path: 'a-Q8_0.gguf', bytes: q8() }] },
  },
  async (hub, cache) => {
    const o = { endpoint: hub.url, cacheDir: cache };
    assert.equal((await pull('tiny/stories-GGUF:F32', o)).file, 'stories-F32.gguf');
    assert.equal((await pull('tiny/stories-GGUF', o)).file, 'stories-Q8_0.gguf');
    const manifest = hub.requests.find((q) => q.url === '/v2/tiny/stories-GGUF/manifests/F32')!;
    assert.match(String(manifest.headers['user-agent']), /^llama-cpp/);
    hub.requests.length = 0;
    const off = await pull('tiny/stories-GGUF:F32', { ...o, offline: true });
    assert.deepEqual(new Uint8Array(readFileSync(off.path)), stories());
    assert.equal(hub.requests.length, 0, 'offline: no request');
    // no manifest: the tree listing, with the default Q4_K_M -> Q8_0 order
    const r = await pull('tiny/no-manifest', o);
    assert.equal(r.file, 'a-Q8_0.gguf');
    assert.ok(hub.requests.some((q) => q.url === '/api/models/tiny/no-manifest/tree/main?recursive=true'));
    assert.equal(await errCode(pull('tiny/no-manifest:Q5_K_M', o)), 'FILE_NOT_FOUND');
    assert.equal(await errCode(pull('tiny/stories-GGUF:Q2_K', { ...o, offline: true })), 'NOT_CACHED');
  }));

test('a private repository needs HF_TOKEN (sent as a bearer token to the hub)', () => withHub(
  { 'me/private': { files: [{ path: 'm.gguf', bytes: stories() }], token: 'hf_test_token' } },
  async (hub, cache) => {
    assert.equal(await errCode(pull('me/private:m.gguf', { endpoint: hub.url, cacheDir: cache, token: undefined })), 'UNAUTHORIZED');
    const r = await pull('me/private:m.gguf', { endpoint: hub.url, cacheDir: cache, token: 'hf_test_token' });
    assert.deepEqual(new Uint8Array(readFileSync(r.path)), stories());
    assert.equal(hub.requests.find((q) => q.url.includes('/resolve/') && q.method === 'HEAD' && q.status === 302)!.headers.authorization, 'Bearer hf_test_token');
  }));

test('offline or unreachable: the cached file is used; absent, a clear typed error', async () => {
  const cache = mkdtempSync(join(tmpdir(), 'gguf-edge-cache-'));
  try {
    const hub = await startFakeHub({ 'ggml-org/models': { files: [{ path: 'stories260K.gguf', bytes: stories() }] } });
    const endpoint = hub.url;
    assert.equal(await errCode(pull('ggml-org/models:stories260K.gguf', { endpoint, cacheDir: cache, offline: true })), 'NOT_CACHED');
    await pull('ggml-org/models:stories260K.gguf', { endpoint, cacheDir: cache });
    await hub.close(); // the hub is gone
    const r = await pull('ggml-org/models:stories260K.gguf', { endpoint, cacheDir: cache });
    assert.equal(r.files[0]!.cached, true);
    assert.equal(await errCode(pull('ggml-org/models:other.gguf', { endpoint, cacheDir: cache })), 'NETWORK');
  } finally {
    rmSync(cache, { recursive: true, force: true });
  }
});

test('CLI: run -hf on a split model (3 shards fetched together) gives llama.cpp\'s tokens; pull; verify; run --verify', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gguf-edge-shards-'));
  try {
    const single = openGguf(fixture('models/stories260K.gguf'));
    const shards = writeSplit(single, join(dir, 'stories260K-F32'), { maxTensors: 16 });
    single.source.close?.();
    const files = shards.map((s) => ({ path: s.path.slice(dir.length + 1), bytes: new Uint8Array(readFileSync(s.path)) }));
    await withHub({ 'tiny/split-GGUF': { files, manifests: { F32: files[0]!.path } } }, async (hub, cache) => {
      const env = { HF_ENDPOINT: hub.url, GGUF_EDGE_CACHE: cache };
      hub.cut.set(hub.sha256(files[1]!.bytes), { times: 1, after: 100_000 });
      const r = await cli(env, 'run', '-hf', 'tiny/split-GGUF:F32', '-p', 'Once upon a time', '-n', '32', '--temp', '0', '--json');
      assert.equal(r.status, 0, r.stderr);
      assert.deepEqual(JSON.parse(r.stdout).tokens, storiesIds);
      for (const f of files) assert.deepEqual(new Uint8Array(readFileSync(cachedFilePath(cache, 'tiny/split-GGUF', f.path))), f.bytes);
      assert.doesNotMatch(r.stderr, /downloading \d+%/, 'no progress when stderr is not a terminal');
      // pull prints the path to load; a second time everything comes from the cache
      const p = await cli(env, 'pull', 'tiny/split-GGUF:F32', '--json');
      assert.equal(p.status, 0, p.stderr);
      const pj = JSON.parse(p.stdout);
      assert.equal(pj.path, cachedFilePath(cache, 'tiny/split-GGUF', files[0]!.path));
      assert.deepEqual(pj.files.map((f: { cached: boolean }) => f.cached), [true, true, true]);
      // verify: every shard against the hub's sha256
      const v = await cli(env, 'verify', pj.path, '--json');
      assert.equal(v.status, 0, v.stderr);
      const vj = JSON.parse(v.stdout);
      assert.deepEqual(vj.files.map((f: { ok: boolean; source: string }) => [f.ok, f.source]), [[true, 'hub'], [true, 'hub'], [true, 'hub']]);
      assert.deepEqual(vj.files.map((f: { sha256: string }) => f.sha256), files.map((f) => hub.sha256(f.bytes)));
      // a tampered shard: verify and run --verify refuse it before anything is loaded
      const second = cachedFilePath(cache, 'tiny/split-GGUF', files[1]!.path);
      const bytes = readFileSync(second);
      bytes[bytes.length - 1] ^= 1;
      writeFileSync(second, bytes);
      const bad = await cli(env, 'verify', pj.path);
      assert.equal(bad.status, 1);
      assert.match(bad.stderr, /\[SHA256_MISMATCH\] .*00002-of-00003\.gguf/);
      const run = await cli(env, 'run', '-hf', 'tiny/split-GGUF:F32', '--offline', '--verify', '-p', 'x', '-n', '1');
      assert.equal(run.status, 1);
      assert.match(run.stderr, /\[SHA256_MISMATCH\]/);
      // offline with nothing cached for that tag
      const none = await cli(env, 'run', '-hf', 'tiny/split-GGUF:Q4_K_M', '--offline', '-p', 'x');
      assert.equal(none.status, 1);
      assert.match(none.stderr, /\[NOT_CACHED\]/);
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('verify --sha256 checks a local file against the model card\'s value', async () => {
  const ok = await cli({}, 'verify', fixture('models/stories260K.gguf'), '--sha256', STORIES_SHA256);
  assert.equal(ok.status, 0, ok.stderr);
  assert.match(ok.stdout, new RegExp(`^${STORIES_SHA256}  .*stories260K\\.gguf  OK`));
  const bad = await cli({}, 'verify', fixture('models/stories260K.gguf'), '--sha256', '0'.repeat(64));
  assert.equal(bad.status, 1);
  assert.match(bad.stderr, /\[SHA256_MISMATCH\]/);
  const none = await cli({}, 'run', fixture('models/stories260K.gguf'), '--verify', '-p', 'x', '-n', '1');
  assert.equal(none.status, 1);
  assert.match(none.stderr, /\[NO_CHECKSUM\]/);
  const good = await cli({}, 'run', fixture('models/stories260K.gguf'), '--sha256', STORIES_SHA256, '-p', 'Once upon a time', '-n', '4', '--temp', '0', '--json');
  assert.equal(good.status, 0, good.stderr);
  assert.deepEqual(JSON.parse(good.stdout).tokens, storiesIds.slice(0, 4));
});

test('progress shows on a terminal (util-linux script gives the CLI a pty) and not when piped', () => withHub(
  { 'ggml-org/models': { files: [{ path: 'stories260K.gguf', bytes: stories() }] } },
  async (hub, cache) => {
    const env = { ...process.env, HF_ENDPOINT: hub.url, GGUF_EDGE_CACHE: cache, HF_HUB_OFFLINE: '' };
    const onPty = (...args: string[]) => new Promise<string>((ok, fail) => {
      const p = spawn('script', ['-qec', [process.execPath, bin, ...args].map((a) => `'${a}'`).join(' '), '/dev/null'], { env });
      let text = '';
      p.stdout.on('data', (d) => { text += d; });
      p.on('error', fail);
      p.on('close', (code) => (code === 0 ? ok(text) : fail(new Error(`script exited ${code}: ${text}`))));
    });
    const out = await onPty('pull', 'ggml-org/models:stories260K.gguf');
    assert.match(out, /downloading ggml-org\/models\/stories260K\.gguf \(1185376 bytes\)/);
    assert.match(out, /\rdownloading 100%/);
    assert.ok(out.includes(join(cache, 'ggml-org_models_stories260K.gguf')));
    // verify hashes with progress too
    assert.match(await onPty('verify', join(cache, 'ggml-org_models_stories260K.gguf')), /\rverifying 100%[\s\S]*OK \(the hub's\)/);
    // piped (the cached file is current, so fetch another copy): no progress, no notices
    rmSync(cache, { recursive: true, force: true });
    const piped = await cli({ HF_ENDPOINT: hub.url, GGUF_EDGE_CACHE: cache }, 'pull', 'ggml-org/models:stories260K.gguf');
    assert.equal(piped.status, 0, piped.stderr);
    assert.doesNotMatch(piped.stderr, /%|downloading/);
  }));

test('serve -hf (as llama-server\'s): the model is fetched, then served', () => withHub(
  { 'ggml-org/models': { files: [{ path: 'tinyllamas/stories260K.gguf', bytes: stories() }] } },
  async (hub, cache) => {
    const p = spawn(process.execPath, [bin, 'serve', '-hf', 'ggml-org/models:tinyllamas/stories260K.gguf', '--port', '0'], { env: { ...process.env, HF_ENDPOINT: hub.url, GGUF_EDGE_CACHE: cache, HF_HUB_OFFLINE: '' } });
    try {
      let err = '';
      const url = await new Promise<string>((ok, fail) => {
        p.stderr.on('data', (d) => { err += d; const m = /listening on (http:\/\/\S+)/.exec(err); if (m) ok(m[1]!); });
        p.on('close', (code) => fail(new Error(`serve exited ${code}: ${err}`)));
      });
      for (let i = 0; i < 200 && (await fetch(`${url}/health`)).status !== 200; i++) await new Promise((r) => setTimeout(r, 50));
      const models = await (await fetch(`${url}/v1/models`)).json() as { data: { id: string }[] };
      assert.equal(models.data[0]!.id, 'ggml-org_models_tinyllamas_stories260K.gguf');
      const c = await (await fetch(`${url}/v1/completions`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ prompt: 'Once upon a time', max_tokens: 8, temperature: 0 }) })).json() as { choices: { text: string }[] };
      assert.ok(greedy.cases.find((x: { model: string; prompt: string }) => x.model === 'stories260K.gguf' && x.prompt === 'Once upon a time').default.generated_text.startsWith(c.choices[0]!.text), c.choices[0]!.text);
      assert.deepEqual(new Uint8Array(readFileSync(cachedFilePath(cache, 'ggml-org/models', 'tinyllamas/stories260K.gguf'))), stories());
    } finally {
      p.kill();
    }
  }));

test('a hub answering nonsense gets typed errors: no file list, more bytes than announced', async () => {
  const { createServer } = await import('node:http');
  const server = createServer((req, res) => {
    if (req.url!.startsWith('/v2/')) { res.writeHead(200, { 'Content-Type': 'application/json' }); return res.end('this is not json'); }
    if (req.url!.startsWith('/api/')) { res.writeHead(200, { 'Content-Type': 'application/json' }); return res.end('{"oops": 1}'); }
    // HEAD says 10 bytes; the GET sends 20
    res.writeHead(200, { ETag: '"abc"', 'Content-Length': req.method === 'HEAD' ? 10 : 20 });
    res.end(req.method === 'HEAD' ? undefined : Buffer.alloc(20, 7));
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const endpoint = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const cache = mkdtempSync(join(tmpdir(), 'gguf-edge-cache-'));
  try {
    assert.equal(await errCode(pull('x/y:Q4_K_M', { endpoint, cacheDir: cache })), 'HTTP_ERROR');
    assert.equal(await errCode(pull('x/y:m.gguf', { endpoint, cacheDir: cache, retryDelayMs: 1 })), 'SIZE_MISMATCH');
    assert.deepEqual(readdirSync(cache).filter((n) => !n.startsWith('manifest=')), []);
  } finally {
    server.closeAllConnections();
    server.close();
    rmSync(cache, { recursive: true, force: true });
  }
});
