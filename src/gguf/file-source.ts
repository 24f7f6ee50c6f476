// Node-only: a ByteSource over a file descriptor (kept out of source.ts so the browser bundle
// never imports node:fs).
import { openSync, readSync, fstatSync, closeSync, read as readCb } from 'node:fs';
import type { ByteSource } from './source.js';
import { GgufError } from './errors.js';

export function fileSource(path: string): ByteSource {
  let fd: number;
  let size: number;
  try {
    fd = openSync(path, 'r');
    const st = fstatSync(fd);
    if (st.isDirectory()) throw Object.assign(new Error('is a directory'), { code: 'EISDIR' });
    size = st.size;
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    const why = err.code === 'ENOENT' ? 'no such file' : err.code === 'EACCES' ? 'permission denied' : err.code === 'EISDIR' ? 'is a directory' : err.message;
    throw new GgufError('NOT_FOUND', `cannot open model file: ${why}`, path);
  }
  let closed = false;
  return {
    size,
    name: path,
    read(offset, length, dest, destOffset = 0) {
      if (offset < 0 || offset + length > size) throw new RangeError(`read of ${length} bytes at ${offset} past end ${size}`);
      const out = dest ?? new Uint8Array(length);
      let done = 0;
      while (done < length) {
        // readSync takes at most 2 GiB per call
        const chunk = Math.min(length - done, 1 << 30);
        const n = readSync(fd, out, destOffset + done, chunk, offset + done);
        if (n <= 0) throw new GgufError('TRUNCATED', `file ended while reading ${length} bytes`, path, offset + done);
        done += n;
      }
      return out;
    },
    // the same bytes without blocking the event loop (libuv's thread pool): a model load through the library
    // lets a server answer /health (503 while loading) and an app stay responsive
    async readAsync(offset, length, dest, destOffset = 0) {
      if (offset < 0 || offset + length > size) throw new RangeError(`read of ${length} bytes at ${offset} past end ${size}`);
      let done = 0;
      while (done < length) {
        const chunk = Math.min(length - done, 1 << 26);
        const n = await new Promise<number>((ok, fail) => readCb(fd, dest, destOffset + done, chunk, offset + done, (e, got) => (e ? fail(e) : ok(got))));
        if (n <= 0) throw new GgufError('TRUNCATED', `file ended while reading ${length} bytes`, path, offset + done);
        done += n;
      }
    },
    close() {
      if (!closed) { closed = true; closeSync(fd); }
    },
  };
}
