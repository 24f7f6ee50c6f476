// The cpu device's buffers: ranges of the runtime's wasm memory. free() returns the range to the runtime's
// allocator for reuse (wasm memory cannot shrink; the next allocation takes the freed range).
import type { BufferType, BufferUsage, DeviceBuffer } from '../backend.js';
import { CpuRuntimeError } from './runtime/errors.js';
import type { CpuRuntime } from './runtime.js';

export interface CpuBuffer extends DeviceBuffer {
  /** byte address of the buffer in the wasm memory */
  readonly ptr: number;
}

const gib = (n: number) => `${(n / 2 ** 30).toFixed(2)} GiB (${n} bytes)`;

export function cpuBufferType(rt: CpuRuntime): BufferType {
  const type: BufferType = {
    name: 'cpu-wasm',
    alignment: 64,
    allocate(size: number, usage: BufferUsage): CpuBuffer {
      // wasm32 addresses at most 4 GiB: say so in terms of the model rather than of the allocator
      if (rt.liveBytes() + size > rt.maxBytes) {
        throw new CpuRuntimeError('OUT_OF_MEMORY', `cpu device: ${usage} need ${gib(size)} but the WebAssembly memory holds at most ` +
          `${gib(rt.maxBytes)} (wasm32's limit is 4 GiB) and ${gib(rt.liveBytes())} are in use; use a smaller quantization or another device`);
      }
      const ptr = rt.alloc(Math.max(size, 1), 64);
      let freed = false;
      const view = (off: number, len: number) => {
        if (freed) throw new CpuRuntimeError('BAD_SHAPE', `cpu buffer (${usage}, ${size} bytes) used after free()`);
        if (off < 0 || len < 0 || off + len > size) throw new CpuRuntimeError('OUT_OF_BOUNDS', `cpu buffer (${usage}): bytes [${off}, ${off + len}) outside its ${size}`);
        return new Uint8Array(rt.memory.buffer, ptr + off, len);
      };
      return {
        ptr, size, usage, type,
        set(offset, bytes) { view(offset, bytes.length).set(bytes); },
        get(offset, length, dest) {
          const v = view(offset, length);
          if (!dest) return v.slice();
          dest.set(v);
          return dest;
        },
        clear(value = 0) { view(0, size).fill(value); },
        copyTo(dst, srcOffset, dstOffset, length) {
          const d = dst as Partial<CpuBuffer>;
          if (d.ptr !== undefined && dst.type === type) {
            view(srcOffset, length);
            if (dstOffset < 0 || dstOffset + length > dst.size) throw new CpuRuntimeError('OUT_OF_BOUNDS', `cpu buffer copy: bytes [${dstOffset}, ${dstOffset + length}) outside the destination's ${dst.size}`);
            rt.copy(ptr + srcOffset, d.ptr + dstOffset, length);
          } else dst.set(dstOffset, view(srcOffset, length));
        },
        hostView: view,
        free() {
          if (freed) return;
          freed = true;
          rt.free(ptr);
        },
      };
    },
  };
  return type;
}
