// llama.cpp overrides the type of end-of-generation-looking tokens: in llama_vocab::impl::load
// (src/llama-vocab.cpp of ggml-org/llama.cpp v0.4.0, the release node-llama-cpp 3.21.1 bundles and our
// references come from; "maintain a list of tokens that cause end-of-generation"), every token whose
// text is in the EOG list (`<|eot_id|>`, `<|im_end|>`, `<|end|>`, `<end_of_turn>`, `<|endoftext|>`,
// `</s>`, `<|eom_id|>`, ...) joins special_eog_ids and, when the file does not mark it CONTROL, gets
//     attr = (llama_token_attr) (attr | LLAMA_TOKEN_ATTR_CONTROL);
// tokenizer_st_partition then skips it unless parse_special ("Ignore control tokens unless
// parse_special": `if (!parse_special && (data.attr & (CONTROL | UNKNOWN))) continue;`), so its text
// is plain text. phi-3's file marks `</s>` (id 2) USER_DEFINED, which alone would always be split out.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { openGguf } from '../../src/gguf/open.js';
import { parseGguf } from '../../src/gguf/reader.js';
import { writeGguf } from '../../src/gguf/writer.js';
import { tokenizerFromGguf } from '../../src/tokenizer/index.js';
import { ATTR_CONTROL, ATTR_NORMAL, ATTR_USER_DEFINED, TOKEN_TYPE_NORMAL, TOKEN_TYPE_USER_DEFINED } from '../../src/tokenizer/vocab.js';
import { REPO_ROOT, fixturePath } from './fixtures.js';

const PHI3 = fixturePath('vocab', 'ggml-vocab-phi-3.gguf');

test('phi-3: "a </s> b" without special parsing is text, as in llama.cpp (not token 2)', () => {
  // llama.cpp (llama_tokenize, add_special = false, parse_special = false) on this file:
  // 263 '▁a', 1533 '▁</', 29879 's', 29958 '>', 289 '▁b'; with parse_special: 263, 29871 '▁', 2 '</s>', 289
  // (`</s>` has RSTRIP there: phi-3's per-model attributes, so the space after it is eaten).
  const r = spawnSync(process.execPath, [join(REPO_ROOT, 'bin', 'gguf-edge.js'), 'tokenize', PHI3, 'a </s> b', '--no-bos', '--ids'], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, '[263, 1533, 29879, 29958, 289]\n');
  const tok = tokenizerFromGguf(openGguf(PHI3));
  assert.deepEqual(tok.tokenize('a </s> b', { addSpecial: false, parseSpecial: true }), [263, 29871, 2, 289]);
  // the file's type stays visible (USER_DEFINED) with CONTROL added, and `</s>` ends generation
  const types = openGguf(PHI3).metadata.get('tokenizer.ggml.token_type') as Int32Array;
  assert.equal(types[2], TOKEN_TYPE_USER_DEFINED);
  assert.equal(tok.vocab.attrs[2]! & (ATTR_CONTROL | ATTR_USER_DEFINED), ATTR_CONTROL | ATTR_USER_DEFINED);
  assert.ok(tok.isEog(2));
  // phi-3's other EOG-looking tokens: <|endoftext|> 32000, <|end|> 32007 (both text without special parsing)
  assert.deepEqual(tok.tokenize('a <|end|> b', { addSpecial: false }), [263, 529, 29989, 355, 29989, 29958, 289]);
  assert.ok(tok.isEog(32000) && tok.isEog(32007));
});

/** A tiny SPM vocab: the given special texts (with their file types) plus one token per printable ASCII character. */
function vocabWith(specials: [string, number][]): ReturnType<typeof tokenizerFromGguf> {
  const chars = Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i)); // printable ASCII
  const tokens = ['<unk>', '<s>', '<x>', ...chars.map((c) => (c === ' ' ? '▁' : c)), ...specials.map(([t]) => t)];
  const types = [2, 3, 3, ...chars.map(() => TOKEN_TYPE_NORMAL), ...specials.map(([, ty]) => ty)];
  const bytes = writeGguf({
    metadata: [
      ['general.architecture', { type: 'string', value: 'llama' }],
      ['tokenizer.ggml.model', { type: 'string', value: 'llama' }],
      ['tokenizer.ggml.tokens', { type: 'array', itemType: 'string', value: tokens }],
      ['tokenizer.ggml.scores', { type: 'array', itemType: 'f32', value: tokens.map(() => 0) }],
      ['tokenizer.ggml.token_type', { type: 'array', itemType: 'i32', value: types }],
      ['tokenizer.ggml.eos_token_id', { type: 'u32', value: 2 }],
    ],
    tensors: [],
  });
  return tokenizerFromGguf(parseGguf(bytes));
}

test('the EOG list of llama.cpp v0.4.0: each text marked NORMAL/USER_DEFINED in a file becomes CONTROL and EOG', () => {
  const list = ['<|eot_id|>', '<|im_end|>', '<|end|>', '<end_of_turn>', '<|endoftext|>', '</s>', '<|eom_id|>', '<EOT>', '_<EOT>',
    '[EOT]', '[EOS]', '<|end_of_text|>', '<end_of_utterance>', '<eos>', '<turn|>', '<｜end▁of▁sentence｜>', '[e~['];
  for (const type of [TOKEN_TYPE_NORMAL, TOKEN_TYPE_USER_DEFINED]) {
    const tok = vocabWith(list.map((t) => [t, type]));
    for (const t of list) {
      const id = tok.vocab.tokenToId.get(t)!;
      assert.ok(tok.vocab.attrs[id]! & ATTR_CONTROL, `${t} (file type ${type}) is CONTROL`);
      assert.ok(tok.isEog(id), `${t} is EOG`);
    }
    // and so, without special parsing, never split out as a token
    const text = 'a</s>b<|im_end|>';
    const ids = tok.tokenize(text, { addSpecial: false });
    assert.ok(!ids.includes(tok.vocab.tokenToId.get('</s>')!) && !ids.includes(tok.vocab.tokenToId.get('<|im_end|>')!), JSON.stringify(ids));
    assert.equal(tok.detokenize(ids), text);
  }
  // a USER_DEFINED token that is not EOG-looking stays USER_DEFINED and is always split out
  const other = vocabWith([['<|user|>', TOKEN_TYPE_USER_DEFINED]]);
  const uid = other.vocab.tokenToId.get('<|user|>')!;
  assert.equal(other.vocab.attrs[uid], ATTR_USER_DEFINED);
  assert.ok(other.tokenize('a<|user|>b', { addSpecial: false }).includes(uid));
});

test('llama.cpp v0.4.0 workarounds: <|end|> is not EOG next to <|return|>+<|call|> or <|calls|>+<|flush|>; </s> not next to <|tool_response>', () => {
  for (const pair of [['<|return|>', '<|call|>'], ['<|calls|>', '<|flush|>']]) {
    const tok = vocabWith([['<|end|>', TOKEN_TYPE_NORMAL], ...pair.map((t): [string, number] => [t, TOKEN_TYPE_NORMAL])]);
    const end = tok.vocab.tokenToId.get('<|end|>')!;
    assert.ok(!tok.isEog(end), pair.join('+'));
    assert.equal(tok.vocab.attrs[end], ATTR_USER_DEFINED);
    for (const t of pair) assert.ok(tok.isEog(tok.vocab.tokenToId.get(t)!), t);
  }
  const g4 = vocabWith([['</s>', TOKEN_TYPE_USER_DEFINED], ['<|tool_response>', TOKEN_TYPE_NORMAL]]);
  const s = g4.vocab.tokenToId.get('</s>')!;
  assert.ok(!g4.isEog(s));
  assert.equal(g4.vocab.attrs[s], ATTR_NORMAL);
  assert.ok(g4.isEog(g4.vocab.tokenToId.get('<|tool_response>')!));
});
