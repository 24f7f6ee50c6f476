// The library API (src/api) against llama.cpp's recorded greedy runs (fixtures/reference/greedy-llama.cpp.json)
// and against the CLI: every input kind, stop strings, abort, finish reasons, usage/timings, typed errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { createServer } from 'node:http';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { loadModel, GgufError, UsageError, ContextError, type TokenEvent } from '../../src/api/index.js';
import { fixture, repoRoot } from '../helpers/fixtures.js';

const STORIES = fixture('models/stories260K.gguf');
interface GreedyCase { model: string; prompt: string; prompt_ids: number[]; default: { generated_ids: number[]; generated_text: string } }
const greedy = JSON.parse(readFileSync(fixture('reference/greedy-llama.cpp.json'), 'utf8')) as { cases: GreedyCase[] };
const llama = (model: string, prompt: string) => greedy.cases.find((c) => c.model === model && c.prompt === prompt)!;

test('greedy generation gives llama.cpp\'s tokens and text, and the CLI\'s run --temp 0 text', async () => {
  const model = await loadModel(STORIES);
  try {
    const ctx = await model.createContext({ ctx: 256 });
    for (const prompt of ['Once upon a time', 'Lily and Tom']) {
      const ref = llama('stories260K.gguf', prompt);
      const n = ref.default.generated_ids.length;
      assert.deepEqual(model.tokenize(prompt), ref.prompt_ids);
      const g = ctx.generate(prompt, { maxTokens: n, temperature: 0 });
      const events: TokenEvent[] = [];
      for await (const e of g) events.push(e);
      const r = await g.result;
      assert.deepEqual(events.map((e) => e.token), ref.default.generated_ids);
      assert.deepEqual(r.tokens, ref.default.generated_ids);
      assert.equal(r.text, ref.default.generated_text);
      assert.equal(events.map((e) => e.text).join(''), r.text);
      assert.equal(r.finishReason, 'length');
      assert.deepEqual(r.usage, { prompt_tokens: ref.prompt_ids.length, completion_tokens: n, total_tokens: ref.prompt_ids.length + n });
      const cli = spawnSync(process.execPath, [resolve(repoRoot, 'bin/gguf-edge.js'), 'run', STORIES, '-p', prompt, '-n', String(n), '--temp', '0'], { encoding: 'utf8' });
      assert.equal(cli.status, 0, cli.stderr);
      assert.equal(cli.stdout, prompt + r.text + '\n');
    }
  } finally {
    await model.close();
  }
});

test('a path, a file: URL, a Uint8Array, an ArrayBuffer and a Blob load the same model', async () => {
  const bytes = readFileSync(STORIES);
  const ref = llama('stories260K.gguf', 'Once upon a time').default.generated_ids.slice(0, 8);
  const sources = [STORIES, pathToFileURL(STORIES), pathToFileURL(STORIES).href, new Uint8Array(bytes), bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength), new Blob([bytes])];
  for (const src of sources) {
    const model = await loadModel(src as never);
    const ctx = await model.createContext({ ctx: 64 });
    const r = await ctx.generate('Once upon a time', { maxTokens: 8, temperature: 0 }).result;
    assert.deepEqual(r.tokens, ref, String(src));
    assert.equal(model.metadata['general.architecture'], 'llama');
    await model.close();
  }
});

test('device and threads options: the reference device and a 1-thread cpu device give llama.cpp\'s tokens', async () => {
  const ref = llama('stories260K.gguf', 'Lily and Tom').default.generated_ids;
  for (const o of [{ device: 'reference' }, { threads: 1, numerics: 'exact' as const }]) {
    const model = await loadModel(STORIES, o);
    assert.equal(model.runtime.device.name, o.device ?? 'cpu');
    const ctx = await model.createContext({ ctx: 128, kvType: 'f32' });
    const r = await ctx.generate('Lily and Tom', { temperature: 0, maxTokens: ref.length }).result;
    assert.deepEqual(r.tokens, ref, JSON.stringify(o));
    await model.close();
  }
  await assert.rejects(loadModel(STORIES, { threads: 0 }), (e: unknown) => e instanceof UsageError && e.option === 'threads');
  const model = await loadModel(STORIES);
  await assert.rejects(model.createContext({ kvType: 'q8' as never }), (e: unknown) => e instanceof UsageError && e.option === 'kvType');
  await model.close();
});

test('http(s) URLs go through fetch, with progress; a 404 is FETCH_FAILED', async () => {
  const bytes = readFileSync(STORIES);
  const server = createServer((req, res) => {
    if (req.url === '/m.gguf') { res.writeHead(200, { 'content-length': bytes.length }); res.end(bytes); } else { res.writeHead(404); res.end(); }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  try {
    const seen: { phase: string; loaded: number; total: number | undefined }[] = [];
    const model = await loadModel(`http://127.0.0.1:${port}/m.gguf`, { onProgress: (p) => seen.push(p) });
    const fetched = seen.filter((p) => p.phase === 'fetch');
    assert.deepEqual(fetched[fetched.length - 1], { phase: 'fetch', loaded: bytes.length, total: bytes.length });
    const w = seen.filter((p) => p.phase === 'weights');
    assert.ok(w.length > 0 && w[w.length - 1]!.loaded === w[w.length - 1]!.total);
    const ctx = await model.createContext({ ctx: 64 });
    const r = await ctx.generate('Once upon a time', { maxTokens: 4, temperature: 0 }).result;
    assert.deepEqual(r.tokens, llama('stories260K.gguf', 'Once upon a time').default.generated_ids.slice(0, 4));
    await model.close();
    await assert.rejects(loadModel(`http://127.0.0.1:${port}/missing.gguf`), (e: unknown) => e instanceof UsageError && e.code === 'FETCH_FAILED' && /404/.test(e.message));
  } finally {
    server.close();
  }
});

test('metadata, tokenize/detokenize, chat template, isEog', async () => {
  const model = await loadModel(STORIES);
  try {
    assert.equal(model.architecture, 'llama');
    assert.equal(model.vocabSize, 512);
    assert.equal(model.metadata['llama.context_length'], model.contextLength);
    const ids = model.tokenize('Once upon a time');
    assert.deepEqual(ids, [1, 403, 407, 261, 378]);
    assert.deepEqual(model.tokenize('Once upon a time', { addSpecial: false }), [403, 407, 261, 378]);
    const ref = llama('stories260K.gguf', 'Once upon a time').default;
    assert.equal(model.detokenize(ref.generated_ids), ref.generated_text);
    assert.equal(model.isEog(model.eos!), true);
    assert.equal(model.isEog(403), false);
    // no template in the file: llama.cpp's default, ChatML
    assert.equal(model.applyChatTemplate([{ role: 'user', content: 'Hi' }]), '<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n');
    assert.equal(model.applyChatTemplate([{ role: 'user', content: 'Hi' }], { template: 'llama3' }), '<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n');
    assert.throws(() => model.detokenize([9999]), (e: unknown) => e instanceof UsageError && e.code === 'USAGE');
    assert.ok(model.runtime.model.hp.nLayer > 0 && model.runtime.tokenizer.nVocab === 512);
  } finally {
    await model.close();
  }
});

test('stop strings: the text ends before the stop string, nothing past it is ever emitted', async () => {
  const model = await loadModel(STORIES);
  try {
    const ctx = await model.createContext({ ctx: 256 });
    const ref = llama('stories260K.gguf', 'Once upon a time').default;
    for (const stop of [' girl', 'Lily. She', 'y. S', 'park']) {
      let streamed = '';
      const g = ctx.generate('Once upon a time', { maxTokens: 32, temperature: 0, stop: ['never appears', stop], onToken: (e) => { streamed += e.text; } });
      for await (const e of g) assert.ok(!streamed.includes(stop) && !e.text.includes(stop));
      const r = await g.result;
      const at = ref.generated_text.indexOf(stop);
      assert.equal(r.text, ref.generated_text.slice(0, at), stop);
      assert.equal(streamed, r.text);
      assert.equal(r.finishReason, 'stop');
      assert.equal(r.stoppedBy, 'stop-string');
      assert.equal(r.stopString, stop);
      // the tokens sampled are llama.cpp's, up to the one that completed the stop string
      assert.deepEqual(r.tokens, ref.generated_ids.slice(0, r.tokens.length));
      assert.ok(model.detokenize(r.tokens).includes(stop));
      assert.ok(!model.detokenize(r.tokens.slice(0, -1)).includes(stop));
    }
    // a stop string that is held back at the length limit is released at the end
    const r = await ctx.generate('Once upon a time', { maxTokens: 3, temperature: 0, stop: [' littleX'] }).result;
    assert.equal(r.text, model.detokenize(ref.generated_ids.slice(0, 3)));
  } finally {
    await model.close();
  }
});

test('AbortSignal stops promptly (finish abort), the context stays usable; leaving the loop early aborts too', async () => {
  const model = await loadModel(STORIES);
  try {
    const ctx = await model.createContext({ ctx: 256 });
    const ref = llama('stories260K.gguf', 'Once upon a time').default.generated_ids;
    const ac = new AbortController();
    const g = ctx.generate('Once upon a time', { temperature: 0, ignoreEos: true, signal: ac.signal, onToken: () => { if (ctx.tokens.length >= 9) ac.abort(); } });
    const r = await g.result;
    assert.equal(r.finishReason, 'abort');
    assert.deepEqual(r.tokens, ref.slice(0, r.tokens.length));
    assert.ok(r.tokens.length <= 6, `${r.tokens.length} tokens after the abort`);
    // a timer fires between tokens
    const ac2 = new AbortController();
    setTimeout(() => ac2.abort(), 30);
    const t0 = performance.now();
    const r2 = await ctx.generate('Lily', { temperature: 0, ignoreEos: true, maxTokens: 100000, signal: ac2.signal, contextShift: true }).result;
    assert.equal(r2.finishReason, 'abort');
    assert.ok(performance.now() - t0 < 2000);
    // already aborted: nothing evaluated
    const r3 = await ctx.generate('Lily', { signal: AbortSignal.abort() }).result;
    assert.equal(r3.finishReason, 'abort');
    assert.equal(r3.tokens.length, 0);
    // breaking out of for-await ends the generation
    const g4 = ctx.generate('Once upon a time', { temperature: 0, maxTokens: 20 });
    let k = 0;
    for await (const _ of g4) if (++k === 4) break;
    const r4 = await g4.result;
    assert.equal(r4.finishReason, 'abort');
    assert.deepEqual(r4.tokens, ref.slice(0, 4));
    // and the context is still exact
    const r5 = await ctx.generate('Once upon a time', { temperature: 0, maxTokens: 32 }).result;
    assert.deepEqual(r5.tokens, ref);
    assert.equal(r5.timings.prompt_n, 1); // the whole prompt was cached
  } finally {
    await model.close();
  }
});

test('finish reasons length/context/stop(eog); usage and timings', async () => {
  const model = await loadModel(STORIES);
  try {
    const small = await model.createContext({ ctx: 16 });
    const ref = llama('stories260K.gguf', 'Once upon a time').default.generated_ids;
    const r = await small.generate('Once upon a time', { temperature: 0 }).result;
    assert.equal(r.finishReason, 'context');
    assert.deepEqual(r.tokens, ref.slice(0, 12)); // 5 prompt + 11 evaluated, the 12th sampled from the last logits
    const tokPrompt = await small.generate([1, 403, 407, 261, 378], { temperature: 0, maxTokens: 5 }).result;
    assert.deepEqual(tokPrompt.tokens, ref.slice(0, 5));
  } finally {
    await model.close();
  }
  // TinyStories-656K ends its greedy story with EOS after ~100 tokens: the CLI's run --json tokens (EOS included)
  const q8 = fixture('models/TinyStories-656K-Q8_0.gguf');
  const model2 = await loadModel(q8);
  try {
    const ctx = await model2.createContext({ ctx: 512 });
    const long = await ctx.generate('Once upon a time', { temperature: 0 }).result;
    const cli = spawnSync(process.execPath, [resolve(repoRoot, 'bin/gguf-edge.js'), 'run', q8, '-p', 'Once upon a time', '-n', '400', '--temp', '0', '--json'], { encoding: 'utf8' });
    assert.equal(cli.status, 0, cli.stderr);
    const out = JSON.parse(cli.stdout) as { tokens: number[]; text: string };
    assert.deepEqual(long.tokens, out.tokens);
    assert.equal(long.text, out.text);
    assert.equal(long.finishReason, 'stop');
    assert.equal(long.stoppedBy, 'eog');
    assert.equal(model2.isEog(long.tokens[long.tokens.length - 1]!), true);
    const t = long.timings;
    for (const k of ['prompt_ms', 'predicted_ms', 'prompt_per_second', 'predicted_per_second'] as const) assert.ok(t[k] > 0, k);
    const np = model2.tokenize('Once upon a time').length;
    assert.equal(t.prompt_n, np);
    assert.equal(t.predicted_n, long.tokens.length);
    assert.deepEqual(long.usage, { prompt_tokens: np, completion_tokens: long.tokens.length, total_tokens: np + long.tokens.length });
  } finally {
    await model2.close();
  }
});

test('typed errors with stable codes; close is idempotent and stops generations', async () => {
  await assert.rejects(loadModel('/nonexistent/model.gguf'), (e: unknown) => e instanceof GgufError && e.code === 'NOT_FOUND');
  await assert.rejects(loadModel(42 as never), (e: unknown) => e instanceof UsageError && e.code === 'UNSUPPORTED_INPUT');
  await assert.rejects(loadModel(STORIES, { device: 'no-such-device' }), (e: unknown) => e instanceof UsageError && e.code === 'USAGE' && e.option === 'device');
  await assert.rejects(loadModel(new Uint8Array(64)), (e: unknown) => e instanceof GgufError && e.code === 'BAD_MAGIC');
  const model = await loadModel(STORIES);
  const ctx = await model.createContext({ ctx: 32 });
  await assert.rejects(model.createContext({ ctx: 0 }), (e: unknown) => e instanceof UsageError && e.option === 'ctx');
  await assert.rejects(ctx.generate('x', { temperature: Number.NaN }).result, (e: unknown) => e instanceof UsageError && e.option === 'temperature');
  await assert.rejects(ctx.generate([]).result, (e: unknown) => e instanceof UsageError && e.code === 'USAGE');
  await assert.rejects(ctx.generate([100000]).result, (e: unknown) => e instanceof ContextError && e.code === 'BAD_TOKEN');
  await assert.rejects(ctx.generate(Array(40).fill(5)).result, (e: unknown) => e instanceof ContextError && e.code === 'CONTEXT_FULL');
  // one generation at a time
  const g1 = ctx.generate('Once', { maxTokens: 20, ignoreEos: true });
  const it = g1[Symbol.asyncIterator]();
  await it.next();
  await assert.rejects(ctx.generate('Once').result, (e: unknown) => e instanceof UsageError && e.code === 'BUSY');
  // closing while a generation waits between two events ends it ('abort') and frees once
  await Promise.all([model.close(), model.close(), ctx.close()]);
  assert.equal((await g1.result).finishReason, 'abort');
  await model.close();
  await assert.rejects(ctx.generate('Once').result, (e: unknown) => e instanceof UsageError && e.code === 'CLOSED');
  assert.throws(() => model.tokenize('x'), (e: unknown) => e instanceof UsageError && e.code === 'CLOSED');
});

test('loading a model file does not block the event loop (a server answers /health 503 meanwhile), and gives the same model', async () => {
  // tensor reads go through libuv (src/gguf/file-source.ts readAsync): the event loop turns between them
  let turns = 0, spinning = true;
  const spin = () => { turns++; if (spinning) setImmediate(spin); };
  setImmediate(spin);
  const model = await loadModel(STORIES);
  spinning = false;
  try {
    assert.ok(turns >= 3, `the event loop turned ${turns} times while ${STORIES} loaded`);
    const ref = llama('stories260K.gguf', 'Once upon a time');
    const ctx = await model.createContext({ ctx: 128 });
    const r = await ctx.generate('Once upon a time', { maxTokens: ref.default.generated_ids.length, temperature: 0 }).result;
    assert.deepEqual(r.tokens, ref.default.generated_ids);
  } finally {
    await model.close();
  }
});

test('flashAttn: on gives llama.cpp\'s flash-attention greedy tokens (parity-fa), off its plain ones; auto is off on the cpu device; bad values are typed', async () => {
  // phi3-f16: llama.cpp's greedy continuation of its first sequence differs with flash attention on and off
  const refFa = JSON.parse(readFileSync(fixture('parity-fa/phi3-f16.ref.json'), 'utf8')) as { sequences: { prompt: number[]; continuation: number[] }[] };
  const refPlain = JSON.parse(readFileSync(fixture('parity/phi3-f16.ref.json'), 'utf8')) as typeof refFa;
  assert.notDeepEqual(refFa.sequences[0]!.continuation, refPlain.sequences[0]!.continuation);
  const model = await loadModel(fixture('parity/phi3-f16.gguf'), { threads: 1, numerics: 'exact' });
  try {
    for (const [mode, ref] of [['on', refFa], ['off', refPlain]] as const) {
      const ctx = await model.createContext({ ctx: 256, flashAttn: mode });
      assert.equal(ctx.flashAttn, mode === 'on');
      for (const seq of ref.sequences) {
        const r = await ctx.generate(seq.prompt, { maxTokens: seq.continuation.length, temperature: 0, ignoreEos: true }).result;
        assert.deepEqual(r.tokens, seq.continuation, `flashAttn ${mode}`);
      }
      await ctx.close();
    }
    const auto = await model.createContext({ ctx: 64 });
    assert.equal(auto.flashAttn, false, 'auto: the cpu device supports flash attention but does not prefer it');
    await auto.close();
    await assert.rejects(model.createContext({ flashAttn: 'yes' as never }), (e: unknown) => e instanceof UsageError && e.option === 'flashAttn');
  } finally {
    await model.close();
  }
});

test('kvType q8_0: llama.cpp\'s greedy tokens with a q8_0 KV cache (parity-kvq8), flash attention on by auto, off refused', async () => {
  const ref = JSON.parse(readFileSync(fixture('parity-kvq8/phi3-f16.ref.json'), 'utf8')) as { sequences: { prompt: number[]; continuation: number[] }[] };
  const model = await loadModel(fixture('parity/phi3-f16.gguf'), { threads: 1, numerics: 'exact' });
  try {
    const ctx = await model.createContext({ ctx: 256, kvType: 'q8_0' });
    assert.equal(ctx.kvType, 'q8_0');
    assert.equal(ctx.flashAttn, true, 'auto turns flash attention on for a quantized cache');
    for (const seq of ref.sequences) {
      const r = await ctx.generate(seq.prompt, { maxTokens: seq.continuation.length, temperature: 0, ignoreEos: true }).result;
      assert.deepEqual(r.tokens, seq.continuation);
    }
    await ctx.close();
    await assert.rejects(model.createContext({ kvType: 'q8_0', flashAttn: 'off' }), (e: unknown) => e instanceof UsageError && e.option === 'flashAttn' && /flash attention/.test((e as Error).message));
  } finally {
    await model.close();
  }
});
