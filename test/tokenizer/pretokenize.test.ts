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
