// The webgpu device's buffers: one GPUBuffer each, plus (except big weight buffers) a host shadow. WebGPU
// reads are asynchronous, the DeviceBuffer contract's get/copyTo are not: so every byte the host may read
// is kept in the shadow. Writes (set, clear, copies in) go to both; what the GPU writes reaches the shadow
// through the backend's readback after each submit (the logits, tensors other devices read, the KV rows a
// kv_store wrote: device.ts), which the scheduler and the Context wait for before they read. Binding offsets
// are this type's alignment (>= minStorageBufferOffsetAlignment), sizes are rounded up to 4 bytes.
import type { BufferType, BufferUsage, DeviceBuffer } from '../backend.js';
import { DeviceError } from '../backend.js';

// GPUBufferUsage / GPUMapMode values (numbers: Node's Dawn does not define the globals)
export const USAGE = { MAP_READ: 1, COPY_SRC: 4, COPY_DST: 8, UNIFORM: 64, STORAGE: 128 } as const;
export const MAP_READ = 1;

/** weight buffers up to this size keep a shadow too (small tensors the host reads: rope factors) */
const SHADOW_WEIGHTS_MAX = 1 << 20;

export interface GpuBuffer extends DeviceBuffer {
  readonly gpu: GPUBuffer;
  /** host copy of the bytes the host may read; null for big weight buffers */
  readonly shadow: Uint8Array | null;
}

export const isGpuBuffer = (b: DeviceBuffer, device: GPUDevice): b is GpuBuffer => (b as Partial<GpuBuffer>).gpu !== undefined && (b as { device?: GPUDevice }).device === device;

const round4 = (n: number) => Math.ceil(n / 4) * 4;

export function gpuBufferType(device: GPUDevice, alignment: number, maxBuffer: number, onSize: (delta: number) => void): BufferType {
  const type: BufferType = {
    name: 'webgpu',
    alignment,
    allocate(size: number, usage: BufferUsage): GpuBuffer {
      const bytes = Math.max(4, round4(size));
      if (bytes > maxBuffer) throw new DeviceError('OVER_BUDGET', `webgpu device: a ${usage} buffer of ${size} bytes exceeds the adapter's maxBufferSize of ${maxBuffer}`);
      const gpu = device.createBuffer({ size: bytes, usage: USAGE.STORAGE | USAGE.COPY_SRC | USAGE.COPY_DST });
      onSize(bytes);
      const shadow = usage !== 'weights' || bytes <= SHADOW_WEIGHTS_MAX ? new Uint8Array(bytes) : null;
      let freed = false;
      const check = (off: number, len: number, what: string) => {
        if (freed) throw new DeviceError('UNSUPPORTED', `webgpu buffer (${usage}, ${size} bytes) used after free()`);
        if (off < 0 || len < 0 || off + len > bytes) throw new DeviceError('UNSUPPORTED', `webgpu buffer (${usage}): ${what} of bytes [${off}, ${off + len}) outside its ${size}`);
      };
      /** writes [off, off+len) of the GPU copy from `src` (4-byte aligned through the shadow when needed) */
      const upload = (off: number, src: Uint8Array) => {
        const len = src.length;
        if (shadow) {
          // from the host copy (already updated): 4-byte aligned, and never a SharedArrayBuffer (Dawn refuses those)
          const a = off & ~3, e = round4(off + len);
          device.queue.writeBuffer(gpu, a, shadow.buffer, shadow.byteOffset + a, e - a);
          return;
        }
        if (off % 4 !== 0) throw new DeviceError('UNSUPPORTED', `webgpu buffer (${usage}): unaligned write at ${off} into a buffer without a host copy`);
        if (len % 4 === 0 && !(src.buffer instanceof SharedArrayBuffer)) { device.queue.writeBuffer(gpu, off, src.buffer, src.byteOffset, len); return; }
        // the tail word is padding past the tensor (placements are aligned): pad with zeros
        const padded = new Uint8Array(round4(len));
        padded.set(src);
        device.queue.writeBuffer(gpu, off, padded.buffer, 0, padded.length);
      };
      const buf: GpuBuffer & { device: GPUDevice } = {
        gpu, shadow, size, usage, type, device,
        set(offset, src) {
          check(offset, src.length, 'write');
          shadow?.set(src, offset);
          upload(offset, src);
        },
        get(offset, length, dest) {
          check(offset, length, 'read');
          if (!shadow) throw new DeviceError('UNSUPPORTED', `webgpu buffer (${usage}, ${size} bytes) has no host copy to read from`);
          const v = shadow.subarray(offset, offset + length);
          if (!dest) return v.slice();
          dest.set(v);
          return dest;
        },
        clear(value = 0) {
          check(0, size, 'clear');
          if (shadow) { shadow.fill(value); device.queue.writeBuffer(gpu, 0, shadow.buffer, shadow.byteOffset, bytes); return; }
          device.queue.writeBuffer(gpu, 0, new Uint8Array(bytes).fill(value));
        },
        copyTo(dst, srcOffset, dstOffset, length) {
          check(srcOffset, length, 'copy');
          const d = dst as Partial<GpuBuffer> & { device?: GPUDevice };
          if (d.gpu && d.device === device && srcOffset % 4 === 0 && dstOffset % 4 === 0 && length % 4 === 0) {
            if (dstOffset + length > round4(dst.size)) throw new DeviceError('UNSUPPORTED', `webgpu buffer copy: bytes [${dstOffset}, ${dstOffset + length}) outside the destination's ${dst.size}`);
            const enc = device.createCommandEncoder();
            enc.copyBufferToBuffer(gpu, srcOffset, d.gpu, dstOffset, length);
            device.queue.submit([enc.finish()]);
            if (shadow && d.shadow) d.shadow.set(shadow.subarray(srcOffset, srcOffset + length), dstOffset);
            return;
          }
          if (!shadow) throw new DeviceError('UNSUPPORTED', `webgpu buffer (${usage}, ${size} bytes) has no host copy to copy from`);
          dst.set(dstOffset, shadow.subarray(srcOffset, srcOffset + length));
        },
        free() {
          if (freed) return;
          freed = true;
          gpu.destroy();
          onSize(-bytes);
        },
      };
      return buf;
    },
  };
  return type;
}
