// A grammar as a token constraint for the sampler: which tokens may come next, and the state after one.
//
// The budget rule (why a constrained generation always ends in a complete document): the generation
// loop tells the constraint how many tokens it may still produce (`remaining`, from -n and the context
// left). A token is allowed only if, after it, the grammar can still complete within the tokens left,
// counting one token per byte of the shortest completion (dist). Every vocabulary with single-character
// tokens (byte-level BPE, SentencePiece with byte fallback) can spell that completion, so the rule never
// leaves the sampler without a choice, and when the budget runs out the output is complete. llama.cpp
// instead stops at -n wherever it is (often mid-document); with a budget that the grammar can never
// meet the constraint refuses to start (GRAMMAR_BUDGET) rather than emit a broken document.

import { GrammarError } from './errors.js';
import { parseGbnf, type Grammar } from './gbnf.js';
import { GrammarMatcher, REJECT } from './matcher.js';
import { tokenIndex, type TokenIndex, type VocabSource } from './token-index.js';

export interface ConstraintStats {
  /** tokens checked on the fast path (the sampled token alone) */
  checks: number;
  /** full-vocabulary masks (the sampled token was rejected, or the budget is tight) */
  masks: number;
  /** wall ms in the grammar: checks, masks and advancing the state */
  ms: number;
  /** of which in full masks */
  maskMs: number;
  /** tokens accepted */
  tokens: number;
  /** wall ms the sampler spent drawing again over the allowed tokens after a rejection (src/runtime/sampler.ts);
   * with `ms` this is everything the grammar adds to a step */
  resampleMs: number;
}

export interface TokenConstraint {
  /** tokens the generation may still produce, this one included (Infinity: no limit) */
  remaining: number;
  /** whether `token` may come next */
  allows(token: number): boolean;
  /** sets vals[t] = -Infinity for every disallowed token t < n; returns how many stay allowed */
  mask(vals: Float32Array, n: number): number;
  /** writes the allowed tokens t < n to out[0..k) in ascending order and returns k (out holds n) */
  collect(out: Int32Array, n: number): number;
  /** advances over a generated token (throws if the token is not allowed) */
  accept(token: number): void;
  /** the grammar may end here */
  readonly complete: boolean;
  /** the grammar has ended: nothing but end-of-generation can follow */
  readonly done: boolean;
  /** fewest tokens (one per byte) that complete the grammar from here */
  readonly minTokens: number;
  reset(): void;
  readonly stats: ConstraintStats;
  /** automaton states cached so far */
  readonly states: number;
}

/** keeps the automaton's caches bounded: past this many states they are rebuilt from the current state */
const MAX_STATES = 16_384;

export function grammarConstraint(grammar: Grammar | string, vocab: VocabSource | TokenIndex): TokenConstraint {
  const g = typeof grammar === 'string' ? parseGbnf(grammar) : grammar;
  const idx = 'nodeByte' in vocab ? vocab : tokenIndex(vocab);
  const m = new GrammarMatcher(g);
  let state = m.initial;
  const allowed = new Uint8Array(idx.nVocab);
  const stateAt = new Int32Array(idx.maxDepth + 1);
  const stats: ConstraintStats = { checks: 0, masks: 0, ms: 0, maskMs: 0, tokens: 0, resampleMs: 0 };

  const after = (t: number): number => m.walk(state, idx.bytes, idx.off[t]!, idx.off[t + 1]!);

  function allows(t: number): boolean {
    if (t < 0 || t >= idx.nVocab) return false;
    if (idx.isEog[t]) return m.isComplete(state);
    if (idx.off[t] === idx.off[t + 1]) return false;
    const s = after(t);
    return s !== REJECT && m.dist[s]! <= c.remaining - 1;
  }

  // preorder trie walk: stateAt[d] is the state after the first d bytes of the current node's path.
  // Sets allowed[t] = 1 exactly for the allowed tokens and returns how many.
  function fillAllowed(): number {
    allowed.fill(0);
    let count = 0;
    const limit = c.remaining - 1;
    const unlimited = limit === Infinity;
    const { nodeByte, nodeDepth, nodeEnd, tokStart, tokList } = idx;
    const nNodes = nodeByte.length;
    stateAt[0] = state;
    let trans = m.trans;
    let dist = m.dist;
    for (let i = 1; i < nNodes;) {
      const b = nodeByte[i]!;
      const ps = stateAt[nodeDepth[i]! - 1]!;
      let s = trans[ps * 256 + b]!;
      if (s === -2) { s = m.step(ps, b); trans = m.trans; dist = m.dist; }
      if (s < 0) { i = nodeEnd[i]!; continue; }
      stateAt[nodeDepth[i]!] = s;
      const k0 = tokStart[i]!, k1 = tokStart[i + 1]!;
      if (k0 !== k1 && (unlimited || dist[s]! <= limit)) { for (let k = k0; k < k1; k++) allowed[tokList[k]!] = 1; count += k1 - k0; }
      i++;
    }
    if (m.isComplete(state)) for (const t of idx.eog) { allowed[t] = 1; count++; }
    return count;
  }

  const c: TokenConstraint = {
    remaining: Infinity,
    allows(t) {
      const t0 = performance.now();
      stats.checks++;
      const ok = allows(t);
      stats.ms += performance.now() - t0;
      return ok;
    },
    mask(vals, n) {
      const t0 = performance.now();
      stats.masks++;
      fillAllowed();
      let k = 0;
      for (let t = 0; t < n; t++) { if (allowed[t]) k++; else vals[t] = -Infinity; }
      const dt = performance.now() - t0;
      stats.ms += dt;
      stats.maskMs += dt;
      return k;
    },
    collect(out, n) {
      const t0 = performance.now();
      stats.masks++;
      const total = fillAllowed();
      // ascending ids: one scan of allowed[] (a byte per token, so ~150 KB for a 150k vocabulary)
      const nv = Math.min(n, idx.nVocab);
      let k = 0;
      for (let t = 0; t < nv && k < total; t++) if (allowed[t]) out[k++] = t;
      const dt = performance.now() - t0;
      stats.ms += dt;
      stats.maskMs += dt;
      return k;
    },
    accept(t) {
      const t0 = performance.now();
      if (idx.isEog[t]) {
        if (!m.isComplete(state)) throw new GrammarError('GRAMMAR_NO_TOKEN', `end of generation (token ${t}) before the grammar is complete`);
      } else {
        const s = t >= 0 && t < idx.nVocab && idx.off[t] !== idx.off[t + 1] ? after(t) : REJECT;
        if (s === REJECT) throw new GrammarError('GRAMMAR_NO_TOKEN', `token ${t} does not extend the grammar`);
        state = s;
        if (m.nStates > MAX_STATES) state = m.compact(state);
      }
      stats.tokens++;
      stats.ms += performance.now() - t0;
    },
    get complete() { return m.isComplete(state); },
    get done() { return m.isDone(state); },
    get minTokens() { return m.dist[state]!; },
    reset() { state = m.initial; c.remaining = Infinity; },
    stats,
    get states() { return m.nStates; },
  };
  return c;
}
