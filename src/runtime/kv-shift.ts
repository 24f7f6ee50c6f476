// Context shift in place (llama.cpp's K-shift): when a sequence's cache is full, the tokens after a kept prefix
// lose their oldest `discard` positions. Instead of evaluating the remaining tokens again (seconds to minutes of
// prefill on a long chat), their K and V rows move down by `discard` rows and each moved key, which holds RoPE
// at its old position p, is rotated by -discard: RoPE(p - d) = R(-d) RoPE(p). llama.cpp does the same with
// ggml_rope_ext on the f16 cache (positions = the delta, computed in f32, stored back to f16), so the shifted
// cache matches a fresh evaluation of the kept tokens up to that rounding. Layers without RoPE (SmolLM3's NoPE
// layers) and the V caches only move. Host-side work on the cache bytes: rare (once per discard tokens), and
// the scratch is allocated once per context, so a shift allocates nothing.

import type { DeviceBuffer } from '../backends/backend.js';
import { ropeCacheRow, ropeThetaScale } from '../backends/rope-cache.js';
import type { Graph } from '../graph/graph.js';
import { F16_TO_F32, f16FromF32Bits } from '../quant/float16.js';
import { fmaf } from '../quant/rounding.js';

/** The RoPE a layer's keys were stored with (the rope node feeding its kv_store). */
export interface KeyRope {
  headDim: number;
  nDims: number;
  neox: boolean;
  freqBase: number;
  freqScale: number;
  /** rope_freqs (one factor per rotated pair), or null */
  factors: Float32Array | null;
}

/** Per cache leaf name: the RoPE of its rows (K caches of RoPE layers), or null (V caches, NoPE layers). */
export function cacheRopes(g: Graph, readF32: (name: string) => Float32Array): Map<string, KeyRope | null> {
  const out = new Map<string, KeyRope | null>();
  for (const t of g.tensors) {
    if (t.op !== 'kv_store') continue;
    const cache = g.tensors[t.src[0]!]!, value = g.tensors[t.src[1]!]!;
    if (value.op !== 'rope') { out.set(cache.name, null); continue; }
    const p = value.params as { headDim: number; nDims: number; neox: boolean; freqBase: number; freqScale: number };
    const f = value.src[2] !== undefined ? g.tensors[value.src[2]!]! : undefined;
    out.set(cache.name, { headDim: p.headDim, nDims: p.nDims, neox: p.neox, freqBase: p.freqBase, freqScale: p.freqScale, factors: f ? readF32(f.name) : null });
  }
  return out;
}

// fmaf(a, b, c) of f32 values as src/quant/rounding.ts computes it, written out in the hot loop so
// no double is passed to a call (V8 boxes double arguments of calls it does not inline): the f64 sum rounded to
// f32, an f32 midpoint after an inexact add moved towards the lost part, then the f32's bits to f16 (integers).
const f64s = new Float64Array(1), u32s = new Uint32Array(f64s.buffer), f32s = new Float32Array(1), i32s = new Int32Array(f32s.buffer);
/** f16 bits of the f32 with bits w: normal halves here (RNE on the 13 dropped bits), the rest by f16FromF32Bits */
function halfBits(w: number): number {
  const e = ((w >>> 23) & 0xff) - 112;
  if (e < 1 || e >= 31) return f16FromF32Bits(w);
  const m = w & 0x7fffff, rest = m & 0x1fff;
  let h = (e << 10) | (m >>> 13);
  if (rest > 0x1000 || (rest === 0x1000 && (h & 1) !== 0)) h++;
  return h | ((w >>> 16) & 0x8000);
}

/** Rows moved per chunk (the scratch holds one chunk). */
const CHUNK_ROWS = 64;

/** Moves cache rows and re-rotates keys; one per context, its scratch sized for the widest row. */
export class KvShifter {
  private readonly bytes: Uint8Array;
  private readonly halves: Uint16Array;
  private readonly floats: Float32Array;
  private readonly cs: Float32Array;
  constructor(maxRowBytes: number, maxRopeDims: number) {
    const b = new ArrayBuffer(Math.ceil((CHUNK_ROWS * maxRowBytes) / 4) * 4);
    this.bytes = new Uint8Array(b);
    this.halves = new Uint16Array(b);
    this.floats = new Float32Array(b);
    this.cs = new Float32Array(Math.max(2, maxRopeDims));
  }

  /** per RoPE: the (cos, sin) table of the last delta (a context shift keeps discarding the same count) */
  private readonly tables = new Map<KeyRope, { delta: number; cs: Float32Array }>();
  /** host views of the caches whose buffers live in host memory (made once: a shift then allocates nothing) */
  private readonly views = new Map<DeviceBuffer, { u8: Uint8Array; u16: Uint16Array; f32: Float32Array }>();

  /**
   * Rows [from, from + n) of a cache (rowBytes each, the buffer's region at `offset`) to [to, to + n), to < from;
   * a K cache's rows (f16 or f32) rotated by `delta` positions on the way. Rows go in increasing order, so a
   * write only lands on rows already read.
   */
  move(buf: DeviceBuffer, offset: number, rowBytes: number, from: number, to: number, n: number, f16: boolean, rope: KeyRope | null, delta: number): void {
    if (n <= 0) return;
    if (rope) {
      let t = this.tables.get(rope);
      if (!t) { t = { delta: NaN, cs: new Float32Array(rope.nDims) }; this.tables.set(rope, t); }
      if (t.delta !== delta) { ropeCacheRow(delta, rope.nDims, ropeThetaScale(rope.freqBase, rope.nDims), rope.freqScale, rope.factors, 1, t.cs, 0); t.delta = delta; }
      this.cs.set(t.cs);
    }
    if (buf.hostView) {
      let v = this.views.get(buf);
      if (!v) {
        const u8 = buf.hostView(0, buf.size);
        v = { u8, u16: new Uint16Array(u8.buffer, u8.byteOffset, u8.byteLength >> 1), f32: new Float32Array(u8.buffer, u8.byteOffset, u8.byteLength >> 2) };
        this.views.set(buf, v);
      }
      if (!rope) { v.u8.copyWithin(offset + to * rowBytes, offset + from * rowBytes, offset + (from + n) * rowBytes); return; }
      // small integers throughout (`| 0`): a double argument would be boxed at every call
      const el = f16 ? 2 : 4, rowEl = (rowBytes / el) | 0, o = (offset / el) | 0;
      for (let r = 0; r < n; r++) {
        const s0 = (o + (from + r) * rowEl) | 0, d0 = (o + (to + r) * rowEl) | 0;
        if (f16) this.rotate(v.u16, s0, v.u16, d0, rowEl, rope); else this.rotateF32(v.f32, s0, v.f32, d0, rowEl, rope);
      }
      return;
    }
    // a device buffer: through the scratch, a chunk at a time (each chunk is read whole before it is written)
    for (let r = 0; r < n; r += CHUNK_ROWS) {
      const m = Math.min(CHUNK_ROWS, n - r), len = m * rowBytes;
      const chunk = this.bytes.subarray(0, len);
      buf.get(offset + (from + r) * rowBytes, len, chunk);
      if (rope && f16) this.rotate(this.halves, 0, this.halves, 0, len >> 1, rope);
      else if (rope) this.rotateF32(this.floats, 0, this.floats, 0, len >> 2, rope);
      buf.set(offset + (to + r) * rowBytes, chunk);
    }
  }

  /** ggml's rope on f16 rows: each value to f32, rotate_pairs as GCC contracts it (fma), back to f16 (RNE). */
  // n values from h[s..] to out[d..], heads of headDim; dims past nDims pass through
  private rotate(h: Uint16Array, s: number, out: Uint16Array, d: number, n: number, rope: KeyRope): void {
    const { headDim, nDims, neox } = rope, half = nDims / 2, cs = this.cs, f = F16_TO_F32;
    for (let b = 0; b < n; b += headDim) {
      for (let i = 0; i < half; i++) {
        const i0 = neox ? b + i : b + 2 * i, i1 = neox ? b + i + half : b + 2 * i + 1;
        const x0 = f[h[s + i0]!]!, x1 = f[h[s + i1]!]!, cos = cs[2 * i]!, sin = cs[2 * i + 1]!;
        // fmaf(x0, cos, -(x1 * sin)) and fmaf(x0, sin, x1 * cos) to f16, written out (see the note above halfBits)
        // (short f16 mantissas make exact f64 midpoints common: the TwoSum term is written out too)
        const c0 = -Math.fround(x1 * sin), p0 = x0 * cos, s0 = p0 + c0;
        let r0 = Math.fround(s0);
        if (r0 !== s0) {
          f64s[0] = s0;
          if ((u32s[0]! & 0x1fffffff) === 0x10000000) {
            const bb = s0 - p0, err = (p0 - (s0 - bb)) + (c0 - bb), other = 2 * s0 - r0;
            if (err > 0) r0 = Math.max(r0, other); else if (err < 0) r0 = Math.min(r0, other);
          }
        }
        const c1 = Math.fround(x1 * cos), p1 = x0 * sin, s1 = p1 + c1;
        let r1 = Math.fround(s1);
        if (r1 !== s1) {
          f64s[0] = s1;
          if ((u32s[0]! & 0x1fffffff) === 0x10000000) {
            const bb = s1 - p1, err = (p1 - (s1 - bb)) + (c1 - bb), other = 2 * s1 - r1;
            if (err > 0) r1 = Math.max(r1, other); else if (err < 0) r1 = Math.min(r1, other);
          }
        }
        f32s[0] = r0; out[d + i0] = halfBits(i32s[0]!);
        f32s[0] = r1; out[d + i1] = halfBits(i32s[0]!);
      }
      for (let i = b + nDims; i < b + headDim; i++) out[d + i] = h[s + i]!;
    }
  }

  /** as rotate on an f32 cache (the results rounded to f32) */
  private rotateF32(x: Float32Array, s: number, out: Float32Array, d: number, n: number, rope: KeyRope): void {
    const { headDim, nDims, neox } = rope, half = nDims / 2, cs = this.cs;
    for (let b = 0; b < n; b += headDim) {
      for (let i = 0; i < half; i++) {
        const i0 = neox ? b + i : b + 2 * i, i1 = neox ? b + i + half : b + 2 * i + 1;
        const x0 = x[s + i0]!, x1 = x[s + i1]!, cos = cs[2 * i]!, sin = cs[2 * i + 1]!;
        out[d + i0] = fmaf(x0, cos, -Math.fround(x1 * sin));
        out[d + i1] = fmaf(x0, sin, Math.fround(x1 * cos));
      }
      for (let i = b + nDims; i < b + headDim; i++) out[d + i] = x[s + i]!;
    }
  }
}
