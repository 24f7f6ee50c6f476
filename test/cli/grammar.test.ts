// run's structured-output flags as a user runs them (the bin script in a child process).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import Ajv2020Module from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { fixture, repoRoot } from '../helpers/fixtures.js';

type AjvCtor = new (o: object) => { compile(s: unknown): ((d: unknown) => boolean) & { errors?: unknown } };
const Ajv2020 = ((Ajv2020Module as unknown as { default?: AjvCtor }).default ?? Ajv2020Module) as unknown as AjvCtor;
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (a: unknown) => void;
const bin = resolve(repoRoot, 'bin/gguf-edge.js');
const cli = (...args: string[]) => spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8' });
const model = () => fixture('models/stories260K.gguf');
const dir = mkdtempSync(join(tmpdir(), 'gguf-edge-grammar-'));

test('run --json-schema F --json: "text" is a document the schema validates; --profile reports the grammar', () => {
  const schema = { type: 'object', properties: { name: { type: 'string', maxLength: 8 }, n: { type: 'integer', minimum: 1, maximum: 9 }, on: { type: 'string', format: 'date' } }, required: ['name', 'n', 'on'] };
  const f = join(dir, 's.json');
  writeFileSync(f, JSON.stringify(schema));
  const ajv = new Ajv2020({ strict: false });
  addFormats(ajv);
  const validate = ajv.compile(schema);
  for (const seed of ['1', '2', '3']) {
    const r = cli('run', model(), '-p', 'Once', '-n', '48', '--temp', '1', '--seed', seed, '--json-schema', f, '--json', '--profile', '--threads', '1');
    assert.equal(r.status, 0, r.stderr);
    const o = JSON.parse(r.stdout);
    assert.ok(validate(JSON.parse(o.text)), `${o.text}: ${JSON.stringify(validate.errors)}`);
    const g = o.profile.grammar;
    assert.equal(g.steps, o.tokens.length);
    // one sampled-token check per step; a full mask (and its redraw) only after a rejection
    assert.equal(g.checks, g.steps);
    assert.ok(g.full_masks >= 0 && g.full_masks <= g.checks);
    // the grammar's time is its parts, inside the generation's, per step over the steps
    assert.ok(Math.abs(g.ms - (g.mask_ms + g.redraw_ms + g.other_ms)) < 1e-6, JSON.stringify(g));
    assert.ok(g.ms > 0 && g.ms < o.timings.gen_ms, JSON.stringify(g));
    assert.ok(Math.abs(g.ms_per_step - g.ms / g.steps) < 1e-9);
  }
  const text = cli('run', model(), '-p', 'Once', '-n', '48', '--seed', '1', '--json-schema', f, '--profile', '--threads', '1');
  assert.equal(text.status, 0, text.stderr);
  assert.match(text.stderr, /grammar: \d+ steps, \d+ sampled-token checks, \d+ full masks, [\d.]+ ms \([\d.]+ ms\/step\): masks [\d.]+ ms, redraws [\d.]+ ms/);
});

test('run --grammar / --grammar-file / --json-object', () => {
  const yn = cli('run', model(), '-p', 'Once', '-n', '16', '--grammar', 'root ::= "yes" | "no" | "maybe " [a-z]{1,5}', '--seed', '4', '--json', '--threads', '1');
  assert.equal(yn.status, 0, yn.stderr);
  assert.match(JSON.parse(yn.stdout).text, /^(yes|no|maybe [a-z]{1,5})$/);
  const gf = join(dir, 'chess.gbnf');
  writeFileSync(gf, 'root ::= "1. " move " " move "\\n"\nmove ::= [a-h] [1-8]\n');
  const ch = cli('run', model(), '-p', 'Once', '-n', '24', '--grammar-file', gf, '--seed', '5', '--threads', '1');
  assert.equal(ch.status, 0, ch.stderr);
  assert.match(ch.stdout, /^Once1\. [a-h][1-8] [a-h][1-8]\n\n$/);
  const jo = cli('run', model(), '-p', 'Once', '-n', '40', '--json-object', '--seed', '6', '--json', '--threads', '1');
  assert.equal(jo.status, 0, jo.stderr);
  assert.doesNotThrow(() => JSON.parse(JSON.parse(jo.stdout).text));
});

test('run: bad grammars, schemas and option mixes are clear errors', () => {
  const bad = cli('run', model(), '-p', 'x', '-n', '8', '--grammar', 'root ::= "a"\nb ::= ("c"');
  assert.equal(bad.status, 1);
  assert.match(bad.stderr, /\[GBNF_SYNTAX\].*line 2, column 11/);
  const f = join(dir, 'u.json');
  writeFileSync(f, JSON.stringify({ type: 'array', uniqueItems: true }));
  const un = cli('run', model(), '-p', 'x', '-n', '8', '--json-schema', f);
  assert.equal(un.status, 1);
  assert.match(un.stderr, /\[SCHEMA_UNSUPPORTED\].*#\/uniqueItems/);
  const short = cli('run', model(), '-p', 'x', '-n', '3', '--grammar', 'root ::= "abcdef"');
  assert.equal(short.status, 1);
  assert.match(short.stderr, /\[GRAMMAR_BUDGET\]/);
  const both = cli('run', model(), '-p', 'x', '--grammar', 'root ::= "a"', '--json-object');
  assert.equal(both.status, 1);
  assert.match(both.stderr, /\[USAGE\] --grammar and --json-object/);
  const missing = cli('run', model(), '-p', 'x', '--json-schema', join(dir, 'nope.json'));
  assert.equal(missing.status, 1);
  assert.match(missing.stderr, /\[USAGE\] --json-schema .*nope\.json/);
});
