// `gguf-edge serve` as clients use it: a real server process on loopback, driven by the official `openai`
// npm client and by raw fetch. Oracles we did not write: llama.cpp's recorded greedy text, `gguf-edge run`
// (whose greedy tokens are llama.cpp's), and llama-server's own test numbers for stories260K
// (tools/server/tests/unit: prompt token counts, ChatML fallback, SSE framing, /props).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { connect } from 'node:net';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import OpenAI from 'openai';
import { fixture, repoRoot } from '../helpers/fixtures.js';
import { readSse, startServe, type ServeProcess } from '../helpers/serve.js';

const model = fixture('models/stories260K.gguf');
const greedy = JSON.parse(readFileSync(fixture('reference/greedy-llama.cpp.json'), 'utf8'));
const bin = resolve(repoRoot, 'bin/gguf-edge.js');

/** `gguf-edge run --json` greedy: the reference for the server's answers (async: the clients' event loop keeps running) */
async function runGreedy(args: string[]): Promise<{ tokens: number[]; text: string }> {
  const { stdout } = await promisify(execFile)(process.execPath, [bin, 'run', model, '--temp', '0', '--json', ...args], { encoding: 'utf8' });
  return JSON.parse(stdout);
}

const chatml = (system: string, user: string) => `<|im_start|>system\n${system}<|im_end|>\n<|im_start|>user\n${user}<|im_end|>\n<|im_start|>assistant\n`;

const post = (base: string, path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${base}${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) });

async function waitIdle(base: string, ms = 5000): Promise<any[]> {
  const t0 = Date.now();
  for (;;) {
    const slots = await (await fetch(`${base}/slots`)).json() as any[];
    if (slots.every((s) => !s.is_processing) || Date.now() - t0 > ms) return slots;
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('serve stories260K (-c 1536 -np 6, llama-server preset ctx per slot 256)', () => {
  let srv: ServeProcess;
  let client: OpenAI;
  before(async () => {
    srv = await startServe([model, '-c', '1536', '-np', '6', '--temp', '0', '--alias', 'tinyllama-2', '--prefill-chunk', '16']);
    // the client's default retries: a keep-alive socket the server closes just as the client reuses it
    // (seen once in CI at load 20) is a connection error the official client retries; 4xx are never retried
    client = new OpenAI({ apiKey: 'dummy', baseURL: `${srv.base}/v1`, maxRetries: 2 });
  });
  after(async () => { await srv?.stop(); });

  test('completions (openai client): greedy text is llama.cpp\'s, plain and streamed; usage counts', async () => {
    const c = greedy.cases.find((x: any) => x.model === 'stories260K.gguf' && x.prompt === 'Once upon a time');
    const n = c.default.generated_ids.length;
    const res = await client.completions.create({ model: 'x', prompt: 'Once upon a time', max_tokens: n, temperature: 0 });
    assert.equal(res.choices[0]!.text, c.default.generated_text);
    assert.equal(res.choices[0]!.finish_reason, 'length');
    assert.equal(res.usage!.prompt_tokens, 5);
    assert.equal(res.usage!.completion_tokens, n);
    assert.equal(res.usage!.total_tokens, 5 + n);
    assert.equal(res.model, 'tinyllama-2');
    assert.ok(res.system_fingerprint!.startsWith('b'));
    const stream = await client.completions.create({ model: 'x', prompt: 'Once upon a time', max_tokens: n, temperature: 0, stream: true, stream_options: { include_usage: true } });
    let text = '';
    let usage: any;
    let finish: string | null = null;
    for await (const ch of stream) {
      if (ch.choices.length) { text += ch.choices[0]!.text; finish = ch.choices[0]!.finish_reason ?? finish; } else usage = ch.usage;
    }
    assert.equal(text, c.default.generated_text);
    assert.equal(finish, 'length');
    assert.deepEqual([usage.prompt_tokens, usage.completion_tokens], [5, n]);
  });

  test('chat (openai client): greedy reply equals `gguf-edge run` on the ChatML prompt; 69 prompt tokens (llama-server)', async () => {
    const ref = await runGreedy(['-p', chatml('Book', 'Hey'), '--parse-special', '-n', '8']);
    const messages = [{ role: 'system' as const, content: 'Book' }, { role: 'user' as const, content: 'Hey' }];
    const res = await client.chat.completions.create({ model: 'x', messages, max_tokens: 8, temperature: 0 });
    assert.equal(res.choices[0]!.message.content, ref.text);
    assert.equal(res.choices[0]!.message.role, 'assistant');
    assert.equal(res.choices[0]!.finish_reason, 'length');
    assert.match(res.id, /cmpl/);
    assert.deepEqual([res.usage!.prompt_tokens, res.usage!.completion_tokens, res.usage!.total_tokens], [69, 8, 77]);
    const stream = await client.chat.completions.create({ model: 'x', messages, max_tokens: 8, temperature: 0, stream: true, stream_options: { include_usage: true } });
    let text = '';
    let usage: any;
    for await (const ch of stream) {
      if (ch.choices.length) text += ch.choices[0]!.delta.content ?? ''; else usage = ch.usage;
    }
    assert.equal(text, ref.text);
    assert.deepEqual([usage.prompt_tokens, usage.completion_tokens], [69, 8]);
  });

  test('llama-server\'s stories260K prompt token counts: 77, 104, 79 (chat), 18, 46, 21 (tokenize)', async () => {
    const chat = async (system: string, user: unknown) => {
      const r = await post(srv.base, '/chat/completions', { max_tokens: 1, messages: [{ role: 'system', content: system }, { role: 'user', content: user }] });
      assert.equal(r.status, 200);
      return ((await r.json()) as any).usage.prompt_tokens;
    };
    assert.equal(await chat('Book', 'What is the best book'), 77);
    assert.equal(await chat('You are a coding assistant.', 'Write the fibonacci function in c++.'), 104);
    assert.equal(await chat('Book', [{ type: 'text', text: 'What is' }, { type: 'text', text: 'the best book' }]), 79);
    for (const [content, n] of [['I believe the meaning of life is', 18], ['Write a joke about AI from a very long prompt which will not be truncated', 46], ['What is the capital of France?', 21]] as const) {
      const r = await post(srv.base, '/tokenize', { content, add_special: true });
      const ids = ((await r.json()) as any).tokens as number[];
      assert.equal(ids.length, n, content);
      assert.equal(ids[0], 1); // BOS
      const d = await post(srv.base, '/detokenize', { tokens: ids.slice(1) });
      assert.equal(((await d.json()) as any).content.trim(), content);
    }
    // ChatML fallback (the GGUF has no template), as llama-server renders it
    const t = await post(srv.base, '/apply-template', { messages: [{ role: 'system', content: 'Book' }, { role: 'user', content: 'Hey' }] });
    assert.equal(((await t.json()) as any).prompt, chatml('Book', 'Hey'));
    const p = await post(srv.base, '/tokenize', { content: 'Hello world', with_pieces: true });
    const pieces = ((await p.json()) as any).tokens;
    assert.ok(pieces.length > 0 && pieces.every((x: any) => Number.isInteger(x.id) && typeof x.piece === 'string'));
  });

  test('SSE framing: role chunk with the first token, content deltas, finish chunk with empty delta, usage chunk (choices []), [DONE]', async () => {
    const r = await post(srv.base, '/v1/chat/completions', { max_tokens: 6, stream: true, stream_options: { include_usage: true }, messages: [{ role: 'system', content: 'Book' }, { role: 'user', content: 'What is the best book' }] });
    assert.equal(r.status, 200);
    assert.match(r.headers.get('content-type')!, /text\/event-stream/);
    const { events, done } = await readSse(r);
    assert.ok(done);
    assert.deepEqual(events[0].choices[0].delta, { role: 'assistant', content: null });
    const content = events.slice(1, -2);
    assert.ok(content.length >= 1);
    for (const e of content) { assert.equal(typeof e.choices[0].delta.content, 'string'); assert.ok(!('role' in e.choices[0].delta)); assert.equal(e.choices[0].finish_reason, null); }
    const fin = events[events.length - 2];
    assert.deepEqual(fin.choices[0].delta, {});
    assert.equal(fin.choices[0].finish_reason, 'length');
    const last = events[events.length - 1];
    assert.deepEqual(last.choices, []);
    assert.deepEqual([last.usage.prompt_tokens, last.usage.completion_tokens], [77, 6]);
    for (const k of ['cache_n', 'prompt_n', 'prompt_ms', 'prompt_per_token_ms', 'prompt_per_second', 'predicted_n', 'predicted_ms', 'predicted_per_token_ms', 'predicted_per_second']) assert.equal(typeof last.timings[k], 'number', k);
    assert.equal(last.timings.predicted_n, 6);
    assert.ok(events.every((e) => e.id === events[0].id && e.model === 'tinyllama-2' && e.object === 'chat.completion.chunk'));
  });

  test('/props, /slots, /v1/models, /health, /metrics', async () => {
    const props = (await (await fetch(`${srv.base}/props`)).json()) as any;
    assert.equal(props.total_slots, 6);
    assert.equal(props.default_generation_settings.n_ctx, 1536 / 6);
    assert.match(props.model_path, /\.gguf$/);
    const slots = (await (await fetch(`${srv.base}/slots`)).json()) as any[];
    assert.equal(slots.length, 6);
    assert.ok(slots.every((s) => s.n_ctx === 256));
    for (const p of ['/v1/models', '/models']) {
      const m = (await (await fetch(`${srv.base}${p}`)).json()) as any;
      assert.equal(m.object, 'list');
      assert.equal(m.data[0].id, 'tinyllama-2');
      assert.equal(m.data[0].meta.n_vocab, 512);
    }
    const models = await client.models.list();
    assert.equal(models.data[0]!.id, 'tinyllama-2');
    assert.deepEqual(await (await fetch(`${srv.base}/health`)).json(), { status: 'ok' });
    const metrics = await (await fetch(`${srv.base}/metrics`)).text();
    for (const name of ['llamacpp:prompt_tokens_total', 'llamacpp:tokens_predicted_total', 'llamacpp:requests_processing', 'llamacpp:requests_deferred', 'llamacpp:kv_cache_usage_ratio', 'gguf_edge_time_to_first_token_seconds_bucket{le="+Inf"}', 'gguf_edge_http_requests_total{route="/v1/chat/completions",status="200"}']) {
      assert.ok(metrics.includes(name), name);
    }
    assert.match(metrics, /^llamacpp:tokens_predicted_total [1-9]\d*$/m);
  });

  test('cache_prompt: the same prompt again reuses the slot\'s prefix (prompt_n + cache_n == n_prompt)', async () => {
    const body = { prompt: 'I believe the meaning of life is', max_tokens: 4, temperature: 0 };
    const a = (await (await post(srv.base, '/completions', body)).json()) as any;
    const b = (await (await post(srv.base, '/completions', body)).json()) as any;
    assert.equal(a.usage.prompt_tokens, 18);
    assert.equal(b.timings.prompt_n + b.timings.cache_n, 18);
    assert.equal(b.timings.cache_n, 17); // all but the last token, evaluated again for its logits
    assert.equal(b.choices[0].text, a.choices[0].text);
    const c = (await (await post(srv.base, '/completions', { ...body, cache_prompt: false })).json()) as any;
    assert.equal(c.timings.cache_n, 0);
    assert.equal(c.choices[0].text, a.choices[0].text);
  });

  test('12 concurrent streams (6 slots, 6 queued) each equal their sequential answer', async () => {
    const prompts = Array.from({ length: 12 }, (_, i) => ['Once upon a time', 'Lily and Tom', 'The cat', 'One day', 'Tim had a ball', 'The sun was'][i % 6]! + ' '.repeat(i >= 6 ? 1 : 0) + (i >= 6 ? 'and then' : ''));
    const body = (p: string) => ({ prompt: p, max_tokens: 24, temperature: 0, ignore_eos: true });
    const seq: string[] = [];
    for (const p of prompts) seq.push(((await (await post(srv.base, '/v1/completions', body(p))).json()) as any).choices[0].text);
    const streams = await Promise.all(prompts.map(async (p) => {
      const s = await client.completions.create({ model: 'x', ...body(p), stream: true });
      let t = '';
      for await (const ch of s) t += ch.choices[0]?.text ?? '';
      return t;
    }));
    assert.deepEqual(streams, seq);
    const m = await (await fetch(`${srv.base}/metrics`)).text();
    // batching: fewer evaluations than tokens (one step decodes every active slot)
    const decodes = Number(/^llamacpp:n_decode_total (\d+)/m.exec(m)![1]);
    assert.ok(decodes > 0);
  });

  test('a long prompt is read in chunks between decode steps: a running stream keeps flowing meanwhile', async () => {
    const r = await fetch(`${srv.base}/v1/completions`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ prompt: 'Once upon a time', max_tokens: 200, ignore_eos: true, stream: true }) });
    const reader = r.body!.getReader();
    const dec = new TextDecoder();
    let chunks = 0, buf = '';
    const readA = (async () => {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buf += dec.decode(value, { stream: true });
        chunks += buf.split('\n\n').length - 1;
        buf = buf.slice(buf.lastIndexOf('\n\n') + 2);
      }
    })();
    while (chunks < 2) await new Promise((ok) => setTimeout(ok, 5));
    // 200 prompt tokens at --prefill-chunk 16 take 13 steps, each of which also decodes the running stream
    const long = Array.from({ length: 199 }, (_, i) => 300 + (i % 100));
    const before = chunks;
    const b = await client.completions.create({ model: 'x', prompt: [1, ...long], max_tokens: 1, stream: true });
    let first = -1;
    for await (const ch of b) if (first < 0 && ch.choices[0]?.text !== undefined) first = chunks;
    assert.ok(first - before >= 10, `the running stream got ${first - before} chunks while the 200-token prompt was read`);
    await readA;
  });

  test('aborted streams free their slots at once; the server keeps serving', async () => {
    const ctrls = Array.from({ length: 6 }, () => new AbortController());
    await Promise.all(ctrls.map(async (ctrl, i) => {
      const r = await fetch(`${srv.base}/v1/completions`, { method: 'POST', signal: ctrl.signal, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ prompt: `Story ${i}:`, max_tokens: 200, ignore_eos: true, stream: true }) });
      const reader = r.body!.getReader();
      await reader.read(); // the first chunk arrived: the slot is generating
      ctrl.abort();
    }));
    const slots = await waitIdle(srv.base, 3000);
    assert.ok(slots.every((s) => !s.is_processing), JSON.stringify(slots));
    const m = await (await fetch(`${srv.base}/metrics`)).text();
    assert.ok(Number(/^gguf_edge_tasks_cancelled_total (\d+)/m.exec(m)![1]) >= 6);
    const ok = await client.completions.create({ model: 'x', prompt: 'Once upon a time', max_tokens: 4, temperature: 0 });
    assert.equal(ok.usage!.completion_tokens, 4);
  });

  test('n = 2 gives two choices; logprobs: logprob <= 0, bytes, tokens concatenate to the content (llama-server test_logprobs)', async () => {
    const messages = [{ role: 'system' as const, content: 'Book' }, { role: 'user' as const, content: 'What is the best book' }];
    const two = await client.chat.completions.create({ model: 'x', messages, max_tokens: 4, n: 2, temperature: 0 });
    assert.deepEqual(two.choices.map((c) => c.index), [0, 1]);
    assert.equal(two.choices[0]!.message.content, two.choices[1]!.message.content);
    assert.equal(two.usage!.completion_tokens, 8);
    const res = await client.chat.completions.create({ model: 'x', messages, max_tokens: 5, temperature: 0, logprobs: true, top_logprobs: 10 });
    const lp = res.choices[0]!.logprobs!.content!;
    assert.equal(lp.length, 5);
    let agg = '';
    for (const t of lp) {
      agg += t.token;
      assert.ok(t.logprob <= 0);
      assert.ok(Array.isArray(t.bytes));
      assert.equal(t.top_logprobs.length, 10);
      assert.equal(t.top_logprobs[0]!.logprob, t.logprob); // greedy: the chosen token is the most likely
      for (let i = 1; i < 10; i++) assert.ok(t.top_logprobs[i]!.logprob <= t.top_logprobs[i - 1]!.logprob);
    }
    assert.equal(agg, res.choices[0]!.message.content);
    const stream = await client.chat.completions.create({ model: 'x', messages, max_tokens: 5, temperature: 0, logprobs: true, top_logprobs: 3, stream: true });
    let out = '', agg2 = '';
    for await (const ch of stream) {
      const c = ch.choices[0];
      if (!c) continue;
      out += c.delta.content ?? '';
      for (const t of c.logprobs?.content ?? []) agg2 += t.token;
    }
    assert.equal(out, res.choices[0]!.message.content);
    assert.equal(agg2, out);
  });

  test('stop strings end the text before the stop; finish_reason stop', async () => {
    const full = ((await (await post(srv.base, '/completions', { prompt: 'Once upon a time', max_tokens: 16, temperature: 0 })).json()) as any).choices[0].text as string;
    const word = full.split(' ').slice(3, 4)[0]!;
    const cut = full.indexOf(word);
    for (const stream of [false, true]) {
      const r = await post(srv.base, '/completions', { prompt: 'Once upon a time', max_tokens: 16, temperature: 0, stop: [word], stream });
      let text: string, finish: string;
      if (stream) {
        const { events } = await readSse(r);
        text = events.map((e) => e.choices[0]?.text ?? '').join('');
        finish = events[events.length - 1].choices[0].finish_reason;
      } else {
        const j = (await r.json()) as any;
        text = j.choices[0].text; finish = j.choices[0].finish_reason;
      }
      assert.equal(text, full.slice(0, cut));
      assert.equal(finish, 'stop');
    }
  });

  test('bad input gets the right status and error body, and the server keeps serving', async () => {
    const expect = async (r: Response, status: number, type: string) => {
      assert.equal(r.status, status);
      const j = (await r.json()) as any;
      assert.equal(j.error.code, status);
      assert.equal(j.error.type, type);
      assert.equal(typeof j.error.message, 'string');
      return j.error;
    };
    await expect(await post(srv.base, '/v1/chat/completions', '{"messages": [}'), 400, 'invalid_request_error');
    await expect(await post(srv.base, '/v1/chat/completions', '[1,2]'), 400, 'invalid_request_error');
    await expect(await post(srv.base, '/v1/chat/completions', {}), 400, 'invalid_request_error');
    await expect(await post(srv.base, '/v1/completions', { max_tokens: 3 }), 400, 'invalid_request_error');
    // llama-server's test_invalid_chat_completion_req cases
    for (const messages of [null, 'string', [123], [{}], [{ role: 123 }], [{ role: 'system', content: 123 }], [{ role: 'system', content: 'test' }, {}], [{ role: 'user', content: 'test' }, { role: 'assistant', content: 'test' }, { role: 'assistant', content: 'test' }]]) {
      await expect(await post(srv.base, '/chat/completions', { messages }), 400, 'invalid_request_error');
    }
    const msgs = [{ role: 'user', content: 'hi' }];
    for (const bad of [{ max_tokens: 'ten' }, { max_tokens: -5 }, { temperature: 'hot' }, { top_p: 2 }, { seed: 1.5 }, { stop: [1] }, { stream: 'yes' }, { n: 0 }, { logprobs: 'x' }, { stream_options: 5 }]) {
      await expect(await post(srv.base, '/v1/chat/completions', { messages: msgs, ...bad }), 400, 'invalid_request_error');
    }
    await expect(await post(srv.base, '/v1/completions', { prompt: [1, 2, 99999] }), 400, 'invalid_request_error');
    await expect(await post(srv.base, '/v1/completions', { prompt: { a: 1 } }), 400, 'invalid_request_error');
    // constrained-output fields the request cannot have are refused rather than ignored (test/server/structured.test.ts has the rest)
    await expect(await post(srv.base, '/v1/chat/completions', { messages: msgs, response_format: { type: 'xml' } }), 400, 'invalid_request_error');
    await expect(await post(srv.base, '/v1/chat/completions', { messages: msgs, grammar: 'root ::= (' }), 400, 'invalid_request_error');
    await expect(await post(srv.base, '/v1/chat/completions', { messages: msgs, tools: [{ type: 'function', function: { name: 'f' } }] }), 400, 'not_supported_error'); // ChatML built-in: no tool calling
    // a prompt over a slot's context (256): 400 naming both lengths, also when streaming (llama-server: 400, not SSE)
    const long = 'Hello '.repeat(300);
    for (const stream of [false, true]) {
      const e = await expect(await post(srv.base, '/v1/completions', { prompt: long, stream }), 400, 'exceed_context_size_error');
      assert.equal(e.n_ctx, 256);
      assert.ok(e.n_prompt_tokens > 256);
      assert.match(e.message, new RegExp(`${e.n_prompt_tokens}.*256`));
    }
    await expect(await fetch(`${srv.base}/v1/nothing`), 404, 'not_found_error');
    await expect(await fetch(`${srv.base}/v1/chat/completions`), 405, 'invalid_request_error');
    await expect(await post(srv.base, '/tokenize', { content: 5 }), 400, 'invalid_request_error');
    await expect(await post(srv.base, '/detokenize', { tokens: ['a'] }), 400, 'invalid_request_error');
    await expect(await post(srv.base, '/v1/completions', JSON.stringify({ prompt: 'x'.repeat(5 * 1024 * 1024) })), 413, 'invalid_request_error');
    // the openai client sees the error as an APIError with the status
    await assert.rejects(client.chat.completions.create({ model: 'x', messages: [] }), (e: any) => e.status === 400);
    assert.equal((await fetch(`${srv.base}/health`)).status, 200);
    const ok = await client.completions.create({ model: 'x', prompt: 'Once upon a time', max_tokens: 2 });
    assert.equal(ok.usage!.completion_tokens, 2);
    assert.equal(srv.proc.exitCode, null);
  });
});

/** Sends raw bytes on a TCP connection and returns what the server answered before closing it. */
function raw(base: string, bytes: string, waitMs = 0): Promise<string> {
  const u = new URL(base);
  return new Promise((ok, fail) => {
    const sock = connect(Number(u.port), u.hostname);
    let got = '';
    sock.setEncoding('utf8');
    sock.on('data', (d) => { got += d; });
    sock.on('close', () => ok(got));
    sock.on('error', fail);
    sock.write(bytes);
    if (!waitMs) sock.end();
  });
}

describe('serve --api-key --cors -np 1 --max-queue 0 -to 1', () => {
  let srv: ServeProcess;
  before(async () => { srv = await startServe([model, '-c', '256', '--api-key', 'sekret', '--cors', 'http://app.example', '--max-queue', '0', '-to', '1']); });
  after(async () => { await srv?.stop(); });

  test('a missing or wrong key is 401 authentication_error; /health and /models are public; the openai client authenticates', async () => {
    for (const headers of [{}, { Authorization: 'Bearer wrong' }, { Authorization: 'sekret' }] as Record<string, string>[]) {
      const r = await post(srv.base, '/v1/completions', { prompt: 'a', max_tokens: 1 }, headers);
      assert.equal(r.status, 401);
      assert.equal(((await r.json()) as any).error.type, 'authentication_error');
    }
    assert.equal((await fetch(`${srv.base}/metrics`)).status, 401);
    assert.equal((await fetch(`${srv.base}/health`)).status, 200);
    assert.equal((await fetch(`${srv.base}/v1/models`)).status, 200);
    const bad = new OpenAI({ apiKey: 'nope', baseURL: `${srv.base}/v1`, maxRetries: 0 });
    await assert.rejects(bad.completions.create({ model: 'x', prompt: 'a', max_tokens: 1 }), (e: any) => e.status === 401);
    const good = new OpenAI({ apiKey: 'sekret', baseURL: `${srv.base}/v1`, maxRetries: 0 });
    const r = await good.completions.create({ model: 'x', prompt: 'Once upon a time', max_tokens: 2 });
    assert.equal(r.usage!.completion_tokens, 2);
    const x = await post(srv.base, '/tokenize', { content: 'a' }, { 'X-Api-Key': 'sekret' });
    assert.equal(x.status, 200);
  });

  test('CORS: the allowed origin is echoed (preflight too), others get no CORS headers', async () => {
    const pre = await fetch(`${srv.base}/v1/completions`, { method: 'OPTIONS', headers: { Origin: 'http://app.example', 'Access-Control-Request-Method': 'POST' } });
    assert.equal(pre.status, 204);
    assert.equal(pre.headers.get('access-control-allow-origin'), 'http://app.example');
    assert.equal(pre.headers.get('access-control-allow-credentials'), 'true');
    assert.equal(pre.headers.get('access-control-allow-methods'), 'GET, POST');
    const other = await fetch(`${srv.base}/health`, { headers: { Origin: 'http://evil.example' } });
    assert.equal(other.headers.get('access-control-allow-origin'), null);
  });

  test('malformed HTTP is a 400; a client that sends its body too slowly is cut off (408); the server keeps serving', async () => {
    assert.match(await raw(srv.base, 'GARBAGE\r\n\r\n'), /^HTTP\/1\.1 400/);
    const t0 = Date.now();
    const slow = await raw(srv.base, 'POST /v1/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer sekret\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"prompt":', 1);
    assert.match(slow, /^HTTP\/1\.1 408/);
    assert.ok(Date.now() - t0 < 5000);
    assert.equal((await fetch(`${srv.base}/health`)).status, 200);
  });

  test('a full queue is 503 unavailable_error with Retry-After', async () => {
    const ctrl = new AbortController();
    const first = await fetch(`${srv.base}/v1/completions`, { method: 'POST', signal: ctrl.signal, headers: { Authorization: 'Bearer sekret', 'Content-Type': 'application/json' }, body: JSON.stringify({ prompt: 'Once', max_tokens: 200, ignore_eos: true, stream: true }) });
    await first.body!.getReader().read();
    const r = await post(srv.base, '/v1/completions', { prompt: 'a', max_tokens: 1 }, { Authorization: 'Bearer sekret' });
    assert.equal(r.status, 503);
    assert.ok(Number(r.headers.get('retry-after')) > 0);
    assert.equal(((await r.json()) as any).error.type, 'unavailable_error');
    ctrl.abort();
  });
});

describe('serve without --cors', () => {
  test('no CORS headers, loopback address, unknown option is a usage error', async () => {
    const srv = await startServe([model, '-c', '128']);
    try {
      assert.match(srv.base, /^http:\/\/127\.0\.0\.1:\d+$/);
      const r = await fetch(`${srv.base}/health`, { headers: { Origin: 'http://app.example' } });
      assert.equal(r.headers.get('access-control-allow-origin'), null);
      // SIGTERM with a stream running: the step in flight ends, then a clean exit
      const s = await fetch(`${srv.base}/v1/completions`, { method: 'POST', body: JSON.stringify({ prompt: 'Once', max_tokens: 100, ignore_eos: true, stream: true }) });
      await s.body!.getReader().read();
    } finally { await srv.stop(); }
    assert.equal(srv.proc.exitCode, 0);
    const bad = spawnSync(process.execPath, [bin, 'serve', model, '--parallel', 'x'], { encoding: 'utf8' });
    assert.equal(bad.status, 1);
    assert.match(bad.stderr, /\[USAGE\] --parallel/);
  });
});

describe('serve --context-shift (-c 128 -np 2: 64 tokens per slot)', () => {
  let srv: ServeProcess;
  before(async () => { srv = await startServe([model, '-c', '128', '-np', '2', '--temp', '0', '--context-shift']); });
  after(async () => { await srv?.stop(); });

  test("a request past its slot's context goes on with shifts in place: the text `run --keep` gives (llama.cpp's, test/cli)", async () => {
    const want = await runGreedy(['-p', 'Once upon a time', '-n', '150', '-c', '64', '--keep', '5', '--ignore-eos']);
    // one after the other (the second reuses a slot whose cache the first shifted: its cached prompt prefix). Not at once:
    // stories260K's f32 weights run another float order for two tokens batched than for one (NOTES.md), and this
    // text passes a near tie (margin 1.2e-5, test/cli/llamacpp-run) that such a difference can flip
    const one = async () => {
      const r = await post(srv.base, '/v1/completions', { prompt: 'Once upon a time', max_tokens: 150, n_keep: 5, ignore_eos: true, temperature: 0 });
      assert.equal(r.status, 200, await r.clone().text());
      return r.json() as Promise<{ choices: { text: string; finish_reason: string }[]; usage: { completion_tokens: number } }>;
    };
    const a = await one(), b = await one();
    for (const r of [a!, b!]) {
      assert.equal(r.usage.completion_tokens, 150);
      assert.equal(r.choices[0]!.finish_reason, 'length');
      assert.equal(r.choices[0]!.text, want.text);
    }
  });
});
