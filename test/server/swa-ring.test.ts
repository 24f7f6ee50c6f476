// serve's cache_prompt with sliding-window rings (src/runtime/swa-ring.ts): gemma3-f16 (sliding_window 16) in a
// 512-token slot with 16-token batches keeps a 256-row ring. A cached prefix is reused only while the ring still
// holds the 15 positions before its end; otherwise the prompt is evaluated again (cache_n 0), as llama-server
// does ("forcing full prompt re-processing due to lack of cache data"). Oracle: the same request with
// cache_prompt false (a fresh evaluation) gives the same tokens.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { fixture } from '../helpers/fixtures.js';
import { readRef } from '../helpers/parity.js';
import { startServe, type ServeProcess } from '../helpers/serve.js';

const post = async (base: string, body: unknown): Promise<any> =>
  (await fetch(`${base}/completions`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) })).json();

let srv: ServeProcess;
before(async () => { srv = await startServe([fixture('parity/gemma3-f16.gguf'), '-c', '512', '-np', '1', '-b', '16', '--temp', '0']); });
after(async () => { await srv.stop(); });

// 400 prompt tokens (the fixture's sequences, repeated), and another 100 to end a prompt differently
const ref = readRef('gemma3-f16');
const pool = ref.sequences.flatMap((s) => [...s.prompt.slice(1), ...s.continuation]);
const ids = (n: number, from: number) => Array.from({ length: n }, (_, i) => pool[(from + i) % pool.length]!);
const bos = ref.sequences[0]!.prompt[0]!;
const A = [bos, ...ids(399, 0)];
const tail = ids(100, 7);

async function same(prompt: number[], cached: number): Promise<void> {
  const body = { prompt, max_tokens: 8, temperature: 0 };
  const r = await post(srv.base, body);
  assert.equal(r.timings.cache_n, cached, `cache_n of a ${prompt.length}-token prompt`);
  const fresh = await post(srv.base, { ...body, cache_prompt: false });
  assert.equal(fresh.timings.cache_n, 0);
  assert.equal(r.choices[0].text, fresh.choices[0].text, 'the cached run gives the fresh evaluation\'s tokens');
}

test('serve cache_prompt with a sliding-window ring: a prefix the ring still covers is reused, one it overwrote is evaluated again', async () => {
  const a = await post(srv.base, { prompt: A, max_tokens: 8, temperature: 0 });
  assert.equal(a.usage.prompt_tokens, 400);
  // the slot holds A and 8 generated tokens (the last not evaluated): the ring has positions [407 - 256, 407)
  await same([...A.slice(0, 304), ...tail], 304); // the next window [289, 304) is in the ring
  await post(srv.base, { prompt: A, max_tokens: 8, temperature: 0 });
  await same([...A.slice(0, 96), ...tail], 0); // [81, 96) was overwritten: everything again
});
