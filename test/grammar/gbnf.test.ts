// GBNF: llama.cpp's published example grammars (test/grammar/data, written from ggml-org/llama.cpp
// grammars/*.gbnf) against texts of their languages, malformed grammars (code, line, column), and the
// byte-level matcher (UTF-8 split across steps, invalid sequences, shortest completions).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { repoRoot } from '../helpers/fixtures.js';
import { parseGbnf, GrammarMatcher, GrammarError, REJECT } from '../../src/grammar/index.js';

const enc = new TextEncoder();
const data = (f: string) => readFileSync(resolve(repoRoot, 'test/grammar/data', f), 'utf8');
const matcher = (src: string) => new GrammarMatcher(parseGbnf(src));
function accepts(m: GrammarMatcher, text: string | Uint8Array): boolean {
  const s = m.walk(m.initial, typeof text === 'string' ? enc.encode(text) : text);
  return s !== REJECT && m.isComplete(s);
}
function prefixOk(m: GrammarMatcher, text: string | Uint8Array): boolean {
  return m.walk(m.initial, typeof text === 'string' ? enc.encode(text) : text) !== REJECT;
}

const examples: Record<string, { yes: string[]; no: string[] }> = {
  'json.gbnf': {
    yes: ['{}', '{"a": 1}', '{"a": [1, -2, {"b": true}], "c": "x\\n\\u00e9 é"}', '{\n  "k": [],\n  "l": [[false]]}'],
    no: ['[1]', '{"a": }', '{"a": 1.5}', '{"a": "\\q"}', '{"a": null}', '{"a" 1}', '{"a": 1,}'],
  },
  'arithmetic.gbnf': {
    yes: ['a+b=c\n', '(x1 *2)=y\n', 'a=b\nc=d\n', '10/(2-1)=n\n'],
    no: ['a+=b\n', 'a=b', '=b\n', 'A=b\n'],
  },
  'chess.gbnf': {
    yes: ['1. e4 e5\n2. Nf3 Nc6\n', '1. d4 d5\n2. c4 dxc4\n3. e3 b5\n10. O-O O-O-O+\n', '1. e4 e5\n2. Qh5 Ke7\n3. Qxe5#  Kf6\n'.replace('  ', ' ')],
    no: ['1. e4 e5\n', '1. e9 e5\n2. d4 d5\n', '1. e4 e5\n2. Nf3\n', '2. e4 e5\n3. d4 d5\n'],
  },
  'list.gbnf': {
    yes: ['- a\n', '- milk\n- eggs and ham\n', '- ü €\n'],
    no: ['- \n', '* a\n', '- a\u2028b\n', '- a\rb\n', '- a'],
  },
  'c.gbnf': {
    yes: ['int main(){x = 1;}', 'int f(int a){return a*2+1;}float g(){while(i<10){i = i+1;}}', 'char h(){if(a==b){c = f(a, b);}else{/* no */}}', 'int k(){// hi\n}'],
    no: ['int main(){x = ;}', 'int main(){', 'long main(){}', 'int main(){return;}'],
  },
  'japanese.gbnf': {
    yes: ['こんにちは', 'こんにちは 世界', '日本語。カタカナ\tひらがな'],
    no: ['hello', 'こんにちは  世界', 'こんにちは!', ' 世界'],
  },
};

for (const [file, cases] of Object.entries(examples)) {
  test(`llama.cpp example grammar ${file}: its texts are accepted, others rejected`, () => {
    const m = matcher(data(file));
    for (const t of cases.yes) assert.ok(accepts(m, t), `${file} should accept ${JSON.stringify(t)}`);
    for (const t of cases.no) assert.ok(!accepts(m, t), `${file} should reject ${JSON.stringify(t)}`);
  });
}

test('json.gbnf against JSON.parse: JSON.stringify output of its subset is accepted; accepted texts parse', () => {
  const m = matcher(data('json.gbnf'));
  let seed = 7;
  const rnd = () => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648; };
  const value = (d: number): unknown => {
    const r = rnd();
    if (d > 2 || r < 0.3) return Math.floor(rnd() * 2000) - 1000;
    if (r < 0.45) return rnd() < 0.5;
    if (r < 0.65) return String.fromCodePoint(...Array.from({ length: Math.floor(rnd() * 6) }, () => [0x61, 0x22, 0x5c, 0xe9, 0x3042, 0x1f600, 0x20, 0x2f][Math.floor(rnd() * 8)]!));
    if (r < 0.8) return Array.from({ length: Math.floor(rnd() * 3) }, () => value(d + 1));
    return Object.fromEntries(Array.from({ length: Math.floor(rnd() * 3) }, (_, i) => [`k${i}`, value(d + 1)]));
  };
  for (let i = 0; i < 200; i++) {
    const doc = { v: value(0) };
    const text = JSON.stringify(doc);
    assert.ok(accepts(m, text), text);
  }
  // mutations: whatever the grammar accepts must be JSON
  const alphabet = '{}[]":,0123456789-tfrueal \\nx';
  let accepted = 0;
  for (let i = 0; i < 3000; i++) {
    const base = JSON.stringify({ v: value(0) });
    const k = Math.floor(rnd() * base.length);
    const text = base.slice(0, k) + alphabet[Math.floor(rnd() * alphabet.length)] + base.slice(k + (rnd() < 0.5 ? 1 : 0));
    // json.gbnf's numbers are "-"? [0-9]+: leading zeros are the one thing it accepts that JSON does not
    if (accepts(m, text) && !/(^|[^0-9])-?0[0-9]/.test(text)) { accepted++; assert.doesNotThrow(() => JSON.parse(text), text); }
  }
  assert.ok(accepted > 100, `only ${accepted} mutated texts were accepted`);
});

const malformed: [string, string, number, number][] = [
  ['root ::= "abc', 'GBNF_SYNTAX', 1, 14],
  ['root ::= [a-z', 'GBNF_SYNTAX', 1, 10],
  ['root := "a"', 'GBNF_SYNTAX', 1, 6],
  ['root ::= "a"\nitem ::= foo "b"', 'GBNF_UNDEFINED', 2, 10],
  ['root ::= ("a" | "b"', 'GBNF_SYNTAX', 1, 20],
  ['root ::= "a" )', 'GBNF_SYNTAX', 1, 14],
  ['root ::= "\\q"', 'GBNF_SYNTAX', 1, 11],
  ['root ::= "\\x4"', 'GBNF_SYNTAX', 1, 14],
  ['root ::= "a"{3,1}', 'GBNF_SYNTAX', 1, 13],
  ['root ::= "a"{x}', 'GBNF_SYNTAX', 1, 14],
  ['root ::= "a"{2', 'GBNF_SYNTAX', 1, 15],
  ['root ::= * "a"', 'GBNF_SYNTAX', 1, 10],
  ['# comment\nroot ::= [z-a]', 'GBNF_SYNTAX', 2, 13],
  ['root ::= "a"\n\n  ::= "b"', 'GBNF_SYNTAX', 3, 3],
  ['root ::= "é" [ü-', 'GBNF_SYNTAX', 1, 14],
  ['root ::= <[1000]>', 'GBNF_UNSUPPORTED', 1, 10],
  ['root ::= "a"{5000}', 'GBNF_TOO_LARGE', 1, 14],
];

test('malformed grammars: typed errors with line and column', () => {
  for (const [src, code, line, column] of malformed) {
    assert.throws(() => parseGbnf(src), (e: unknown) => {
      assert.ok(e instanceof GrammarError, String(e));
      assert.equal(e.code, code, `${JSON.stringify(src)}: ${e.message}`);
      assert.equal(e.line, line, `${JSON.stringify(src)} line: ${e.message}`);
      assert.equal(e.column, column, `${JSON.stringify(src)} column: ${e.message}`);
      assert.match(e.message, new RegExp(`line ${line}, column ${column}`));
      return true;
    });
  }
  const noRoot = () => parseGbnf('item ::= "a"');
  assert.throws(noRoot, (e: unknown) => e instanceof GrammarError && e.code === 'GBNF_NO_ROOT');
  for (const src of ['root ::= root "a"', 'root ::= a "x"\na ::= root | "y"', 'root ::= b root "x" | "y"\nb ::= "z"?']) {
    assert.throws(() => parseGbnf(src), (e: unknown) => e instanceof GrammarError && e.code === 'GBNF_LEFT_RECURSION' && /left recursion/.test(e.message), src);
  }
});

test('syntax: repetitions, classes, negation, dot, escapes, comments, continuation lines', () => {
  const rep = matcher('root ::= "a"{2,4} "b"{3} "c"{1,} ("d" "e"){0,2}');
  for (const t of ['aabbbc', 'aaaabbbcccdede', 'aaabbbcde']) assert.ok(accepts(rep, t), t);
  for (const t of ['abbbc', 'aaaaabbbc', 'aabbc', 'aabbb', 'aabbbcdedede', 'aabbbcd']) assert.ok(!accepts(rep, t), t);
  const cls = matcher('root ::= [^a-c\\n]+ [a-cx-z] [\\]\\[] .');
  assert.ok(accepts(cls, 'dé€a]\n'));
  assert.ok(accepts(cls, 'zzzx[😀'));
  assert.ok(!accepts(cls, 'ba]x'));
  assert.ok(!accepts(cls, 'd\nda]x'));
  const esc = matcher('root ::= "\\x41\\u00e9\\U0001F600\\t\\"\\\\" [\\x00-\\x1f]');
  assert.ok(accepts(esc, 'Aé😀\t"\\\u0001'));
  const multi = matcher('# leading comment\nroot ::= a |\n  b # trailing comment\na ::= ( "x"\n  "y" )\nb ::= "z"\r\n');
  for (const t of ['xy', 'z']) assert.ok(accepts(multi, t), t);
  assert.ok(!accepts(multi, 'x'));
  const opt = matcher('root ::= "a" ws? "b"* "c"+\nws ::= [ ]');
  for (const t of ['ac', 'a bbcc', 'abc']) assert.ok(accepts(opt, t), t);
  assert.ok(!accepts(opt, 'a  c'));
  // empty alternative; a rule used before its definition
  const e = matcher('root ::= x "!"\nx ::= | "hi"');
  assert.ok(accepts(e, '!') && accepts(e, 'hi!') && !accepts(e, 'h!'));
});

test('matcher: UTF-8 advanced byte by byte; partial characters kept only if they can match', () => {
  const m = matcher(data('japanese.gbnf'));
  const text = enc.encode('こんにちは 世界');
  let s = m.initial;
  for (const b of text) { s = m.step(s, b); assert.notEqual(s, REJECT); }
  assert.ok(m.isComplete(s));
  // in the middle of a character the grammar cannot end
  assert.ok(!m.isComplete(m.walk(m.initial, text.subarray(0, 2))));
  // a lead byte whose characters the grammar cannot produce is rejected at once (é = C3 A9)
  assert.equal(m.step(m.initial, 0xc3), REJECT);
  assert.equal(m.step(m.initial, 0xf0), REJECT);
  // E3 81: U+3040..U+307F, hiragana: kept; E3 81 93 = こ
  assert.notEqual(m.walk(m.initial, Uint8Array.of(0xe3, 0x81)), REJECT);
  assert.ok(m.isComplete(m.walk(m.initial, Uint8Array.of(0xe3, 0x81, 0x93))));
  // E3 90 (U+3400..U+343F): no class of the grammar has it
  assert.equal(m.walk(m.initial, Uint8Array.of(0xe3, 0x90)), REJECT);
  // invalid UTF-8: a lone continuation byte, an overlong lead, a lead followed by ASCII, surrogates
  const any = matcher('root ::= .*');
  for (const bad of [[0x80], [0xc0, 0x80], [0xc1, 0xbf], [0xe3, 0x41], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xff]]) {
    assert.equal(any.walk(any.initial, Uint8Array.from(bad)), REJECT, bad.map((b) => b.toString(16)).join(' '));
  }
  assert.ok(accepts(any, '😀é\n'));
  // negated class with a partial character: [^é] must accept the partial C3 (other Latin-1 letters remain)
  const neg = matcher('root ::= [^é]');
  assert.notEqual(neg.step(neg.initial, 0xc3), REJECT);
  assert.equal(neg.walk(neg.initial, Uint8Array.of(0xc3, 0xa9)), REJECT);
  assert.ok(accepts(neg, 'è'));
});

test('matcher: shortest completion in bytes (the budget rule counts on it)', () => {
  const m = matcher('root ::= "abc" | "x"{5} | "é"');
  assert.equal(m.dist[m.initial], 2);
  const a = m.step(m.initial, 0x61);
  assert.equal(m.dist[a], 2);
  assert.equal(m.dist[m.walk(m.initial, enc.encode('xx'))], 3);
  const half = m.step(m.initial, 0xc3);
  assert.equal(m.dist[half], 1);
  assert.equal(m.dist[m.walk(m.initial, Uint8Array.of(0xc3, 0xa9))], 0);
  const j = matcher(data('json.gbnf'));
  assert.equal(j.dist[j.initial], 2); // {}
  assert.equal(j.dist[j.walk(j.initial, enc.encode('{"a": [1, {"b'))], 6); // ":0}]}
  assert.throws(() => matcher('root ::= a\na ::= "x" a'), (e: unknown) => e instanceof GrammarError && e.code === 'GRAMMAR_BUDGET');
});
