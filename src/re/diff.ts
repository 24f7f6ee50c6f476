// Aligned word diff of two builds. Compilers stamp build ids, timestamps and random salts into their output;
// repeated builds of one input (the mask files) reveal those words, which are masked before comparing
// so the remaining differences are the ones the input caused.

import { ReError } from './errors.js';

export type WordSize = 8 | 16 | 32;

export interface DiffRegion {
  /** byte offset of the first differing word */
  offset: number;
  /** bytes covered (whole words) */
  length: number;
  /** differing words in the region (the run length) */
  words: number;
}

export interface DiffResult {
  word: WordSize;
  sizeA: number;
  sizeB: number;
  /** words compared (the common, word-aligned prefix) */
  compared: number;
  differing: number;
  masked: number;
  /** words masked as nondeterministic (byte offsets), capped for output */
  maskedRegions: DiffRegion[];
  regions: DiffRegion[];
  /** run length -> number of regions with that length */
  runLengths: Record<string, number>;
}

function wordAt(buf: Uint8Array, i: number, bytes: number): number {
  let v = 0;
  for (let k = 0; k < bytes; k++) v |= buf[i * bytes + k]! << (8 * k);
  return v >>> 0;
}

function runs(flags: Uint8Array, bytes: number, merge: number): DiffRegion[] {
  const out: DiffRegion[] = [];
  let cur: DiffRegion | undefined;
  let last = -1;
  for (let i = 0; i < flags.length; i++) {
    if (!flags[i]) continue;
    // Gaps of at most `merge` equal words join regions: one edit often touches every other word.
    if (cur && i - last <= merge + 1) {
      cur.words++;
      cur.length = (i + 1) * bytes - cur.offset;
    } else {
      cur = { offset: i * bytes, length: bytes, words: 1 };
      out.push(cur);
    }
    last = i;
  }
  return out;
}

/** Words at which the mask builds disagree with each other: nondeterministic output. */
export function nondeterministicMask(masks: Uint8Array[], word: WordSize): Uint8Array {
  const bytes = word / 8;
  if (masks.length < 2) throw new ReError('BAD_ARGS', `--mask needs at least two builds of the same input (got ${masks.length})`);
  const n = Math.floor(Math.min(...masks.map((m) => m.length)) / bytes);
  const maxN = Math.floor(Math.max(...masks.map((m) => m.length)) / bytes);
  const flags = new Uint8Array(maxN);
  // Words past the shortest mask build exist in only some builds: nondeterministic too.
  flags.fill(1, n);
  for (let i = 0; i < n; i++) {
    const w0 = wordAt(masks[0]!, i, bytes);
    for (let k = 1; k < masks.length; k++) if (wordAt(masks[k]!, i, bytes) !== w0) { flags[i] = 1; break; }
  }
  return flags;
}

export function diffBuffers(a: Uint8Array, b: Uint8Array, opts: { word?: WordSize; masks?: Uint8Array[]; merge?: number } = {}): DiffResult {
  const word = opts.word ?? 8;
  if (word !== 8 && word !== 16 && word !== 32) throw new ReError('BAD_ARGS', `--word must be 8, 16 or 32 (got ${word})`);
  const bytes = word / 8;
  const merge = opts.merge ?? 0;
  const n = Math.floor(Math.min(a.length, b.length) / bytes);
  const mask = opts.masks && opts.masks.length ? nondeterministicMask(opts.masks, word) : undefined;
  const diff = new Uint8Array(n);
  const masked = new Uint8Array(n);
  let differing = 0;
  let maskedCount = 0;
  for (let i = 0; i < n; i++) {
    if (mask && (i >= mask.length || mask[i])) { masked[i] = 1; maskedCount++; continue; }
    if (wordAt(a, i, bytes) !== wordAt(b, i, bytes)) { diff[i] = 1; differing++; }
  }
  const regions = runs(diff, bytes, merge);
  const runLengths: Record<string, number> = {};
  for (const r of regions) runLengths[r.words] = (runLengths[r.words] ?? 0) + 1;
  return {
    word, sizeA: a.length, sizeB: b.length, compared: n, differing, masked: maskedCount,
    maskedRegions: runs(masked, bytes, 0), regions, runLengths,
  };
}
