// cacheInOpfs: a model URL downloaded into the Origin Private File System, resumable, then read from there
// as a Blob (src/api/stream-source.ts openBlob). The file is kept as numbered chunk files (default 16 MiB):
// a chunk is written whole and committed by closing its writable, so an interrupted download (a closed tab,
// an abort, a network error) keeps every finished chunk and the next load asks only for the rest
// (Range: bytes=<done>-, If-Range: the validator the first chunks came with). No sync access handle, which
// would need a dedicated worker: this runs on any thread. `meta.json` holds the URL, size, validator and
// chunk size; a file that changed on the server (size or ETag/Last-Modified) starts over.
import { UsageError } from './errors.js';
import type { StreamProgress } from './stream-source.js';

export interface OpfsOptions extends StreamProgress {
  /** bytes per chunk file (default 16 MiB) */
  chunkBytes?: number;
}

interface Meta { url: string; size: number; validator: string | null; chunk: number }

type Dir = FileSystemDirectoryHandle;

/** The OPFS folder of one URL (gguf-edge/<hash>-<file name>). */
async function modelDir(url: URL, create: boolean): Promise<Dir | undefined> {
  const storage = (globalThis as { navigator?: { storage?: StorageManager } }).navigator?.storage;
  if (!storage?.getDirectory) throw new UsageError('USAGE', 'cacheInOpfs needs the Origin Private File System (navigator.storage.getDirectory), which this platform does not have', 'cacheInOpfs');
  const root = await (await storage.getDirectory()).getDirectoryHandle('gguf-edge', { create: true });
  // FNV-1a of the URL: a short stable key; the file name keeps it readable
  let h = 0x811c9dc5;
  for (let i = 0; i < url.href.length; i++) h = Math.imul(h ^ url.href.charCodeAt(i), 0x01000193) >>> 0;
  const base = decodeURIComponent(url.pathname.split('/').pop() || 'model').replace(/[^\w.-]/g, '_').slice(0, 80);
  try {
    return await root.getDirectoryHandle(`${h.toString(16).padStart(8, '0')}-${base}`, { create });
  } catch (e) {
    if ((e as DOMException).name === 'NotFoundError') return undefined;
    throw e;
  }
}

async function readMeta(dir: Dir): Promise<Meta | undefined> {
  try {
    return JSON.parse(await (await (await dir.getFileHandle('meta.json')).getFile()).text()) as Meta;
  } catch { return undefined; }
}

async function writeFile(dir: Dir, name: string, data: BufferSource | string): Promise<void> {
  const w = await (await dir.getFileHandle(name, { create: true })).createWritable();
  try {
    await w.write(data);
    await w.close(); // the commit: before it, nothing of this file is visible
  } catch (e) {
    await w.abort().catch(() => {});
    throw e;
  }
}

const chunkName = (i: number) => `c${String(i).padStart(5, '0')}`;

/** Chunks 0..n-1 that are complete (each `chunk` bytes but the file's last). */
async function completeChunks(dir: Dir, m: Meta): Promise<File[]> {
  const files: File[] = [];
  const n = Math.ceil(m.size / m.chunk);
  for (let i = 0; i < n; i++) {
    let f: File;
    try { f = await (await dir.getFileHandle(chunkName(i))).getFile(); } catch { break; }
    if (f.size !== Math.min(m.chunk, m.size - i * m.chunk)) break;
    files.push(f);
  }
  return files;
}

const toUrl = (u: string | URL): URL => (u instanceof URL ? u : new URL(u, (globalThis as { location?: { href: string } }).location?.href));

/** What cacheInOpfs holds of `url`: bytes complete (a download resumes from there) and the total, or undefined. */
export async function opfsStatus(u: string | URL): Promise<{ bytes: number; size: number; complete: boolean } | undefined> {
  const url = toUrl(u);
  const dir = await modelDir(url, false);
  const m = dir && (await readMeta(dir));
  if (!dir || !m) return undefined;
  const files = await completeChunks(dir, m);
  const bytes = files.reduce((a, f) => a + f.size, 0);
  return { bytes, size: m.size, complete: bytes === m.size };
}

/** Removes the cached copy of `url` (true when there was one). */
export async function opfsRemove(u: string | URL): Promise<boolean> {
  const url = toUrl(u);
  const storage = (globalThis as { navigator?: { storage?: StorageManager } }).navigator?.storage;
  const dir = await modelDir(url, false);
  if (!dir || !storage) return false;
  const root = await (await storage.getDirectory()).getDirectoryHandle('gguf-edge');
  await root.removeEntry(dir.name, { recursive: true });
  return true;
}

/** Downloads what is missing of `url` into OPFS and returns the whole file as a Blob of its chunk files. */
export async function opfsDownload(url: URL, o: OpfsOptions = {}): Promise<Blob> {
  const name = url.href;
  const chunk = o.chunkBytes ?? 16 << 20;
  const dir = (await modelDir(url, true))!;
  // the server's view first: size and validator (a 1-byte range; a server without ranges sends it all)
  let probe: Response;
  try {
    probe = await fetch(url, { signal: o.signal, headers: { Range: 'bytes=0-0' } });
  } catch (e) {
    if (o.signal?.aborted) throw e;
    throw new UsageError('FETCH_FAILED', `${name}: fetch failed: ${(e as Error).message}`, 'source');
  }
  if (!probe.ok) throw new UsageError('FETCH_FAILED', `${name}: HTTP ${probe.status} ${probe.statusText}`.trimEnd(), 'source');
  const validator = probe.headers.get('etag') ?? probe.headers.get('last-modified');
  const cr = /\/(\d+)$/.exec(probe.headers.get('content-range') ?? '');
  const ranges = probe.status === 206 && !!cr;
  const len = probe.headers.get('content-length');
  const size = ranges ? Number(cr![1]) : len !== null && /^\d+$/.test(len) ? Number(len) : NaN;
  void probe.body?.cancel().catch(() => {});
  if (!Number.isFinite(size)) throw new UsageError('FETCH_FAILED', `${name}: cacheInOpfs needs the file's size (a Content-Range or Content-Length header)`, 'source');

  let m = await readMeta(dir);
  if (!m || m.url !== url.href || m.size !== size || m.validator !== validator || m.chunk <= 0) {
    // nothing usable: start over (a changed file must not be resumed)
    for await (const k of (dir as unknown as { keys(): AsyncIterable<string> }).keys()) await dir.removeEntry(k);
    m = { url: url.href, size, validator, chunk };
    await writeFile(dir, 'meta.json', JSON.stringify(m));
  }
  const files = await completeChunks(dir, m);
  let have = files.reduce((a, f) => a + f.size, 0);
  o.onProgress?.({ phase: 'fetch', loaded: have, total: size });
  if (have < size) {
    if (!ranges) have = 0; // no ranges: the whole file again
    files.length = have / m.chunk;
    let res: Response;
    try {
      res = await fetch(url, { signal: o.signal, headers: ranges && have > 0 ? { Range: `bytes=${have}-`, ...(validator ? { 'If-Range': validator } : {}) } : {} });
    } catch (e) {
      if (o.signal?.aborted) throw e;
      throw new UsageError('FETCH_FAILED', `${name}: fetch failed: ${(e as Error).message}`, 'source');
    }
    if (have > 0 && res.status !== 206) throw new UsageError('FETCH_FAILED', `${name}: the file changed on the server during the download (HTTP ${res.status} to a resumed range)`, 'source');
    if (!res.ok || !res.body) throw new UsageError('FETCH_FAILED', `${name}: HTTP ${res.status} ${res.statusText}`.trimEnd(), 'source');
    const reader = res.body.getReader();
    let buf = new Uint8Array(Math.min(m.chunk, size - have));
    let fill = 0;
    try {
      while (have < size) {
        const { done, value } = await reader.read();
        if (done) throw new UsageError('FETCH_FAILED', `${name}: the response ended after ${have + fill} of ${size} bytes`, 'source');
        let at = 0;
        while (at < value.length) {
          const n = Math.min(value.length - at, buf.length - fill);
          buf.set(value.subarray(at, at + n), fill);
          fill += n; at += n;
          if (fill === buf.length) {
            const i = have / m.chunk;
            await writeFile(dir, chunkName(i), buf);
            files.push(await (await dir.getFileHandle(chunkName(i))).getFile());
            have += fill;
            fill = 0;
            o.onProgress?.({ phase: 'fetch', loaded: have, total: size });
            // a network chunk can hold many of ours: stop at once, what is written stays
            if (o.signal?.aborted) throw o.signal.reason;
            if (have >= size) break;
            buf = new Uint8Array(Math.min(m.chunk, size - have));
          }
        }
      }
    } catch (e) {
      void reader.cancel().catch(() => {});
      if ((e as DOMException).name === 'QuotaExceededError') throw new UsageError('FETCH_FAILED', `${name}: the browser's storage quota is full after ${have} of ${size} bytes (cacheInOpfs)`, 'source');
      throw e;
    }
  }
  return new Blob(files);
}
