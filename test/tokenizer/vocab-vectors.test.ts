// llama.cpp's own tokenizer test vectors (models/ggml-vocab-*.gguf + .inp/.out, from test-tokenizer-0):
// tokenize without BOS/EOS and with special tokens as plain text; every input must give exactly the ids.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openGguf } from '../../src/gguf/open.js';
import { tokenizerFromGguf } from '../../src/tokenizer/index.js';
import { cleanSpaces } from '../../src/tokenizer/detokenize.js';
import { fixturePath, readVectors } from './fixtures.js';

// the ten complete triples (.gguf + .inp + .out); a missing one fails the test
const TRIPLES = [
  'bert-bge', 'deepseek-coder', 'deepseek-llm', 'falcon', 'gpt-2', 'llama-spm', 'mpt', 'phi-3', 'refact', 'starcoder',
];

for (const name of TRIPLES) {
  test(`vocab ${name}: llama.cpp test vectors`, () => {
    const base = `ggml-vocab-${name}.gguf`;
    const tok = tokenizerFromGguf(openGguf(fixturePath('vocab', base)));
    const { inputs, expected } = readVectors(base);
    assert.equal(inputs.length, 46);
    const failures: string[] = [];
    inputs.forEach((text, i) => {
      const got = tok.tokenize(text, { addSpecial: false, parseSpecial: false });
      if (JSON.stringify(got) !== JSON.stringify(expected[i])) {
        failures.push(`#${i} ${JSON.stringify(text)}\n  expected ${expected[i]!.join(' ')}\n  got      ${got.join(' ')}`);
      }
    });
    assert.deepEqual(failures, []);

    // detokenizing gives the input back wherever the normalizer allows
    if (name === 'bert-bge') return; // WPM lowercases, strips accents and drops spacing: not reversible
    const enc = new TextEncoder();
    const dec = new TextDecoder();
    let checked = 0;
    inputs.forEach((text, i) => {
      let want = text;
      if (tok.vocab.cleanSpaces) want = dec.decode(cleanSpaces(enc.encode(text)));
      const back = tok.detokenize(expected[i]!);
      assert.equal(back, want, `round trip of #${i} ${JSON.stringify(text)}`);
      checked++;
    });
    assert.equal(checked, 46, `round-tripped only ${checked} inputs`);
  });
}

// vocab files upstream keeps without vectors: they must load, and round-trip text through tokenize/detokenize
for (const [name, kind, pre] of [['baichuan', 'spm', 'default'], ['gpt-neox', 'bpe', 'default']] as const) {
  test(`vocab ${name}: loads (${kind}, pre ${pre}) and round-trips`, () => {
    const tok = tokenizerFromGguf(openGguf(fixturePath('vocab', `ggml-vocab-${name}.gguf`)));
    assert.equal(tok.vocab.type, kind);
    assert.equal(tok.vocab.pre, pre);
    const { inputs } = readVectors('ggml-vocab-llama-spm.gguf');
    const enc = new TextEncoder();
    const dec = new TextDecoder();
    for (const text of inputs) {
      const ids = tok.tokenize(text);
      for (const id of ids) assert.ok(id >= 0 && id < tok.nVocab);
      const want = tok.vocab.cleanSpaces ? dec.decode(cleanSpaces(enc.encode(text))) : text;
      assert.equal(tok.detokenize(ids), want, JSON.stringify(text));
    }
  });
}
