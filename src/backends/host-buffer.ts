// A buffer in host memory (an ArrayBuffer): the reference backend's and any host-side device's.
import type { BufferType, BufferUsage, DeviceBuffer } from './backend.js';

export function hostBufferType(name: string, alignment = 64): BufferType {
  const type: BufferType = {
    name,
    alignment,
    allocate(size: number, usage: BufferUsage): DeviceBuffer {
      // Round up so 4- and 8-byte views at aligned offsets always fit.
      const bytes = new Uint8Array(Math.ceil(Math.max(size, 1) / 8) * 8);
      return hostBuffer(bytes, usage, type);
    },
  };
  return type;
}

export function hostBuffer(bytes: Uint8Array, usage: BufferUsage, type: BufferType): DeviceBuffer & { bytes: Uint8Array } {
  return {
    bytes,
    size: bytes.length,
    usage,
    type,
    set(offset, src) { bytes.set(src, offset); },
    get(offset, length, dest) {
      const v = bytes.subarray(offset, offset + length);
      if (!dest) return v.slice();
      dest.set(v);
      return dest;
    },
    clear(value = 0) { bytes.fill(value); },
    copyTo(dst, srcOffset, dstOffset, length) {
      dst.set(dstOffset, bytes.subarray(srcOffset, srcOffset + length));
    },
    hostView(offset, length) { return bytes.subarray(offset, offset + length); },
    free() { /* garbage collected */ },
  };
}
