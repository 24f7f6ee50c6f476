// The token constraint on a hand-made vocabulary: the trie mask equals a token-by-token check,
// tokens that end (or start) in the middle of a UTF-8 character, end of generation only where the
// grammar can end, the budget rule, and the sampler hook (sample, check, mask and resample).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GrammarError, GrammarMatcher, REJECT, buildTokenIndex, grammarConstraint, parseGbnf, type VocabSource } from '../../src/grammar/index.js';
import { createSampler } from '../../src/runtime/sampler.js';

const enc = new TextEncoder();
const pieces: Uint8Array[] = [
  ...['a', 'b', 'ab', 'abc', '"', '{', '}', '{"', '{}', 'a}', ' ', '\n', 'z', 'zz', '}}'].map((t) => enc.encode(t)),
  enc.encode('é'), Uint8Array.of(0xc3), Uint8Array.of(0xa9), Uint8Array.of(0xe6, 0x97), Uint8Array.of(0xa5), enc.encode('日'),
  Uint8Array.of(0xa9, 0x7d), // the end of é then "}"
  new Uint8Array(0), // a control token: no text
  new Uint8Array(0), // end of generation
];
const EOG = pieces.length - 1, CONTROL = pieces.length - 2;
const vocab: VocabSource = { nVocab: pieces.length, tokenToPiece: (id) => pieces[id]!, isEog: (id) => id === EOG };
const idx = buildTokenIndex(vocab);
const tokenOf = (bytes: number[]) => pieces.findIndex((p) => p.length === bytes.length && p.every((b, i) => b === bytes[i]));

function allowedByMask(c: ReturnType<typeof grammarConstraint>): number[] {
  const vals = new Float32Array(pieces.length);
  c.mask(vals, vals.length);
  return [...vals.keys()].filter((t) => vals[t] === 0);
}
function allowedOneByOne(c: ReturnType<typeof grammarConstraint>): number[] {
  return [...pieces.keys()].filter((t) => c.allows(t));
}

test('trie mask == token-by-token check, along a generation with split characters', () => {
  const c = grammarConstraint('root ::= "{" [a-zé日]* "}"', idx);
  const path = [tokenOf([0x7b]), tokenOf([0x61, 0x62]), tokenOf([0xc3]), tokenOf([0xa9]), tokenOf([0xe6, 0x97]), tokenOf([0xa5]), tokenOf([0xc3]), tokenOf([0xa9, 0x7d])];
  for (const t of path) {
    assert.deepEqual(allowedByMask(c), allowedOneByOne(c));
    assert.ok(c.allows(t), `token ${t}`);
    assert.ok(!c.allows(CONTROL));
    assert.equal(c.allows(EOG), false, 'no end of generation before the grammar can end');
    c.accept(t);
  }
  assert.ok(c.complete && c.done);
  assert.deepEqual(allowedByMask(c), [EOG]);
  assert.throws(() => c.accept(tokenOf([0x61])), (e: unknown) => e instanceof GrammarError && e.code === 'GRAMMAR_NO_TOKEN');
});

test('mid-character tokens: a partial lead byte only where some completion can match', () => {
  const ascii = grammarConstraint('root ::= [a-z]+', idx);
  assert.ok(!ascii.allows(tokenOf([0xc3])));
  const latin = grammarConstraint('root ::= [a-zé]+', idx);
  assert.ok(latin.allows(tokenOf([0xc3])));
  assert.ok(!latin.allows(tokenOf([0xe6, 0x97])), 'no CJK in the class');
  assert.ok(!latin.allows(tokenOf([0xa9])), 'a continuation byte cannot start a character');
  latin.accept(tokenOf([0xc3]));
  assert.ok(!latin.complete, 'the grammar cannot end inside a character');
  assert.deepEqual(allowedByMask(latin), [tokenOf([0xa9])], 'only the continuation that completes é');
  latin.accept(tokenOf([0xa9]));
  assert.ok(latin.complete && !latin.done);
  assert.ok(latin.allows(EOG));
});

test('the budget rule: with k tokens left, only tokens after which the grammar can finish in k-1', () => {
  const c = grammarConstraint('root ::= "{" [a-z]* "}"', idx);
  assert.equal(c.minTokens, 2);
  c.remaining = 2;
  const two = allowedByMask(c).map((t) => new TextDecoder().decode(pieces[t]));
  assert.deepEqual(two.sort(), ['{', '{}']);
  c.remaining = 1;
  assert.deepEqual(allowedByMask(c), [tokenOf([0x7b, 0x7d])]);
  c.remaining = Infinity;
  c.accept(tokenOf([0x7b]));
  c.remaining = 1;
  assert.deepEqual(allowedByMask(c).map((t) => new TextDecoder().decode(pieces[t])).sort(), ['a}', '}']);
});

test('sampler hook: the sampled token is checked; a rejected one triggers the mask and a resample', () => {
  const n = pieces.length;
  const logits = new Float32Array(n).fill(-5);
  logits[tokenOf([0x7a])] = 10; // "z": outside the grammar
  logits[tokenOf([0x7b])] = 2; // "{"
  logits[tokenOf([0x7b, 0x7d])] = 1; // "{}"
  const c = grammarConstraint('root ::= "{" [a-y]* "}"', idx);
  const greedy = createSampler(n, { temp: 0 }, c);
  assert.equal(greedy.sample(logits), tokenOf([0x7b]));
  assert.equal(c.stats.checks, 1);
  assert.equal(c.stats.masks, 1);
  logits[tokenOf([0x7b])] = 20;
  assert.equal(greedy.sample(logits), tokenOf([0x7b]));
  assert.equal(c.stats.masks, 1, 'an allowed sampled token needs no mask');
  // temperature sampling: whatever the seed, only allowed tokens come out
  const counts = new Map<number, number>();
  for (let seed = 0; seed < 200; seed++) {
    const cs = grammarConstraint('root ::= "{" [a-y]* "}"', idx);
    const t = createSampler(n, { temp: 1.5, topK: 0, topP: 1, minP: 0, seed }, cs).sample(logits.map((_, i) => (i === tokenOf([0x7a]) ? 10 : 1)));
    assert.ok(cs.allows(t), `seed ${seed}: token ${t}`);
    counts.set(t, (counts.get(t) ?? 0) + 1);
  }
  assert.ok(counts.size >= 2, 'samples spread over the allowed tokens');
  // a grammar the vocabulary cannot spell: a typed error, not a bad token
  const none = grammarConstraint('root ::= "q"', idx);
  assert.throws(() => createSampler(n, { temp: 0 }, none).sample(logits), (e: unknown) => e instanceof GrammarError && e.code === 'GRAMMAR_NO_TOKEN');
});

test('automaton cache: compaction keeps the state', () => {
  const m = new GrammarMatcher(parseGbnf('root ::= ([a-z] [0-9]){1,400}'));
  let s = m.initial;
  for (let i = 0; i < 300; i++) s = m.walk(s, enc.encode(`x${i % 10}`));
  const d = m.dist[s]!;
  const before = m.size.states;
  const s2 = m.compact(s);
  assert.ok(m.size.states < before);
  assert.equal(m.dist[s2], d);
  assert.notEqual(m.walk(s2, enc.encode('a1')), REJECT);
  assert.equal(m.walk(s2, enc.encode('11')), REJECT);
});
