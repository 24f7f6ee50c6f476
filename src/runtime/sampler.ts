// The sampler chain, with llama.cpp's defaults and order (common_sampler):
// penalties -> top-k -> top-p -> min-p -> temperature -> sample. Temperature <= 0 is greedy
// (argmax, lowest id on ties). Buffers are allocated once per sampler, not per token.
//
// A token constraint (a grammar) hooks in as llama.cpp's common_sampler does: the chain samples from the
// unconstrained logits, the constraint checks that one token, and only when it is rejected does the
// chain run again with every disallowed token at -inf. That second run goes over the allowed tokens
// only (the constraint lists them in ascending id order): a -inf candidate never survives top-k with a
// weight, so the draw is the one the fully masked vocabulary gives (same candidates, same order, same
// sums; test/grammar/sampler-oracle.test.ts), without rewriting and rescanning all 150k logits.

import { Mt19937 } from './rng.js';
import type { TokenConstraint } from '../grammar/constraint.js';
import { GrammarError } from '../grammar/errors.js';

export interface SamplerParams {
  temp: number;
  topK: number;
  topP: number;
  minP: number;
  repeatPenalty: number;
  repeatLastN: number;
  frequencyPenalty: number;
  presencePenalty: number;
  /** undefined: random */
  seed?: number;
}

export const defaultSamplerParams: SamplerParams = {
  temp: 0.8, topK: 40, topP: 0.95, minP: 0.05,
  repeatPenalty: 1.0, repeatLastN: 64, frequencyPenalty: 0, presencePenalty: 0,
};

export interface Sampler {
  readonly params: SamplerParams;
  /** restricts the sampled tokens (a grammar); the caller advances it with constraint.accept */
  constraint: TokenConstraint | null;
  /** picks the next token from logits (logits are not modified) */
  sample(logits: Float32Array): number;
  /** records a token (prompt or generated) for the penalties */
  accept(token: number): void;
  reset(): void;
}

export function argmax(logits: ArrayLike<number>, n = logits.length): number {
  let best = 0;
  let bv = logits[0]!;
  for (let i = 1; i < n; i++) if (logits[i]! > bv) { bv = logits[i]!; best = i; }
  return best;
}

export function createSampler(nVocab: number, p: Partial<SamplerParams> = {}, constraint: TokenConstraint | null = null): Sampler {
  const params: SamplerParams = { ...defaultSamplerParams, ...p };
  const rng = new Mt19937(params.seed ?? ((Math.random() * 0x100000000) >>> 0));
  const ids = new Int32Array(nVocab);
  const vals = new Float32Array(nVocab);
  const probs = new Float64Array(nVocab);
  const counts = new Map<number, number>();
  const history: number[] = [];

  const penalized = params.repeatPenalty !== 1 || params.frequencyPenalty !== 0 || params.presencePenalty !== 0;
  // penalties (llama.cpp: repeat divides positive / multiplies negative logits)
  function penalty(v: number, c: number): number {
    if (params.repeatPenalty !== 1) v = v <= 0 ? v * params.repeatPenalty : v / params.repeatPenalty;
    return v - (c * params.frequencyPenalty + (c > 0 ? params.presencePenalty : 0));
  }

  // Sorts candidates [0, n) by value descending, lower id first on ties, in place (heap sort:
  // no allocation, O(n log n) even when top-k is off and n is the whole vocabulary).
  const before = (i: number, j: number) => vals[i]! < vals[j]! || (vals[i] === vals[j] && ids[i]! > ids[j]!);
  function swap(i: number, j: number): void {
    const ti = ids[i]!; ids[i] = ids[j]!; ids[j] = ti;
    const tv = vals[i]!; vals[i] = vals[j]!; vals[j] = tv;
  }
  function siftDown(root: number, n: number): void {
    // min-heap on (value, -id): the root is the element that belongs last
    for (;;) {
      const l = 2 * root + 1;
      if (l >= n) return;
      let m = l;
      if (l + 1 < n && before(l + 1, l)) m = l + 1;
      if (!before(m, root)) return;
      swap(m, root);
      root = m;
    }
  }
  function sortDesc(n: number): void {
    for (let i = (n >> 1) - 1; i >= 0; i--) siftDown(i, n);
    for (let end = n - 1; end > 0; end--) { swap(0, end); siftDown(0, end); }
  }

  // top-k candidates as (value, id) pairs in a k-slot min-heap ordered as sortDesc orders them (value, then lower
  // id first): its root is the candidate that belongs last. One pass over the values keeps the k first of that
  // total order, i.e. everything above the k-th value and the lowest ids among the ties at it (NaN never enters).
  const kCap = Math.max(1, Math.min(nVocab, params.topK > 0 ? params.topK : 1));
  const hv = new Float32Array(kCap), hid = new Int32Array(kCap);
  /** the heap's root (the candidate that belongs last) went down after a replacement: sift it down */
  function heapDown(k: number): void {
    let j = 0;
    const v = hv[0]!, id = hid[0]!;
    for (;;) {
      const l = 2 * j + 1;
      if (l >= k) break;
      let m = l;
      const r = l + 1;
      if (r < k && (hv[r]! < hv[l]! || (hv[r] === hv[l] && hid[r]! > hid[l]!))) m = r;
      if (!(hv[m]! < v || (hv[m] === v && hid[m]! > id))) break;
      hv[j] = hv[m]!; hid[j] = hid[m]!;
      j = m;
    }
    hv[j] = v; hid[j] = id;
  }
  /** the entry just appended at position i moves up to its place */
  function heapUp(i: number): void {
    const v = hv[i]!, id = hid[i]!;
    while (i > 0) {
      const pi = (i - 1) >> 1;
      if (!(v < hv[pi]! || (v === hv[pi] && id > hid[pi]!))) break;
      hv[i] = hv[pi]!; hid[i] = hid[pi]!;
      i = pi;
    }
    hv[i] = v; hid[i] = id;
  }
  /**
   * keep the k largest of candidates [0, n), sorted: from `src` (ids = the positions: the raw logits, read in
   * place, no copy) or, with src null, from vals/ids
   */
  function topK(n: number, k: number, src: Float32Array | null): number {
    if (k <= 0 || k >= n) {
      if (src) for (let i = 0; i < n; i++) { ids[i] = i; vals[i] = src[i]!; }
      sortDesc(n);
      return n;
    }
    const x = src ?? vals;
    let m = 0;
    // fill: the first k values that are not NaN
    let i = 0;
    for (; i < n && m < k; i++) {
      const v = x[i]!;
      if (v !== v) continue;
      hv[m] = v; hid[m] = src ? i : ids[i]!;
      heapUp(m++);
    }
    // then a value replaces the root when it comes first in the order (above it, or tied with a lower id)
    let rv = hv[0]!, rid = hid[0]!;
    if (src) {
      for (; i < n; i++) {
        const v = src[i]!;
        if (v > rv || (v === rv && i < rid)) { hv[0] = v; hid[0] = i; heapDown(k); rv = hv[0]!; rid = hid[0]!; }
      }
    } else {
      for (; i < n; i++) {
        const v = vals[i]!;
        if (v > rv || (v === rv && ids[i]! < rid)) { hv[0] = v; hid[0] = ids[i]!; heapDown(k); rv = hv[0]!; rid = hid[0]!; }
      }
    }
    for (let j = 0; j < m; j++) { ids[j] = hid[j]!; vals[j] = hv[j]!; }
    sortDesc(m);
    return m;
  }

  function softmax(n: number): void {
    const max = vals[0]!;
    let sum = 0;
    for (let i = 0; i < n; i++) { const e = Math.exp(vals[i]! - max); probs[i] = e; sum += e; }
    for (let i = 0; i < n; i++) probs[i] = probs[i]! / sum;
  }

  const self: Sampler = {
    params,
    constraint,
    accept(token) {
      history.push(token);
      counts.set(token, (counts.get(token) ?? 0) + 1);
      if (params.repeatLastN > 0 && history.length > params.repeatLastN) {
        const old = history.shift()!;
        const c = counts.get(old)! - 1;
        if (c === 0) counts.delete(old); else counts.set(old, c);
      }
    },
    reset() { history.length = 0; counts.clear(); },
    sample(logits) {
      const n0 = Math.min(nVocab, logits.length);
      // without penalties top-k reads the logits in place (no copy of the vocabulary); greedy and the
      // other cases work on the prepared candidates
      const direct = !penalized && params.temp > 0;
      if (!direct) prepare(logits, n0);
      const c = self.constraint;
      if (!c) return chain(n0, direct ? logits : null);
      const id = chain(n0, direct ? logits : null);
      if (c.allows(id)) return id;
      // rejected: draw again from the allowed tokens alone
      const k = c.collect(ids, n0);
      if (k === 0) throw new GrammarError('GRAMMAR_NO_TOKEN', 'no token of the vocabulary can extend the grammar here');
      const t0 = performance.now();
      prepareAllowed(logits, k);
      const r = chain(k, null);
      c.stats.resampleMs += performance.now() - t0;
      return r;
    },
  };
  return self;

  function prepare(logits: Float32Array, n0: number): void {
    for (let i = 0; i < n0; i++) { ids[i] = i; vals[i] = logits[i]!; }
    if (penalized) for (const [tok, c] of counts) if (tok < n0) vals[tok] = penalty(vals[tok]!, c);
  }

  /** candidates = the k tokens already in ids[0..k), ascending */
  function prepareAllowed(logits: Float32Array, k: number): void {
    for (let i = 0; i < k; i++) vals[i] = logits[ids[i]!]!;
    if (!penalized) return;
    for (const [tok, c] of counts) {
      // binary search: the penalized history is at most repeatLastN tokens
      let lo = 0, hi = k;
      while (lo < hi) { const mid = (lo + hi) >> 1; if (ids[mid]! < tok) lo = mid + 1; else hi = mid; }
      if (lo < k && ids[lo] === tok) vals[lo] = penalty(vals[lo]!, c);
    }
  }

  /** the chain over candidates [0, n0): vals/ids, or (src) the raw logits with ids = positions */
  function chain(n0: number, src: Float32Array | null): number {
    if (params.temp <= 0) return ids[argmax(vals, n0)]!;
    let n = topK(n0, params.topK, src);
    if (params.topP < 1) {
      softmax(n);
      let cum = 0;
      let keep = n;
      for (let i = 0; i < n; i++) { cum += probs[i]!; if (cum >= params.topP) { keep = i + 1; break; } }
      n = Math.max(1, keep);
    }
    if (params.minP > 0) {
      const thr = vals[0]! + Math.log(params.minP);
      let keep = 1;
      while (keep < n && vals[keep]! >= thr) keep++;
      n = keep;
    }
    for (let i = 0; i < n; i++) vals[i] = vals[i]! / params.temp;
    softmax(n);
    const r = rng.nextDouble();
    let cum = 0;
    let last = 0; // the last candidate with a non-zero probability (masked ones have none)
    for (let i = 0; i < n; i++) { if (probs[i]! > 0) last = i; cum += probs[i]!; if (r < cum) return ids[i]!; }
    return ids[last]!;
  }
}

/** Top-k probabilities (softmax over the whole vocabulary), highest first. */
export function topProbs(logits: Float32Array, k: number, n = logits.length): [number, number][] {
  let max = -Infinity;
  for (let i = 0; i < n; i++) if (logits[i]! > max) max = logits[i]!;
  let sum = 0;
  for (let i = 0; i < n; i++) sum += Math.exp(logits[i]! - max);
  const best: [number, number][] = [];
  for (let i = 0; i < n; i++) {
    const v = logits[i]!;
    if (best.length < k || v > best[best.length - 1]![1]) {
      best.push([i, v]);
      best.sort((a, b) => b[1] - a[1] || a[0] - b[0]);
      if (best.length > k) best.pop();
    }
  }
  return best.map(([id, v]) => [id, Math.exp(v - max) / sum]);
}
