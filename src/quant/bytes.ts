// Little-endian reads and writes on Uint8Arrays at any byte offset.
//
// Tensor data is mapped at arbitrary offsets, so a Float32Array view over it may be illegal
// (unaligned). A DataView has no alignment rule; we keep one per underlying buffer and reuse it,
// so the per-row functions do not allocate. Call sites own a cache slot each, because a matmul
// reads weights and activations from two different buffers in alternation.

import { F16_TO_F32 } from './float16.js';

export class DataViewCache {
  private buffer: ArrayBufferLike | null = null;
  private view: DataView | null = null;

  /** A DataView over the whole buffer behind `bytes`; index it with `bytes.byteOffset + offset`. */
  of(bytes: Uint8Array): DataView {
    const buf = bytes.buffer;
    // A grown WebAssembly.Memory or resized buffer shows up as a different buffer object
    // or a detached view (byteLength 0), so the cache refreshes itself.
    if (buf !== this.buffer || this.view === null || this.view.byteLength !== buf.byteLength) {
      this.buffer = buf;
      this.view = new DataView(buf);
    }
    return this.view;
  }
}

/** f16 stored little-endian at bytes[o], decoded. */
export function readF16(bytes: Uint8Array, o: number): number {
  return F16_TO_F32[bytes[o]! | (bytes[o + 1]! << 8)]!;
}

/** uint16 little-endian at bytes[o]. */
export function readU16(bytes: Uint8Array, o: number): number {
  return bytes[o]! | (bytes[o + 1]! << 8);
}

/** uint32 little-endian at bytes[o]. */
export function readU32(bytes: Uint8Array, o: number): number {
  return (bytes[o]! | (bytes[o + 1]! << 8) | (bytes[o + 2]! << 16) | (bytes[o + 3]! << 24)) >>> 0;
}

/** Write a uint16 little-endian at bytes[o]. */
export function writeU16(bytes: Uint8Array, o: number, v: number): void {
  bytes[o] = v & 0xff;
  bytes[o + 1] = (v >>> 8) & 0xff;
}

/** Write a uint32 little-endian at bytes[o]. */
export function writeU32(bytes: Uint8Array, o: number, v: number): void {
  bytes[o] = v & 0xff;
  bytes[o + 1] = (v >>> 8) & 0xff;
  bytes[o + 2] = (v >>> 16) & 0xff;
  bytes[o + 3] = (v >>> 24) & 0xff;
}

/** Throws unless n values of a type with blocks of `blockSize` fit whole blocks. */
export function checkBlocks(name: string, n: number, blockSize: number): number {
  if (n % blockSize !== 0) throw new Error(`${name}: row of ${n} values is not a multiple of the block size ${blockSize}`);
  return n / blockSize;
}
