// Small byte-level helpers shared by the decoders: bounded slicing, half-float conversion, hex, UTF-8.

import { ReError } from './errors.js';

/** Returns the [offset, offset+length) view of `buf`, or a clear OUT_OF_RANGE error naming `what`. */
export function sliceChecked(buf: Uint8Array, offset: number, length: number | undefined, what: string): Uint8Array {
  if (!Number.isSafeInteger(offset) || offset < 0) throw new ReError('OUT_OF_RANGE', `${what}: offset ${offset} is not a non-negative integer`);
  if (offset > buf.length) throw new ReError('OUT_OF_RANGE', `${what}: offset ${offset} is past the end (size ${buf.length})`);
  const len = length ?? buf.length - offset;
  if (!Number.isSafeInteger(len) || len < 0) throw new ReError('OUT_OF_RANGE', `${what}: length ${length} is not a non-negative integer`);
  if (offset + len > buf.length) throw new ReError('OUT_OF_RANGE', `${what}: range ${offset}+${len} runs past the end (size ${buf.length})`);
  return buf.subarray(offset, offset + len);
}

const f32buf = new Float32Array(1);
const u32buf = new Uint32Array(f32buf.buffer);

export function f32Bits(x: number): number {
  f32buf[0] = x;
  return u32buf[0]!;
}

export function bitsToF32(bits: number): number {
  u32buf[0] = bits >>> 0;
  return f32buf[0]!;
}

/** IEEE half from f32 bits, round-to-nearest-even (matches ggml's fp32->fp16 on finite inputs). */
export function f32ToF16Bits(x: number): number {
  const b = f32Bits(x);
  const sign = (b >>> 16) & 0x8000;
  const exp = (b >>> 23) & 0xff;
  let mant = b & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
  let e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - e;
    const half = 1 << (shift - 1);
    let m = mant >>> shift;
    const rem = mant & ((1 << shift) - 1);
    if (rem > half || (rem === half && (m & 1))) m++;
    return sign | m;
  }
  let m = mant >>> 13;
  const rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem === 0x1000 && (m & 1))) {
    m++;
    if (m === 0x400) { m = 0; e++; if (e >= 0x1f) return sign | 0x7c00; }
  }
  return sign | (e << 10) | m;
}

export function f16BitsToF32(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const e = (h >>> 10) & 0x1f;
  const m = h & 0x3ff;
  if (e === 0) return sign * m * 2 ** -24;
  if (e === 0x1f) return m ? NaN : sign * Infinity;
  return sign * (1 + m / 1024) * 2 ** (e - 15);
}

/** bfloat16 from f32, round-to-nearest-even (as ggml does); NaN stays a quiet NaN. */
export function f32ToBf16Bits(x: number): number {
  const b = f32Bits(x);
  if ((b & 0x7fffffff) > 0x7f800000) return ((b >>> 16) | 0x40) & 0xffff;
  return ((b + (0x7fff + ((b >>> 16) & 1))) >>> 16) & 0xffff;
}

export function bf16BitsToF32(h: number): number {
  return bitsToF32((h & 0xffff) << 16);
}

export function hex(bytes: Uint8Array, max = 32): string {
  let s = '';
  const n = Math.min(bytes.length, max);
  for (let i = 0; i < n; i++) s += (i ? ' ' : '') + bytes[i]!.toString(16).padStart(2, '0');
  if (bytes.length > max) s += ` … (+${bytes.length - max})`;
  return s;
}

export function hexOffset(n: number): string {
  return '0x' + n.toString(16);
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Strict UTF-8 decode; undefined when the bytes are not valid UTF-8. */
export function tryUtf8(bytes: Uint8Array): string | undefined {
  try {
    return utf8.decode(bytes);
  } catch {
    return undefined;
  }
}

/** True when a string is "text a human typed": no control characters except tab, newline, CR. */
export function isPrintableText(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 && c !== 9 && c !== 10 && c !== 13) return false;
    if (c === 0x7f) return false;
    if (c >= 0xfff0 && c <= 0xffff) return false;
  }
  return true;
}

/** JSON cannot carry NaN or infinities; they become strings so --json output stays valid. */
export function jsonNumber(x: number): number | string {
  return Number.isFinite(x) ? x : String(x);
}

// btoa/atob rather than Buffer: src/re stays free of Node-only APIs so it bundles for the browser.
export function toBase64(b: Uint8Array): string {
  let s = '';
  for (let i = 0; i < b.length; i += 0x8000) s += String.fromCharCode(...b.subarray(i, i + 0x8000));
  return btoa(s);
}

export function fromBase64(s: string): Uint8Array {
  let bin: string;
  try { bin = atob(s); } catch { return new Uint8Array(0); }
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/** FNV-1a 32-bit, hex: a cheap fingerprint to tell probe files apart (not a security hash). */
export function fnv1a(b: Uint8Array): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < b.length; i++) h = Math.imul(h ^ b[i]!, 0x01000193);
  return (h >>> 0).toString(16).padStart(8, '0');
}
