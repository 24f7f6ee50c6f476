// Node-only: read a byte range of a file straight into the runtime's WebAssembly memory (no second copy),
// as the loader does for weights. Browsers fill memory from their own sources (fetch/Blob slices).
import { closeSync, openSync, readSync } from 'node:fs';
import type { CpuRuntime } from './runtime.js';

const CHUNK = 1 << 26;

/** Copies `length` bytes at `fileOffset` of the file at `path` (or an open fd) to memory at `ptr`. */
export function readFileIntoMemory(rt: CpuRuntime, file: string | number, fileOffset: number, length: number, ptr: number): void {
  const fd = typeof file === 'number' ? file : openSync(file, 'r');
  try {
    const dest = rt.u8(ptr, length);
    let done = 0;
    while (done < length) {
      const n = readSync(fd, dest, done, Math.min(CHUNK, length - done), fileOffset + done);
      if (n <= 0) throw new Error(`${typeof file === 'string' ? file : 'fd ' + file}: unexpected end of file at byte ${fileOffset + done} (wanted ${length} bytes from ${fileOffset})`);
      done += n;
    }
  } finally {
    if (typeof file !== 'number') closeSync(fd);
  }
}
