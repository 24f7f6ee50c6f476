// What loadModel accepts, turned into a ByteSource the GGUF reader parses: a file path (Node: read in
// place through a file descriptor, nothing loaded up front), a URL (file: in Node; http(s): streamed:
// the header by Range requests, the tensors straight into device memory, stream-source.ts; data:/blob:
// and servers without Range or Content-Length into memory), bytes (ArrayBuffer, a typed array) or a
// Blob/File (streamed from slices). Node's file I/O is imported dynamically, so the browser path never
// pulls node:fs.
import { memorySource, type ByteSource } from '../gguf/source.js';
import { GgufError } from '../gguf/errors.js';
import { parseGgufSource, type GgufFile } from '../gguf/reader.js';
import { checkFirstShard, mergeShards, splitCount, splitPath, splitPrefix } from '../gguf/split.js';
import { UsageError } from './errors.js';
import { isStreaming, openBlob, openRemote, parseStreaming } from './stream-source.js';

export type ModelSource = string | URL | ArrayBuffer | ArrayBufferView | Blob;

export interface SourceProgress {
  /** 'fetch' while bytes arrive (URL, Blob), 'weights' while the weights go to the device */
  phase: 'fetch' | 'weights';
  loaded: number;
  /** undefined when a server sends no Content-Length */
  total: number | undefined;
}

export interface OpenSourceOptions {
  onProgress?: (p: SourceProgress) => void;
  signal?: AbortSignal;
  /** http(s) URLs: download into the Origin Private File System first (resumable), then load from there */
  cacheInOpfs?: boolean;
  /** cacheInOpfs chunk file size in bytes (default 16 MiB; what an interrupted download keeps) */
  opfsChunkBytes?: number;
}

const isNode = (): boolean => !!(globalThis as { process?: { versions?: { node?: string } } }).process?.versions?.node;
// the schemes a string is read as a URL for; anything else is a file path in Node (a relative URL elsewhere)
const URL_LIKE = /^(?:https?|file|data|blob):/i;

export async function openSource(src: ModelSource, o: OpenSourceOptions = {}): Promise<ByteSource> {
  if (typeof src === 'string') {
    if (URL_LIKE.test(src)) return openUrl(new URL(src), o);
    if (isNode()) return (await import('../gguf/file-source.js')).fileSource(src);
    // outside Node a string is a URL relative to the page
    return openUrl(new URL(src, (globalThis as { location?: { href: string } }).location?.href), o);
  }
  if (src instanceof URL) return openUrl(src, o);
  if (src instanceof ArrayBuffer) return memorySource(new Uint8Array(src));
  if (ArrayBuffer.isView(src)) return memorySource(new Uint8Array(src.buffer, src.byteOffset, src.byteLength));
  if (typeof Blob !== 'undefined' && src instanceof Blob) {
    return openBlob(src, (src as Blob & { name?: string }).name ?? '<blob>', o);
  }
  throw new UsageError('UNSUPPORTED_INPUT', `loadModel needs a path, a URL, an ArrayBuffer, a Uint8Array or a Blob, got ${describe(src)}`, 'source');
}

/**
 * A split model (gguf-split shards) named by its first shard: from a Node path or file: URL its other shards
 * are found beside it and merged (src/gguf/open.ts); from an http(s) URL they are fetched from beside it
 * (PREFIX-0000i-of-0000N.gguf in the same folder); from bytes or a Blob they cannot be found.
 */
export async function completeSplit(file: GgufFile, src: ModelSource, o: OpenSourceOptions = {}): Promise<GgufFile> {
  const count = splitCount(file);
  if (count <= 1) return file;
  const url = src instanceof URL ? src : typeof src === 'string' && URL_LIKE.test(src) ? new URL(src) : undefined;
  let path: string | undefined;
  if (isNode()) {
    if (typeof src === 'string' && !URL_LIKE.test(src)) path = src;
    else if (url?.protocol === 'file:') path = (await import('node:url')).fileURLToPath(url);
  }
  if (path !== undefined) return (await import('../gguf/open.js')).withShards(file, path);
  if (url === undefined) throw new GgufError('SPLIT_MISSING_SHARD', `a split model (split.count = ${count}) needs its other shards: load it from the path or URL of its first shard`, file.name, undefined, { key: 'split.count', found: String(count) });
  checkFirstShard(file, count);
  const prefix = splitPrefix(url.pathname, 0, count);
  if (prefix === undefined) throw new GgufError('SPLIT_BAD_NAME', `a split model (split.count = ${count}) must be named like ${splitPath('PREFIX', 0, count)} to find its other shards`, file.name, undefined, { key: 'split.count', found: url.pathname });
  const shards: GgufFile[] = [file];
  try {
    for (let i = 1; i < count; i++) {
      const u = new URL(url);
      u.pathname = splitPath(prefix, i, count);
      let s: ByteSource;
      try { s = await openSource(u, o); } catch (e) {
        if (e instanceof UsageError && e.code === 'FETCH_FAILED') throw new GgufError('SPLIT_MISSING_SHARD', `shard ${i + 1} of ${count}: ${e.message}`, file.name, undefined, { key: 'split.no', expected: u.href, found: 'not fetched' });
        throw e;
      }
      shards.push(await parseAny(s));
    }
    return mergeShards(shards);
  } catch (e) {
    for (const f of shards.slice(1)) f.source.close?.();
    throw e;
  }
}

/** The header of any source: a streaming one fetches as much as the header needs. */
export function parseAny(src: ByteSource): Promise<GgufFile> {
  return isStreaming(src) ? parseStreaming(src) : Promise.resolve().then(() => parseGgufSource(src));
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (typeof v !== 'object') return typeof v;
  return (v as object).constructor?.name ?? 'an object';
}

async function openUrl(url: URL, o: OpenSourceOptions): Promise<ByteSource> {
  if (url.protocol === 'file:' && isNode()) {
    const { fileURLToPath } = await import('node:url');
    return (await import('../gguf/file-source.js')).fileSource(fileURLToPath(url));
  }
  const name = url.href;
  const http = url.protocol === 'http:' || url.protocol === 'https:';
  if (o.cacheInOpfs && http) {
    const { opfsDownload } = await import('./opfs.js');
    return openBlob(await opfsDownload(url, { signal: o.signal, onProgress: o.onProgress, chunkBytes: o.opfsChunkBytes }), name, { signal: o.signal });
  }
  let res: Response;
  if (http) {
    // Range requests: the header first, tensors streamed (a Response back: neither ranges nor a length)
    const r = await openRemote(url, o);
    if (!(r instanceof Response)) return r;
    res = r;
  } else {
    try {
      res = await fetch(url, { signal: o.signal });
    } catch (e) {
      if (o.signal?.aborted) throw e;
      throw new UsageError('FETCH_FAILED', `${name}: fetch failed: ${(e as Error).message}`, 'source');
    }
  }
  if (!res.ok) throw new UsageError('FETCH_FAILED', `${name}: HTTP ${res.status} ${res.statusText}`.trimEnd(), 'source');
  const header = res.headers.get('content-length');
  const total = header !== null && /^\d+$/.test(header) ? Number(header) : undefined;
  o.onProgress?.({ phase: 'fetch', loaded: 0, total });
  if (!res.body) {
    const bytes = new Uint8Array(await res.arrayBuffer());
    o.onProgress?.({ phase: 'fetch', loaded: bytes.length, total });
    return memorySource(bytes, name);
  }
  // stream the body: one buffer of the announced size, or chunks joined at the end
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let whole = total !== undefined ? new Uint8Array(total) : undefined;
  let loaded = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (whole) {
      if (loaded + value.length > whole.length) {
        await reader.cancel();
        throw new UsageError('FETCH_FAILED', `${name}: the body is longer than its Content-Length (${total} bytes)`, 'source');
      }
      whole.set(value, loaded);
    } else chunks.push(value);
    loaded += value.length;
    o.onProgress?.({ phase: 'fetch', loaded, total });
  }
  if (whole) {
    if (loaded !== whole.length) throw new UsageError('FETCH_FAILED', `${name}: the body ended after ${loaded} of ${total} bytes`, 'source');
  } else {
    whole = new Uint8Array(loaded);
    let at = 0;
    for (const c of chunks) { whole.set(c, at); at += c.length; }
  }
  return memorySource(whole, name);
}
