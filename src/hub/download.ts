// One file from the hub into the cache, resumable: bytes go to FILE.part (appended to across attempts and
// across runs), a resumed request sends `Range: bytes=N-` with `If-Range` (the ETag the part was started
// against), so a changed file comes back whole (200) instead of being spliced. The sha256 is computed while
// the bytes arrive (over the kept part first when resuming) and checked against the hub's before the part
// becomes FILE; a mismatch leaves nothing behind that looks valid.
import { createHash, type Hash } from 'node:crypto';
import { closeSync, createReadStream, existsSync, ftruncateSync, openSync, readFileSync, renameSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { HubError } from './errors.js';
import { requestHeaders, statusError, type FileMeta, type HubOptions } from './http.js';

export interface DownloadOptions extends HubOptions {
  /** attempts after a cut connection (default 4) */
  attempts?: number;
  /** ms before the first retry, doubled each time (default 500) */
  retryDelayMs?: number;
  /** ms without a byte before a connection is given up (default 60 s) */
  idleTimeoutMs?: number;
  /** bytes received so far of this file, and its size when known */
  onProgress?: (done: number, total: number | undefined) => void;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function hashFile(path: string, h: Hash): Promise<void> {
  for await (const chunk of createReadStream(path)) h.update(chunk as Buffer);
}

/**
 * Downloads `url` (the resolve URL: each attempt follows its redirect afresh, as llama.cpp does, so a CDN
 * link that expired during a long download is no obstacle) to `dest` through dest.part; `meta` is what the
 * HEAD said (ETag, sha256, size). Returns the sha256 of what was written.
 */
export async function downloadTo(dest: string, url: string, meta: FileMeta, o: DownloadOptions): Promise<string> {
  const part = `${dest}.part`;
  const partTag = `${part}.etag`;
  const started = existsSync(partTag) ? readFileSync(partTag, 'utf8').trim() : undefined;
  // a part of another version of the file (or of unknown version) cannot be resumed
  if (existsSync(part) && (!meta.etag || started !== meta.etag)) rmSync(part);
  if (!existsSync(part)) {
    writeFileSync(part, '');
    if (meta.etag) writeFileSync(partTag, meta.etag); else rmSync(partTag, { force: true });
  }
  let hash = createHash('sha256');
  let have = statSync(part).size;
  if (have > 0) await hashFile(part, hash);
  const attempts = Math.max(1, o.attempts ?? 4);
  let delay = o.retryDelayMs ?? 500;
  let complete = false;
  let lastError: unknown;
  for (let attempt = 0; attempt < attempts && !complete; attempt++) {
    if (attempt > 0) { await sleep(delay); delay *= 2; }
    if (meta.size !== undefined && have === meta.size) { complete = true; break; }
    const extra: Record<string, string> = { 'Accept-Encoding': 'identity' };
    if (have > 0) {
      extra.Range = `bytes=${have}-`;
      if (meta.etag) extra['If-Range'] = `"${meta.etag}"`;
    }
    const idle = new AbortController();
    let timer = setTimeout(() => idle.abort(), o.idleTimeoutMs ?? 60_000);
    let res: Response;
    try {
      res = await fetch(url, { headers: requestHeaders(o, extra), redirect: 'follow', signal: idle.signal });
    } catch (e) {
      clearTimeout(timer);
      lastError = new HubError('NETWORK', `cannot reach ${url}: ${(e as { cause?: { code?: string } }).cause?.code ?? (e as Error).message}`);
      continue;
    }
    let fd: number;
    if (res.status === 206 && have > 0) {
      const start = /^bytes (\d+)-/.exec(res.headers.get('content-range') ?? '')?.[1];
      if (Number(start) !== have) { clearTimeout(timer); await res.body?.cancel(); throw new HubError('RANGE_IGNORED', `${url}: asked for bytes from ${have}, got Content-Range "${res.headers.get('content-range')}"`); }
      fd = openSync(part, 'a');
    } else if (res.status === 200) {
      // the whole file (a fresh start, or If-Range said the file changed): start over
      fd = openSync(part, 'r+');
      ftruncateSync(fd, 0);
      have = 0;
      hash = createHash('sha256');
    } else {
      clearTimeout(timer);
      await res.body?.cancel();
      if (res.status === 416 && have > 0) { lastError = new HubError('RANGE_IGNORED', `${url}: HTTP 416 for bytes from ${have}`); rmSync(part); writeFileSync(part, ''); have = 0; hash = createHash('sha256'); continue; }
      throw statusError(res, url, 'file');
    }
    try {
      if (!res.body) throw new HubError('HTTP_ERROR', `${url}: empty response`);
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        clearTimeout(timer);
        timer = setTimeout(() => idle.abort(), o.idleTimeoutMs ?? 60_000);
        writeSync(fd, chunk);
        hash.update(chunk);
        have += chunk.length;
        o.onProgress?.(have, meta.size);
        if (meta.size !== undefined && have > meta.size) throw new HubError('SIZE_MISMATCH', `${url}: more than the ${meta.size} bytes the hub announced`);
      }
      complete = meta.size === undefined || have === meta.size;
      if (!complete) lastError = new HubError('SIZE_MISMATCH', `${url}: the connection ended after ${have} of ${meta.size} bytes`);
    } catch (e) {
      if (e instanceof HubError && e.code === 'SIZE_MISMATCH' && meta.size !== undefined && have > meta.size) { closeSync(fd); clearTimeout(timer); rmSync(part, { force: true }); rmSync(partTag, { force: true }); throw e; }
      lastError = e instanceof HubError ? e : new HubError('NETWORK', `${url}: the connection broke after ${have} bytes (${(e as { cause?: { code?: string } }).cause?.code ?? (e as Error).message})`);
    } finally {
      clearTimeout(timer);
      try { closeSync(fd); } catch { /* closed */ }
    }
  }
  if (!complete) throw lastError instanceof HubError ? lastError : new HubError('NETWORK', `${url}: download failed`);
  const sha = hash.digest('hex');
  if (meta.sha256 && sha !== meta.sha256) {
    rmSync(part, { force: true });
    rmSync(partTag, { force: true });
    throw new HubError('SHA256_MISMATCH', `${url}: the sha256 of the ${have} bytes received is ${sha}, the hub says ${meta.sha256}; nothing was kept`);
  }
  renameSync(part, dest);
  rmSync(partTag, { force: true });
  if (meta.etag) writeFileSync(`${dest}.etag`, meta.etag); else rmSync(`${dest}.etag`, { force: true });
  return sha;
}

const alive = (pid: number): boolean => {
  try { process.kill(pid, 0); return true; } catch (e) { return (e as NodeJS.ErrnoException).code === 'EPERM'; }
};

/**
 * Runs `fn` holding `lock` (a file created exclusively, holding our pid): a second download of the same file,
 * from this process or another, waits for the first instead of appending to the same .part. A lock whose
 * process is gone is stale and taken over.
 */
export async function withLock<T>(lock: string, fn: () => Promise<T>, pollMs = 200): Promise<T> {
  for (;;) {
    let fd: number | undefined;
    try { fd = openSync(lock, 'wx'); } catch (e) { if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e; }
    if (fd !== undefined) {
      try { writeSync(fd, String(process.pid)); closeSync(fd); return await fn(); } finally { rmSync(lock, { force: true }); }
    }
    let owner = NaN;
    try { owner = Number(readFileSync(lock, 'utf8')); } catch { continue; /* released meanwhile */ }
    if (Number.isInteger(owner) && owner > 0 && !alive(owner)) { rmSync(lock, { force: true }); continue; }
    await sleep(pollMs);
  }
}
