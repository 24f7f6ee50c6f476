// Shannon entropy per window: weights and compressed data sit near 8 bits/byte, headers and tables
// far lower, so the profile points at the interesting regions of an unknown file.

import { ReError } from './errors.js';

export function shannonEntropy(bytes: Uint8Array): number {
  if (bytes.length === 0) return 0;
  const counts = new Uint32Array(256);
  for (let i = 0; i < bytes.length; i++) counts[bytes[i]!]!++;
  let h = 0;
  const n = bytes.length;
  for (let v = 0; v < 256; v++) {
    const c = counts[v]!;
    if (c) { const p = c / n; h -= p * Math.log2(p); }
  }
  return h;
}

export interface EntropyWindow { offset: number; length: number; entropy: number }
export interface EntropySegment { offset: number; length: number; class: 'low' | 'mid' | 'high'; mean: number }
export interface EntropyReport {
  size: number;
  window: number;
  step: number;
  overall: number;
  windows: EntropyWindow[];
  /** consecutive windows of the same class merged: a quick map of the file */
  segments: EntropySegment[];
}

export function classify(h: number): 'low' | 'mid' | 'high' {
  return h < 3 ? 'low' : h < 7 ? 'mid' : 'high';
}

export function entropyProfile(buf: Uint8Array, window: number, step: number): EntropyReport {
  if (!Number.isSafeInteger(window) || window < 1) throw new ReError('BAD_ARGS', `--window must be a positive integer (got ${window})`);
  if (!Number.isSafeInteger(step) || step < 1) throw new ReError('BAD_ARGS', `--step must be a positive integer (got ${step})`);
  const windows: EntropyWindow[] = [];
  for (let off = 0; off < buf.length; off += step) {
    const len = Math.min(window, buf.length - off);
    windows.push({ offset: off, length: len, entropy: shannonEntropy(buf.subarray(off, off + len)) });
    if (off + len >= buf.length) break;
  }
  const segments: EntropySegment[] = [];
  const counts: number[] = [];
  for (const w of windows) {
    const cls = classify(w.entropy);
    const last = segments[segments.length - 1];
    const end = w.offset + w.length;
    if (last && last.class === cls) {
      const k = segments.length - 1;
      counts[k]!++;
      last.mean += (w.entropy - last.mean) / counts[k]!;
      last.length = end - last.offset;
    } else {
      segments.push({ offset: w.offset, length: end - w.offset, class: cls, mean: w.entropy });
      counts.push(1);
    }
  }
  return { size: buf.length, window, step, overall: shannonEntropy(buf), windows, segments };
}
