// Finding a known value in an unknown file, at every byte alignment: a scale factor, a tensor dimension or
// a marker value shows where the format keeps it.

import { f32Bits, f32ToBf16Bits, f32ToF16Bits } from './bytes.js';
import { ReError } from './errors.js';

export type LocateKind = 'u32' | 'f32' | 'f16' | 'bf16';

export interface LocateResult {
  kind: LocateKind;
  value: number;
  /** the exact bit pattern searched for (after rounding to the type) */
  bits: number;
  endian: 'le' | 'be';
  count: number;
  offsets: number[];
  truncated: boolean;
}

export function encodeNeedle(kind: LocateKind, value: number, bigEndian: boolean): { bits: number; bytes: Uint8Array } {
  let bits: number;
  let width: number;
  switch (kind) {
    case 'u32':
      if (!Number.isInteger(value) || value < 0 || value > 0xffffffff) throw new ReError('BAD_ARGS', `--u32 value ${value} is not an integer in 0..4294967295`);
      bits = value; width = 4; break;
    case 'f32': bits = f32Bits(value); width = 4; break;
    case 'f16': bits = f32ToF16Bits(value); width = 2; break;
    case 'bf16': bits = f32ToBf16Bits(value); width = 2; break;
  }
  const bytes = new Uint8Array(width);
  for (let i = 0; i < width; i++) bytes[bigEndian ? width - 1 - i : i] = (bits >>> (8 * i)) & 0xff;
  return { bits: bits >>> 0, bytes };
}

export function locate(buf: Uint8Array, kind: LocateKind, value: number, opts: { bigEndian?: boolean; max?: number } = {}): LocateResult {
  const { bits, bytes } = encodeNeedle(kind, value, !!opts.bigEndian);
  const max = opts.max ?? 1000;
  const offsets: number[] = [];
  let count = 0;
  const w = bytes.length;
  const b0 = bytes[0]!;
  for (let i = 0; i + w <= buf.length; i++) {
    if (buf[i] !== b0) continue;
    let ok = true;
    for (let j = 1; j < w; j++) if (buf[i + j] !== bytes[j]) { ok = false; break; }
    if (!ok) continue;
    if (count < max) offsets.push(i);
    count++;
  }
  return { kind, value, bits, endian: opts.bigEndian ? 'be' : 'le', count, offsets, truncated: count > offsets.length };
}
