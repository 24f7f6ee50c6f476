// SPM (llama) tokenizer on the trained models, checked against llama.cpp's recorded prompt ids and
// generated text (fixtures/reference/greedy-llama.cpp.json, produced by llama.cpp itself).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { openGguf } from '../../src/gguf/open.js';
import { tokenizerFromGguf } from '../../src/tokenizer/index.js';
import { fixturePath } from './fixtures.js';

interface RefCase {
  model: string;
  prompt: string;
  prompt_ids: number[];
  default: { generated_ids: number[]; generated_text: string };
}

const ref = JSON.parse(readFileSync(fixturePath('reference', 'greedy-llama.cpp.json'), 'utf8')) as { cases: RefCase[] };

test('reference file has cases for the SPM models', () => {
  assert.ok(ref.cases.length >= 5);
});

for (const c of ref.cases) {
  test(`${c.model} "${c.prompt}": prompt ids and generated text as llama.cpp`, () => {
    const tok = tokenizerFromGguf(openGguf(fixturePath('models', c.model)));
    assert.equal(tok.addBos, true);
    assert.deepEqual(tok.tokenize(c.prompt, { addSpecial: true, parseSpecial: true }), c.prompt_ids);
    // generated_text is the concatenation of token_to_piece(id, special = true)
    const dec = new TextDecoder();
    const pieces = c.default.generated_ids.map((id) => tok.tokenToPiece(id, { special: true }));
    const joined = dec.decode(Uint8Array.from(pieces.flatMap((p) => [...p])));
    assert.equal(joined, c.default.generated_text);
    // streaming gives the same text
    const s = tok.stream({ special: true });
    let streamed = '';
    for (const id of c.default.generated_ids) streamed += s.push(id);
    streamed += s.flush();
    assert.equal(streamed, c.default.generated_text);
  });
}

test('stories260K: BOS/EOS, add_bos default, eog, no BOS without addSpecial', () => {
  const tok = tokenizerFromGguf(openGguf(fixturePath('models', 'stories260K.gguf')));
  assert.equal(tok.nVocab, 512);
  assert.equal(tok.bos, 1);
  assert.equal(tok.eos, 2);
  assert.equal(tok.addBos, true); // no add_bos_token key: SPM default is true
  assert.equal(tok.addEos, false);
  assert.ok(tok.isEog(2));
  assert.ok(!tok.isEog(1));
  assert.deepEqual(tok.tokenize('Once upon a time'), [403, 407, 261, 378]);
  assert.deepEqual(tok.tokenize(''), []);
  assert.deepEqual(tok.tokenize('', { addSpecial: true }), [1]);
  // special tokens: parsed only with parseSpecial
  assert.deepEqual(tok.tokenize('<s>Once', { parseSpecial: true }), [1, 403]);
  assert.notEqual(tok.tokenize('<s>Once', { parseSpecial: false })[0], 1);
  // pieces: control tokens render only with special
  assert.deepEqual([...tok.tokenToPiece(1, { special: true })], [...new TextEncoder().encode('<s>')]);
  assert.equal(tok.tokenToPiece(1, { special: false }).length, 0);
  assert.equal(tok.detokenize([403, 407, 261, 378]), 'Once upon a time');
});

test('llama-spm: byte fallback and UTF-8 streaming', () => {
  const tok = tokenizerFromGguf(openGguf(fixturePath('vocab', 'ggml-vocab-llama-spm.gguf')));
  // a character missing from the vocab falls back to <0xNN> byte tokens
  const ids = tok.tokenize('🦙');
  const texts = ids.map((id) => tok.tokenText(id));
  assert.ok(texts.some((t) => /^<0x[0-9A-F]{2}>$/.test(t)), texts.join(' '));
  assert.equal(tok.detokenize(ids), '🦙');
  const s = tok.stream();
  const parts = ids.map((id) => s.push(id));
  assert.deepEqual(parts.slice(0, -1).filter((p) => p.includes('\ufffd')), []);
  assert.equal(parts.join('') + s.flush(), ' 🦙'); // raw pieces: the prefix space stays
});
