// Streaming byte sources for URLs and Blobs (no Node imports: the browser build's loader). Only the GGUF
// header is held in memory; the tensors stream from the network (or the Blob) straight into their device
// buffers (runtime/model.ts loadModelStreaming):
// - a URL: the header by HTTP Range requests (1 MiB, doubled while the header is longer), then one
//   `Range: bytes=<first tensor>-` response streamed through in file order (If-Range: a file that changed
//   between requests is an error, not a mix of two files). A server without Range support: its one 200
//   response is read in order, header first.
// - a Blob / File: slices.
// - cacheInOpfs (src/api/opfs.ts): the URL is downloaded into the Origin Private File System first,
//   resumable, and then read as a Blob.
import { GgufError } from '../gguf/errors.js';
import { NeedMoreBytes, type ByteSource } from '../gguf/source.js';
import { parseGgufSource, type GgufFile } from '../gguf/reader.js';
import { UsageError } from './errors.js';

export interface StreamProgress {
  onProgress?: (p: { phase: 'fetch'; loaded: number; total: number | undefined }) => void;
  signal?: AbortSignal;
}

/** A source whose `read` serves a fetched prefix and `extend` fetches more of it (for the header parse). */
export interface StreamingSource extends ByteSource {
  readAsync(offset: number, length: number, dest: Uint8Array, destOffset?: number): Promise<void>;
  extend(end: number): Promise<void>;
}

export const isStreaming = (s: ByteSource): s is StreamingSource => typeof (s as Partial<StreamingSource>).extend === 'function';

const HEADER_BYTES = 1 << 20;

/** Parses the header of a streaming source: the synchronous parser asks for more (NeedMoreBytes) until it fits. */
export async function parseStreaming(src: StreamingSource): Promise<GgufFile> {
  for (;;) {
    try {
      return parseGgufSource(src);
    } catch (e) {
      if (!(e instanceof NeedMoreBytes)) throw e;
      await src.extend(e.end);
    }
  }
}

/** The prefix buffer both kinds share: grows to what the header parser has asked for. */
class Prefix {
  bytes = new Uint8Array(0);
  read(name: string, size: number, offset: number, length: number, dest?: Uint8Array, destOffset = 0): Uint8Array {
    if (offset < 0 || offset + length > size) throw new RangeError(`${name}: read of ${length} bytes at ${offset} past end ${size}`);
    if (offset + length > this.bytes.length) throw new NeedMoreBytes(offset + length);
    const v = this.bytes.subarray(offset, offset + length);
    if (!dest) return v;
    dest.set(v, destOffset);
    return dest;
  }
  append(chunk: Uint8Array): void {
    const next = new Uint8Array(this.bytes.length + chunk.length);
    next.set(this.bytes);
    next.set(chunk, this.bytes.length);
    this.bytes = next;
  }
  /** how far to extend for a read ending at `end`: at least double, so a long header takes few requests */
  target(end: number, size: number): number { return Math.min(size, Math.max(end, 2 * this.bytes.length, HEADER_BYTES)); }
}

/** A response body read in order, with a position: skip, or copy into a destination. */
class BodyStream {
  private reader: ReadableStreamDefaultReader<Uint8Array>;
  private rest: Uint8Array | undefined;
  constructor(body: ReadableStream<Uint8Array>, public pos: number, private readonly name: string, private readonly counted: (n: number) => void) {
    this.reader = body.getReader();
  }
  private async next(): Promise<Uint8Array> {
    if (this.rest) { const r = this.rest; this.rest = undefined; return r; }
    const { done, value } = await this.reader.read();
    if (done) throw new UsageError('FETCH_FAILED', `${this.name}: the response ended at byte ${this.pos}, before the end of the file`, 'source');
    this.counted(value.length);
    return value;
  }
  /** reads `length` bytes into dest (or drops them when dest is undefined) */
  async take(length: number, dest?: Uint8Array, destOffset = 0): Promise<void> {
    let got = 0;
    while (got < length) {
      const c = await this.next();
      const n = Math.min(c.length, length - got);
      if (dest) dest.set(n === c.length ? c : c.subarray(0, n), destOffset + got);
      if (n < c.length) this.rest = c.subarray(n);
      got += n;
      this.pos += n;
    }
  }
  cancel(): void { void this.reader.cancel().catch(() => {}); }
}

function fetchFailed(name: string, e: unknown, signal?: AbortSignal): never {
  if (signal?.aborted) throw e;
  throw new UsageError('FETCH_FAILED', `${name}: fetch failed: ${(e as Error).message}${(e as { cause?: Error }).cause ? ` (${(e as { cause: Error }).cause.message})` : ''}`, 'source');
}

/** `bytes a-b/total` -> [a, b, total] (total NaN when '*') */
function contentRange(h: string | null): [number, number, number] | undefined {
  const m = h ? /^bytes\s+(\d+)-(\d+)\/(\d+|\*)$/i.exec(h.trim()) : null;
  return m ? [Number(m[1]), Number(m[2]), m[3] === '*' ? NaN : Number(m[3])] : undefined;
}

/**
 * A URL as a streaming source; or, when the server sends neither a range nor a Content-Length, its response
 * (the caller then reads the whole body into memory).
 */
export async function openRemote(url: URL, o: StreamProgress = {}): Promise<StreamingSource | Response> {
  const name = url.href;
  let res: Response;
  try {
    res = await fetch(url, { signal: o.signal, headers: { Range: `bytes=0-${HEADER_BYTES - 1}` } });
  } catch (e) { fetchFailed(name, e, o.signal); }
  if (res.status === 416) {
    // an empty file has no bytes to range over
    throw new GgufError('BAD_MAGIC', 'file is 0 bytes, too short for a GGUF header', name, 0);
  }
  if (!res.ok) throw new UsageError('FETCH_FAILED', `${name}: HTTP ${res.status} ${res.statusText}`.trimEnd(), 'source');
  let fetched = 0;
  const counted = (n: number) => { fetched += n; o.onProgress?.({ phase: 'fetch', loaded: fetched, total: size }); };
  const prefix = new Prefix();
  let size: number;
  let ranges: boolean;
  const validator = res.headers.get('etag') ?? res.headers.get('last-modified') ?? undefined;
  let body: BodyStream | undefined;
  const cr = contentRange(res.headers.get('content-range'));
  if (res.status === 206 && cr && Number.isFinite(cr[2]) && cr[0] === 0) {
    size = cr[2];
    ranges = true;
    const b = new Uint8Array(await res.arrayBuffer());
    counted(b.length);
    prefix.append(b);
  } else {
    const len = res.headers.get('content-length');
    if (res.status !== 200 || len === null || !/^\d+$/.test(len) || !res.body) return res;
    size = Number(len);
    ranges = false;
    // no Range support: this one response, in order, is the whole file
    body = new BodyStream(res.body, 0, name, counted);
  }
  o.onProgress?.({ phase: 'fetch', loaded: fetched, total: size });

  async function streamAt(offset: number): Promise<BodyStream> {
    body?.cancel();
    body = undefined;
    let r: Response;
    try {
      r = await fetch(url, { signal: o.signal, headers: ranges ? { Range: `bytes=${offset}-`, ...(validator ? { 'If-Range': validator } : {}) } : {} });
    } catch (e) { fetchFailed(name, e, o.signal); }
    if (!r.ok || !r.body) throw new UsageError('FETCH_FAILED', `${name}: HTTP ${r.status} ${r.statusText}`.trimEnd(), 'source');
    if (ranges) {
      const c = contentRange(r.headers.get('content-range'));
      // a 200 to an If-Range request: the file changed since its header was read
      if (r.status !== 206 || !c || c[0] !== offset || (Number.isFinite(c[2]) && c[2] !== size)) {
        void r.body.cancel().catch(() => {});
        throw new UsageError('FETCH_FAILED', `${name}: the file changed while it was loading (asked for bytes ${offset}- of ${size}, got ${r.status} ${r.headers.get('content-range') ?? 'the whole file'})`, 'source');
      }
      return new BodyStream(r.body, offset, name, counted);
    }
    const s = new BodyStream(r.body, 0, name, counted);
    await s.take(offset);
    return s;
  }

  return {
    size, name,
    get prefixBytes() { return prefix.bytes.length; },
    read: (offset, length, dest, destOffset) => prefix.read(name, size, offset, length, dest, destOffset),
    async extend(end) {
      const want = prefix.target(end, size);
      if (want <= prefix.bytes.length) return;
      if (!ranges) {
        const b = new Uint8Array(want - prefix.bytes.length);
        await body!.take(b.length, b);
        prefix.append(b);
        return;
      }
      const from = prefix.bytes.length;
      let r: Response;
      try {
        r = await fetch(url, { signal: o.signal, headers: { Range: `bytes=${from}-${want - 1}`, ...(validator ? { 'If-Range': validator } : {}) } });
      } catch (e) { fetchFailed(name, e, o.signal); }
      const c = contentRange(r.headers.get('content-range'));
      if (r.status !== 206 || !c || c[0] !== from || c[1] !== want - 1) {
        void r.body?.cancel().catch(() => {});
        throw new UsageError('FETCH_FAILED', `${name}: the file changed while it was loading (asked for bytes ${from}-${want - 1} of ${size}, got ${r.status} ${r.headers.get('content-range') ?? 'the whole file'})`, 'source');
      }
      const b = new Uint8Array(await r.arrayBuffer());
      counted(b.length);
      prefix.append(b);
    },
    async readAsync(offset, length, dest, destOffset = 0) {
      if (offset < 0 || offset + length > size) throw new RangeError(`${name}: read of ${length} bytes at ${offset} past end ${size}`);
      // the part already in the prefix
      const have = Math.max(0, Math.min(length, prefix.bytes.length - offset));
      if (have > 0) dest.set(prefix.bytes.subarray(offset, offset + have), destOffset);
      if (have === length) return;
      offset += have; destOffset += have; length -= have;
      // the response in flight reaches it (skip a gap of up to 4 MiB), else a new range
      if (!body || body.pos > offset || (ranges && offset - body.pos > 4 << 20)) body = await streamAt(offset);
      if (body.pos < offset) await body.take(offset - body.pos);
      await body.take(length, dest, destOffset);
    },
    close() { body?.cancel(); body = undefined; },
  };
}

/** A Blob / File as a streaming source: the header from a slice, tensors from slices' streams. */
export function openBlob(blob: Blob, name: string, o: StreamProgress = {}): StreamingSource {
  const prefix = new Prefix();
  const size = blob.size;
  let loaded = 0;
  o.onProgress?.({ phase: 'fetch', loaded, total: size });
  return {
    size, name,
    get prefixBytes() { return prefix.bytes.length; },
    read: (offset, length, dest, destOffset) => prefix.read(name, size, offset, length, dest, destOffset),
    async extend(end) {
      const want = prefix.target(end, size);
      if (want > prefix.bytes.length) prefix.append(new Uint8Array(await blob.slice(prefix.bytes.length, want).arrayBuffer()));
    },
    async readAsync(offset, length, dest, destOffset = 0) {
      if (offset < 0 || offset + length > size) throw new RangeError(`${name}: read of ${length} bytes at ${offset} past end ${size}`);
      if (o.signal?.aborted) throw o.signal.reason;
      const reader = blob.slice(offset, offset + length).stream().getReader();
      let got = 0;
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        dest.set(value, destOffset + got);
        got += value.length;
        loaded += value.length;
        o.onProgress?.({ phase: 'fetch', loaded, total: size });
      }
      if (got !== length) throw new GgufError('TRUNCATED', `${name}: read ${got} of ${length} bytes at ${offset}`, name, offset);
    },
  };
}
