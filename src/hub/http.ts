// HTTP to the Hugging Face hub (Node's fetch): the endpoint (HF_ENDPOINT, as huggingface_hub and llama.cpp
// read it), the token (HF_TOKEN, sent as `Authorization: Bearer`), status codes mapped to typed errors, and a
// file's metadata from a HEAD on its resolve URL the way huggingface_hub reads it: relative redirects (a
// renamed repository) are followed, the redirect to the CDN is not; `X-Linked-Etag` (the sha256 of an LFS
// file) over `ETag`, `X-Linked-Size` over `Content-Length`, `X-Repo-Commit`.
import { HubError } from './errors.js';

export interface HubOptions {
  /** the hub's address, no trailing slash */
  endpoint: string;
  token?: string;
  /** ms before a request that sends nothing is given up (default 30 s) */
  timeoutMs?: number;
}

export function hubEndpoint(env: NodeJS.ProcessEnv = process.env): string {
  return (env.HF_ENDPOINT || 'https://huggingface.co').replace(/\/+$/, '');
}

export function hubToken(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return env.HF_TOKEN || env.HUGGING_FACE_HUB_TOKEN || undefined;
}

export function requestHeaders(o: HubOptions, extra: Record<string, string> = {}): Record<string, string> {
  const h: Record<string, string> = { 'User-Agent': 'gguf-edge', ...extra };
  if (o.token) h.Authorization = `Bearer ${o.token}`;
  return h;
}

/** fetch, with a network failure as HubError('NETWORK') naming the URL. */
export async function hubFetch(url: string, init: RequestInit, o: HubOptions): Promise<Response> {
  try {
    return await fetch(url, { signal: AbortSignal.timeout(o.timeoutMs ?? 30_000), ...init });
  } catch (e) {
    const err = e as Error & { cause?: { code?: string; message?: string } };
    throw new HubError('NETWORK', `cannot reach ${url}: ${err.cause?.code ?? err.cause?.message ?? err.message}`);
  }
}

/** The typed error for a failed response. */
export function statusError(res: Response, url: string, what: 'repo' | 'file'): HubError {
  if (res.status === 401 || res.status === 403) {
    return new HubError('UNAUTHORIZED', `${url}: HTTP ${res.status}: the repository is private or gated, or does not exist (set HF_TOKEN to a token that can read it)`);
  }
  if (res.status === 404) return new HubError(what === 'repo' ? 'REPO_NOT_FOUND' : 'FILE_NOT_FOUND', `${url}: HTTP 404: no such ${what === 'repo' ? 'repository' : 'file'}`);
  return new HubError('HTTP_ERROR', `${url}: HTTP ${res.status} ${res.statusText}`);
}

export interface FileMeta {
  /** the URL the resolve redirected to (the CDN), or the resolve URL itself */
  location: string;
  /** normalized (no W/, no quotes) */
  etag?: string;
  /** the content's sha256 when the hub says it (an LFS file's ETag) */
  sha256?: string;
  size?: number;
  commit?: string;
}

const normalizeEtag = (e: string | null) => (e ? e.replace(/^W\//, '').replace(/^"|"$/g, '') : undefined);

export async function fileMetadata(url: string, o: HubOptions): Promise<FileMeta> {
  let cur = url;
  let linkedEtag: string | undefined;
  let linkedSize: string | undefined;
  let commit: string | undefined;
  for (let hop = 0; hop < 10; hop++) {
    const res = await hubFetch(cur, { method: 'HEAD', redirect: 'manual', headers: requestHeaders(o, { 'Accept-Encoding': 'identity' }) }, o);
    linkedEtag ??= res.headers.get('x-linked-etag') ?? undefined;
    linkedSize ??= res.headers.get('x-linked-size') ?? undefined;
    commit ??= res.headers.get('x-repo-commit') ?? undefined;
    if (res.status >= 300 && res.status < 400) {
      const loc = res.headers.get('location');
      if (!loc) throw new HubError('HTTP_ERROR', `${cur}: HTTP ${res.status} without a Location`);
      const next = new URL(loc, cur);
      // a relative redirect stays on the hub (a renamed repository): follow it; the CDN's is where the bytes are
      if (next.origin === new URL(cur).origin && !linkedEtag) { cur = next.href; continue; }
      return meta(next.href, linkedEtag ?? normalizeEtag(res.headers.get('etag')), linkedSize, commit);
    }
    if (!res.ok) throw statusError(res, cur, 'file');
    return meta(cur, linkedEtag ?? normalizeEtag(res.headers.get('etag')), linkedSize ?? res.headers.get('content-length') ?? undefined, commit);
  }
  throw new HubError('HTTP_ERROR', `${url}: too many redirects`);
}

function meta(location: string, etag: string | undefined, size: string | undefined, commit: string | undefined): FileMeta {
  const e = normalizeEtag(etag ?? null);
  const n = size !== undefined && /^\d+$/.test(size) ? Number(size) : undefined;
  return { location, etag: e, sha256: e && /^[0-9a-f]{64}$/i.test(e) ? e.toLowerCase() : undefined, size: n, commit };
}

/** A JSON (or text) body of at most `max` bytes: a hub answer larger than any real listing is refused, not buffered. */
export async function readBody(res: Response, url: string, max = 64 << 20): Promise<string> {
  const len = Number(res.headers.get('content-length') ?? NaN);
  if (len > max) { await res.body?.cancel(); throw new HubError('HTTP_ERROR', `${url}: a ${len}-byte answer, more than the ${max} bytes a listing can take`); }
  if (!res.body) return '';
  const chunks: Uint8Array[] = [];
  let n = 0;
  for await (const c of res.body as unknown as AsyncIterable<Uint8Array>) {
    n += c.length;
    if (n > max) throw new HubError('HTTP_ERROR', `${url}: the answer passed ${max} bytes`);
    chunks.push(c);
  }
  return Buffer.concat(chunks).toString('utf8');
}
