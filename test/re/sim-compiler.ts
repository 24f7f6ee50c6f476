// A simulated vendor NPU compiler (tests only, not product code). It takes a row-major int8 (or int4) matrix
// and emits a "compiled model": a header with fixed and per-build random words, the weights in one of
// several vendor-style layouts, and a trailer. The layout solver must learn each layout from the outside.

import type { Rng } from './prng.js';

export type SimLayout =
  | 'row-major' | 'col-major' | 'tiles16' | 'int4-pairs' | 'nibble-planes' | 'rows-padded32'
  // a fixed scrambled order no affine rule describes: the solver must fall back to an explicit table
  | 'permuted'
  // deliberately unsolvable compilers: the solver must refuse them
  | 'row-checksum' | 'shuffled';

export const SOLVABLE: SimLayout[] = ['row-major', 'col-major', 'tiles16', 'int4-pairs', 'nibble-planes', 'rows-padded32'];

export function simBits(kind: SimLayout): 4 | 8 {
  return kind === 'int4-pairs' ? 4 : 8;
}

export const HEADER_SIZE = 32;

function header(rows: number, cols: number, payload: number, rng: Rng): Uint8Array {
  const h = new Uint8Array(HEADER_SIZE);
  const dv = new DataView(h.buffer);
  h.set(new TextEncoder().encode('AXMDLSIM'), 0); // fixed magic
  dv.setUint32(8, 3, true); // fixed version
  dv.setUint32(12, Math.floor(rng.next() * 2 ** 32), true); // random build id
  dv.setUint32(16, rows, true);
  dv.setUint32(20, cols, true);
  dv.setUint32(24, Math.floor(rng.next() * 2 ** 32), true); // random timestamp
  dv.setUint32(28, payload, true);
  return h;
}

function setNib(b: Uint8Array, byte: number, high: boolean, v: number): void {
  b[byte] = high ? (b[byte]! & 0x0f) | ((v & 15) << 4) : (b[byte]! & 0xf0) | (v & 15);
}

/** The weights section for one layout. */
export function simPayload(kind: SimLayout, rows: number, cols: number, w: Int8Array, rng: Rng): Uint8Array {
  const at = (r: number, c: number) => w[r * cols + c]!;
  switch (kind) {
    case 'row-major': case 'shuffled': {
      const p = new Uint8Array(rows * cols);
      for (let i = 0; i < rows * cols; i++) p[i] = w[i]! & 0xff;
      if (kind === 'shuffled') {
        // A compiler whose placement changes from build to build: no layout exists.
        for (let i = p.length - 1; i > 0; i--) { const j = rng.int(0, i); const t = p[i]!; p[i] = p[j]!; p[j] = t; }
      }
      return p;
    }
    case 'permuted': {
      // Deterministic (same for every build) but irregular: position of weight i = (i * 7919 + 13) mod n.
      const n = rows * cols;
      const p = new Uint8Array(n);
      for (let i = 0; i < n; i++) p[(i * 7919 + 13) % n] = w[i]! & 0xff;
      return p;
    }
    case 'row-checksum': {
      // Each row followed by a checksum byte that depends on the content.
      const p = new Uint8Array(rows * (cols + 1));
      for (let r = 0; r < rows; r++) {
        let s = 0;
        for (let c = 0; c < cols; c++) { p[r * (cols + 1) + c] = at(r, c) & 0xff; s = (s + at(r, c)) & 0xff; }
        p[r * (cols + 1) + cols] = s;
      }
      return p;
    }
    case 'col-major': {
      const p = new Uint8Array(rows * cols);
      for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) p[c * rows + r] = at(r, c) & 0xff;
      return p;
    }
    case 'tiles16': {
      const tr = Math.ceil(rows / 16), tc = Math.ceil(cols / 16);
      const p = new Uint8Array(tr * tc * 256);
      for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) {
        p[((r >> 4) * tc + (c >> 4)) * 256 + (r & 15) * 16 + (c & 15)] = at(r, c) & 0xff;
      }
      return p;
    }
    case 'int4-pairs': {
      const bpr = Math.ceil(cols / 2);
      const p = new Uint8Array(rows * bpr);
      for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) setNib(p, r * bpr + (c >> 1), (c & 1) === 1, at(r, c));
      return p;
    }
    case 'nibble-planes': {
      // Blocks of 32 weights: 16 bytes fine plane (low nibbles), a 2-byte block marker, 16 bytes coarse plane
      // (high nibbles, offset binary): the fine plane sits 18 bytes before the coarse one.
      const blocks = Math.ceil(cols / 32);
      const rowBytes = blocks * 34;
      const p = new Uint8Array(rows * rowBytes);
      for (let r = 0; r < rows; r++) for (let b = 0; b < blocks; b++) {
        const o = r * rowBytes + b * 34;
        p[o + 16] = 0x5a; p[o + 17] = 0xa5;
        for (let j = 0; j < 32 && b * 32 + j < cols; j++) {
          const v = at(r, b * 32 + j);
          setNib(p, o + (j >> 1), (j & 1) === 1, v & 15);
          setNib(p, o + 18 + (j >> 1), (j & 1) === 1, ((v >> 4) & 15) ^ 8);
        }
      }
      return p;
    }
    case 'rows-padded32': {
      // Offset-binary bytes, each row padded to a multiple of 32 bytes with 0xAA.
      const stride = Math.ceil(cols / 32) * 32;
      const p = new Uint8Array(rows * stride).fill(0xaa);
      for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) p[r * stride + c] = (at(r, c) + 128) & 0xff;
      return p;
    }
  }
}

export function simCompile(kind: SimLayout, rows: number, cols: number, w: Int8Array, rng: Rng): Uint8Array {
  const payload = simPayload(kind, rows, cols, w, rng);
  const trailer = new Uint8Array(8);
  trailer.set(new TextEncoder().encode('END!'), 0);
  new DataView(trailer.buffer).setUint32(4, payload.length, true);
  const out = new Uint8Array(HEADER_SIZE + payload.length + trailer.length);
  out.set(header(rows, cols, payload.length, rng), 0);
  out.set(payload, HEADER_SIZE);
  out.set(trailer, HEADER_SIZE + payload.length);
  return out;
}

export function randomMatrix(rows: number, cols: number, bits: 4 | 8, rng: Rng): Int8Array {
  const m = new Int8Array(rows * cols);
  for (let i = 0; i < m.length; i++) m[i] = bits === 8 ? rng.int(-128, 127) : rng.int(-8, 7);
  return m;
}
