// Names a user types (commands, subcommands, devices, shapes) and keys a file carries (metadata keys,
// tokenizer.ggml.pre) that collide with Object.prototype's own names: each is an unknown name with a
// clear one-line error, or a key shown like any other, never a stack trace or a hidden entry.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { writeGguf, type GgufWriteValue } from '../../src/gguf/writer.js';
import { fixture, repoRoot } from '../helpers/fixtures.js';

const bin = resolve(repoRoot, 'bin/gguf-edge.js');
const cli = (...args: string[]) => spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8' });
const PROTO_NAMES = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__'];
const noStack = (s: string) => assert.doesNotMatch(s, /\n\s+at |\^\n|TypeError|is not a function/, s);

function tmpFile(name: string, bytes: Uint8Array): { path: string; done: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'gguf-edge-keys-'));
  const path = join(dir, name);
  writeFileSync(path, bytes);
  return { path, done: () => rmSync(dir, { recursive: true, force: true }) };
}

test('a command, re subcommand, device or synthetic shape named like an Object.prototype member is unknown', () => {
  const model = fixture('models/stories260K.gguf');
  for (const name of PROTO_NAMES) {
    const top = cli(name);
    assert.equal(top.status, 2, `${name}: ${top.stderr}`);
    assert.match(top.stderr, new RegExp(`unknown command '${name}'`));
    noStack(top.stderr);
  }
  for (const name of ['__proto__', 'constructor']) {
    const re = cli('re', name);
    assert.equal(re.status, 1, re.stderr);
    assert.match(re.stderr, /unknown subcommand/);
    noStack(re.stderr);
    const dev = cli('run', model, '-p', 'x', '-n', '1', '--device', name);
    assert.equal(dev.status, 1, dev.stderr);
    assert.match(dev.stderr, /unknown device/);
    noStack(dev.stderr);
    const shape = cli('bench', '--synthetic', `${name}:q4_0`, '-p', '0', '-n', '1', '-r', '1');
    assert.equal(shape.status, 1, shape.stderr);
    assert.match(shape.stderr, /unknown synthetic shape/);
    noStack(shape.stderr);
  }
});

test('inspect shows metadata keys named __proto__ and constructor (text and --json)', () => {
  const md: [string, GgufWriteValue][] = [
    ['general.architecture', { type: 'string', value: 'llama' }],
    ['__proto__', { type: 'string', value: 'shown' }],
    ['constructor', { type: 'u32', value: 7 }],
  ];
  const f = tmpFile('proto.gguf', writeGguf({ metadata: md, tensors: [] }));
  try {
    const text = cli('inspect', f.path);
    assert.equal(text.status, 0, text.stderr);
    assert.match(text.stdout, /metadata \(3\):/);
    assert.match(text.stdout, /^ {2}__proto__ = "shown"$/m);
    assert.match(text.stdout, /^ {2}constructor = 7$/m);
    const json = cli('inspect', f.path, '--json');
    assert.equal(json.status, 0, json.stderr);
    const meta = (JSON.parse(json.stdout) as { metadata: Record<string, unknown> }).metadata;
    assert.deepEqual(Object.keys(meta), ['general.architecture', '__proto__', 'constructor']);
    assert.ok(Object.hasOwn(meta, '__proto__'));
    assert.equal(Object.getOwnPropertyDescriptor(meta, '__proto__')!.value, 'shown');
    assert.equal(meta.constructor, 7);
  } finally {
    f.done();
  }
});

test('a BPE vocabulary whose tokenizer.ggml.pre is __proto__ is an unknown pre-tokenizer, not a crash', () => {
  for (const pre of ['__proto__', 'constructor']) {
    const md: [string, GgufWriteValue][] = [
      ['general.architecture', { type: 'string', value: 'llama' }],
      ['tokenizer.ggml.model', { type: 'string', value: 'gpt2' }],
      ['tokenizer.ggml.pre', { type: 'string', value: pre }],
      ['tokenizer.ggml.tokens', { type: 'array', itemType: 'string', value: ['a', 'b', 'ab'] }],
      ['tokenizer.ggml.token_type', { type: 'array', itemType: 'i32', value: [1, 1, 1] }],
      ['tokenizer.ggml.merges', { type: 'array', itemType: 'string', value: ['a b'] }],
    ];
    const f = tmpFile('pre.gguf', writeGguf({ metadata: md, tensors: [] }));
    try {
      const r = cli('tokenize', f.path, 'ab');
      assert.equal(r.status, 1, r.stdout + r.stderr);
      assert.match(r.stderr, new RegExp(`pre-tokenizer.*'${pre}'`));
      noStack(r.stderr);
    } finally {
      f.done();
    }
  }
});
