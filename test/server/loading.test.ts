// The HTTP layer before a model is loaded (serve listens first): /health is llama-server's 503
// unavailable_error "Loading model", the model routes too, and /v1/models still answers (it is public).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { startHttp } from '../../src/server/http.js';
import type { ServerState } from '../../src/server/routes.js';

test('while loading: /health 503 unavailable_error with Retry-After, generation 503, /v1/models 200', async () => {
  const state: ServerState = { alias: 'm', modelPath: 'm.gguf', nCtx: 0, nParallel: 1, slotsEndpoint: true, buildInfo: 'b0-test', created: 0 };
  const server = await startHttp(state, { host: '127.0.0.1', port: 0, apiKeys: [], cors: [], maxBodyBytes: 1024, timeoutMs: 5000 });
  try {
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const h = await fetch(`${base}/health`);
    assert.equal(h.status, 503);
    assert.ok(Number(h.headers.get('retry-after')) > 0);
    assert.deepEqual(await h.json(), { error: { code: 503, message: 'Loading model', type: 'unavailable_error' } });
    const c = await fetch(`${base}/v1/chat/completions`, { method: 'POST', body: JSON.stringify({ messages: [{ role: 'user', content: 'x' }] }) });
    assert.equal(c.status, 503);
    assert.equal(((await c.json()) as any).error.type, 'unavailable_error');
    const m = await fetch(`${base}/v1/models`);
    assert.equal(m.status, 200);
    assert.equal(((await m.json()) as any).data[0].id, 'm');
    assert.equal((await fetch(`${base}/metrics`)).status, 200);
  } finally {
    server.close();
    server.closeAllConnections();
  }
});
