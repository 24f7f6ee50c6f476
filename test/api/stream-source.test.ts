// loadModel from an http(s) URL streams (src/api/stream-source.ts): the header by Range requests, the tensors
// from one ranged response straight into device memory; servers without Range support; a file that changes
// between requests; a model beyond wasm32's 4 GiB fails before any tensor is fetched, naming the sizes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { readFileSync } from 'node:fs';
import { fixture } from '../helpers/fixtures.js';
import { loadModel, UsageError } from '../../src/api/index.js';
import { ggufHeader } from '../../src/gguf/writer.js';
import { GgmlType } from '../../src/gguf/ggml-types.js';
import { parseRange } from '../../src/web/server.js';

const MODEL = fixture('models/stories260K.gguf');
const bytes = readFileSync(MODEL);
// llama.cpp's greedy continuation (fixtures/reference/greedy-llama.cpp.json)
const WANT = [432, 383, 286, 261, 376, 298, 315, 421, 395, 317, 426, 338, 401, 396, 267, 337];

async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void) {
  const log: string[] = [];
  const server = createServer((req, res) => { log.push(`${req.headers.range ?? 'all'}`); handler(req, res); });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const a = server.address();
  return { server, url: `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}/m.gguf`, log };
}

async function greedy(src: string): Promise<number[]> {
  const m = await loadModel(src, { threads: 1 });
  try {
    const c = await m.createContext({ ctx: 64 });
    return (await c.generate('Once upon a time', { maxTokens: WANT.length, temperature: 0 }).result).tokens;
  } finally { await m.close(); }
}

/** a server of `body` with Range support (or without), the validator optionally changing per request */
function rangeServer(body: () => Uint8Array, o: { ranges: boolean; etag?: () => string }) {
  return (req: IncomingMessage, res: ServerResponse) => {
    const b = body();
    const etag = o.etag?.() ?? '"v1"';
    const r = o.ranges && req.headers.range ? parseRange(req.headers.range, b.length) : undefined;
    const stale = req.headers['if-range'] !== undefined && req.headers['if-range'] !== etag;
    if (r && r !== 'bad' && !stale) {
      res.writeHead(206, { 'Content-Range': `bytes ${r[0]}-${r[1]}/${b.length}`, 'Content-Length': r[1] - r[0] + 1, ETag: etag });
      res.end(b.subarray(r[0], r[1] + 1));
    } else {
      res.writeHead(200, { 'Content-Length': b.length, ETag: etag });
      res.end(b);
    }
  };
}

test('a URL streams: header by a Range request, tensors from one ranged response', async () => {
  const { server, url, log } = await listen(rangeServer(() => bytes, { ranges: true }));
  try {
    assert.deepEqual(await greedy(url), WANT);
    assert.deepEqual(log, ['bytes=0-1048575', 'bytes=1048576-']);
  } finally { server.close(); }
});

test('a server without Range support: its one 200 response is read in order', async () => {
  const { server, url, log } = await listen(rangeServer(() => bytes, { ranges: false }));
  try {
    assert.deepEqual(await greedy(url), WANT);
    assert.deepEqual(log, ['bytes=0-1048575'], 'one request');
  } finally { server.close(); }
});

test('a file that changes between the header and the tensors is an error, not a mix of two files', async () => {
  let n = 0;
  const { server, url } = await listen(rangeServer(() => bytes, { ranges: true, etag: () => `"v${++n}"` }));
  try {
    await assert.rejects(loadModel(url, { threads: 1 }), (e: unknown) => e instanceof UsageError && e.code === 'FETCH_FAILED' && /changed while it was loading/.test(e.message));
  } finally { server.close(); }
});

test('weights beyond wasm32\'s 4 GiB: TOO_LARGE naming the sizes, before any tensor is fetched', async () => {
  // a llama header with 5 GiB of tensors; the server has only the header's bytes and claims the rest
  const { header, dataBytes } = ggufHeader({
    metadata: [['general.architecture', { type: 'string', value: 'llama' }]],
    tensors: [{ name: 'token_embd.weight', dims: [65536, 20480], type: GgmlType.F32 }],
  });
  const size = header.length + dataBytes;
  const served: string[] = [];
  const { server, url } = await listen((req, res) => {
    const r = parseRange(req.headers.range ?? '', size);
    assert.ok(Array.isArray(r));
    served.push(req.headers.range!);
    const part = new Uint8Array(r[1] - r[0] + 1);
    part.set(header.subarray(r[0], Math.min(header.length, r[1] + 1)));
    res.writeHead(206, { 'Content-Range': `bytes ${r[0]}-${r[1]}/${size}`, 'Content-Length': part.length });
    res.end(part);
  });
  try {
    await assert.rejects(loadModel(url, { threads: 1 }), (e: unknown) => {
      assert.ok(e instanceof UsageError && e.code === 'TOO_LARGE', String(e));
      assert.match(e.message, /weights are 5\.00 GiB \(5,368,709,120 bytes\)/);
      assert.match(e.message, /cpu device can hold: 4\.00 GiB \(4,294,967,296 bytes\).*wasm32/);
      return true;
    });
    assert.deepEqual(served, ['bytes=0-1048575'], 'only the header was fetched');
  } finally { server.close(); }
});

test('a header longer than the first 1 MiB range: bounded ranges until it parses, the same metadata', async () => {
  const path = fixture('vocab/ggml-vocab-deepseek-llm.gguf'); // 3.97 MB, vocab-only: all header
  const file = readFileSync(path);
  const { server, url, log } = await listen(rangeServer(() => file, { ranges: true }));
  try {
    const { openSource, parseAny } = await import('../../src/api/source.js');
    const { openGguf } = await import('../../src/gguf/open.js');
    const remote = await parseAny(await openSource(url));
    const local = openGguf(path);
    assert.deepEqual([...remote.metadata.keys()], [...local.metadata.keys()]);
    assert.deepEqual(remote.metadata.get('tokenizer.ggml.tokens'), local.metadata.get('tokenizer.ggml.tokens'));
    assert.deepEqual(log, ['bytes=0-1048575', 'bytes=1048576-2097151', 'bytes=2097152-3970166']);
  } finally { server.close(); }
});
