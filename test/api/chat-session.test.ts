// ChatSession over a real context: cache reuse is exact (every reply equals a fresh generation on the whole
// rendered conversation, in a new context), an abort keeps the partial reply, a full context shifts with the
// system prompt kept.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadModel, ChatSession } from '../../src/api/index.js';
import { fixture } from '../helpers/fixtures.js';

const STORIES = fixture('models/stories260K.gguf');

test('ChatSession: replies equal a fresh greedy generation on the rendered conversation; abort keeps the partial reply', async () => {
  const model = await loadModel(STORIES);
  try {
    const chat = new ChatSession(await model.createContext({ ctx: 1024 }), { system: 'You tell stories.', temperature: 0, maxTokens: 20 });
    const fresh = await model.createContext({ ctx: 1024 });
    for (const q of ['Once upon a time', 'What did Lily do?', 'Tom had a ball']) {
      let streamed = '';
      const g = chat.send(q);
      for await (const e of g) streamed += e.text;
      const r = await g.result;
      assert.equal(streamed, r.text);
      const conv = chat.conversation();
      assert.deepEqual(conv[conv.length - 1], { role: 'assistant', content: r.text });
      fresh.clear();
      const prompt = model.tokenize(model.applyChatTemplate(conv.slice(0, -1)), { parseSpecial: true });
      const ref = await fresh.generate(prompt, { temperature: 0, maxTokens: 20, stop: ['<|im_end|>'] }).result;
      assert.equal(r.text, ref.text, q);
      assert.deepEqual(r.tokens, ref.tokens);
      assert.ok(r.timings.prompt_n < prompt.length || conv.length === 3, 'later turns reuse the cache');
    }
    // abort after 5 tokens: the partial reply joins the history
    const ac = new AbortController();
    let n = 0;
    const r = await chat.send('And then?', { signal: ac.signal, onToken: () => { if (++n === 5) ac.abort(); } }).result;
    assert.equal(r.finishReason, 'abort');
    assert.equal(r.tokens.length, 5);
    assert.equal(chat.messages[chat.messages.length - 1]!.content, r.text);
    chat.reset();
    assert.equal(chat.messages.length, 0);
    assert.equal(chat.context.tokens.length, 0);
    assert.equal(chat.system, 'You tell stories.');
  } finally {
    await model.close();
  }
});

test('ChatSession: a full context shifts (system prompt kept, notice) and the next turn drops old messages', async () => {
  const model = await loadModel(STORIES);
  try {
    const ctx = await model.createContext({ ctx: 128 });
    const notices: string[] = [];
    const chat = new ChatSession(ctx, { system: 'Tell a story.', temperature: 0.8, seed: 7, ignoreEos: true, onNotice: (m) => notices.push(m) });
    const sys = model.tokenize(model.applyChatTemplate([{ role: 'system', content: 'Tell a story.' }], { addGenerationPrompt: false }), { parseSpecial: true });
    let n = 0;
    const ac = new AbortController();
    const r = await chat.send('Once upon a time', { signal: ac.signal, onToken: () => { if (++n === 300) ac.abort(); } }).result;
    assert.equal(r.finishReason, 'abort');
    assert.equal(r.tokens.length, 300);
    assert.ok(notices.some((m) => m.includes('shifted')), notices.join('\n'));
    assert.ok(ctx.tokens.length <= 128);
    assert.deepEqual(ctx.tokens.slice(0, sys.length), sys);
    const r2 = await chat.send('What next?', { maxTokens: 4 }).result;
    assert.equal(r2.tokens.length, 4);
    assert.ok(notices.some((m) => m.includes('dropped')), notices.join('\n'));
    assert.equal(chat.conversation()[0]!.role, 'system');
  } finally {
    await model.close();
  }
});
