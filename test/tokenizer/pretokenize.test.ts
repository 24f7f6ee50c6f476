// Pre-tokenizer checks: llama.cpp's hand-written GPT-2 and Llama-3 splitters must agree with the same regexes
// run through the generic (ECMAScript regex) path, and a few splits whose result is known.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PRE_REGEXES, preTokenize } from '../../src/tokenizer/bpe-pretokenize.js';
import { buildCorpus } from './corpus.js';
import { readVectors } from './fixtures.js';

const corpus = [...buildCorpus(1000, 99), ...readVectors('ggml-vocab-gpt-2.gguf').inputs];

for (const pre of ['gpt2', 'llama3']) {
  test(`${pre}: custom splitter equals the regex engine on ${corpus.length} strings`, () => {
    const re = PRE_REGEXES[pre]!;
    const bad: string[] = [];
    for (const s of corpus) {
      const a = preTokenize(s, re, false);
      const b = preTokenize(s, re, false, { forceRegex: true });
      assert.equal(a.join(''), s);
      if (JSON.stringify(a) !== JSON.stringify(b)) bad.push(`${JSON.stringify(s)}\n  custom ${JSON.stringify(a)}\n  regex  ${JSON.stringify(b)}`);
    }
    assert.deepEqual(bad.slice(0, 5), []);
  });
}

test('known splits', () => {
  assert.deepEqual(preTokenize("Hello world's  123456 !!", PRE_REGEXES.gpt2!, false), ['Hello', ' world', "'s", ' ', ' 123456', ' !!']);
  assert.deepEqual(preTokenize('Hello 123456\n\n  x', PRE_REGEXES.llama3!, false), ['Hello', ' ', '123', '456', '\n\n', ' ', ' x']);
  assert.deepEqual(preTokenize('ab 12345', PRE_REGEXES.qwen2!, false), ['ab', ' ', '1', '2', '3', '4', '5']);
  // byte-level encoding: space -> Ġ, newline -> Ċ
  assert.deepEqual(preTokenize(' a\n', PRE_REGEXES.gpt2!, true), ['Ġa', 'Ċ']);
});

test('every supported tokenizer.ggml.pre has a regex list; unknown ones are refused', async () => {
  const { bpePreInfo } = await import('../../src/tokenizer/vocab.js');
  const names = ['default', 'gpt-2', 'llama3', 'llama-bpe', 'qwen2', 'deepseek-llm', 'deepseek-coder', 'falcon', 'starcoder',
    'refact', 'mpt', 'command-r', 'smollm', 'phi-2', 'olmo', 'stablelm2', 'dbrx', 'smaug-bpe', 'poro-chat', 'viking',
    'tekken', 'gpt-4o', 'llama4', 'chameleon', 'deepseek-v3', 'bloom', 'jais', 'exaone', 'seed-coder', 'superbpe'];
  for (const n of names) {
    const info = bpePreInfo(n);
    assert.ok(PRE_REGEXES[info.pre], `${n} -> ${info.pre}`);
    for (const re of PRE_REGEXES[info.pre]!) assert.equal(preTokenize('Hello, wörld 12345 日本 🦙\n', [re], false).join(''), 'Hello, wörld 12345 日本 🦙\n');
  }
  assert.equal(bpePreInfo('llama-bpe').ignoreMerges, true);
  assert.throws(() => bpePreInfo('no-such-pre'), /unknown pre-tokenizer/);
});
