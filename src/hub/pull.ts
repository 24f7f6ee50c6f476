// `OWNER/REPO[:QUANT|FILE]` to local GGUF paths, as llama.cpp's -hf does: a FILE (a name ending in .gguf) is
// taken as is; a QUANT tag (default "latest", which the hub answers with Q4_K_M when there is one) is asked of
// the hub's manifest API `{endpoint}/v2/OWNER/REPO/manifests/TAG` (its `ggufFile.rfilename`; the hub fills it
// for a `llama-cpp` User-Agent), and when that gives nothing the repository's file list
// (`/api/models/OWNER/REPO/tree/main?recursive=true`) is searched the way llama.cpp's find_best_model does.
// Files come from `{endpoint}/OWNER/REPO/resolve/main/FILE`; the shards of a split model are fetched together.
// Offline (or when the hub cannot be reached) the cache answers, or a NOT_CACHED error says what is missing.
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { cacheDir, cachedFilePath, manifestPath } from './cache.js';
import { downloadTo, withLock, type DownloadOptions } from './download.js';
import { HubError } from './errors.js';
import { fileMetadata, hubEndpoint, hubFetch, hubToken, readBody, requestHeaders, statusError } from './http.js';
import { parseSplitName, splitPath } from '../gguf/split.js';

export interface HfRef {
  repo: string;
  /** a file path in the repository */
  file?: string;
  /** a quant tag such as Q4_K_M */
  tag?: string;
}

const REPO_RE = /^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/;

/**
 * `OWNER/REPO[:QUANT|FILE]` (llama.cpp's -hf); node-llama-cpp's `hf:OWNER/REPO:QUANT` and `hf:OWNER/REPO/FILE.gguf`
 * are the same references.
 */
export function parseHfRef(text: string): HfRef {
  const s = text.startsWith('hf:') ? text.slice(3) : text;
  const slash = s.indexOf('/', s.indexOf('/') + 1);
  // OWNER/REPO/path/FILE.gguf (node-llama-cpp's form): the path after the second slash is the file
  const i = slash >= 0 && s.indexOf(':') < 0 && /\.gguf$/i.test(s) ? slash : s.indexOf(':');
  const repo = i < 0 ? s : s.slice(0, i);
  const rest = i < 0 ? '' : s.slice(i + 1);
  if (!REPO_RE.test(repo)) throw new HubError('BAD_REF', `"${text}" is not OWNER/REPO[:QUANT|FILE] (e.g. ggml-org/models:Q4_K_M or ggml-org/models:tinyllamas/stories260K.gguf)`);
  if (rest.split('/').some((seg) => seg === '..' || seg === '.')) throw new HubError('BAD_REF', `"${rest}": a file path in the repository cannot contain . or ..`);
  if (rest === '') return { repo };
  return /\.gguf$/i.test(rest) ? { repo, file: rest } : { repo, tag: rest };
}

export interface PullOptions extends Omit<DownloadOptions, 'endpoint' | 'onProgress'> {
  endpoint?: string;
  cacheDir?: string;
  offline?: boolean;
  /** bytes done and total over every file of the model */
  onProgress?: (done: number, total: number) => void;
  /** a line for the user (which file, cached or not) */
  onInfo?: (line: string) => void;
}

export interface PulledFile {
  file: string;
  path: string;
  url: string;
  /** the hub's sha256 for it, when it said */
  sha256?: string;
  cached: boolean;
}

export interface PullResult {
  repo: string;
  /** the model's file in the repository (the first shard of a split model) */
  file: string;
  /** local path to load: the first shard of a split model */
  path: string;
  files: PulledFile[];
}

/** The model file llama.cpp's find_best_model picks for `tag` among a repository's paths. */
export function pickGguf(paths: string[], tag: string | undefined): string | undefined {
  const isModel = (p: string) => {
    const base = p.slice(p.lastIndexOf('/') + 1);
    return p.toLowerCase().endsWith('.gguf') && !/mmproj|imatrix|mtp-|eagle3-/.test(base);
  };
  const firstShard = (p: string) => { const s = parseSplitName(p); return !s || s.count <= 1 || s.index === 1; };
  const esc = (t: string) => t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  for (const t of tag ? [tag] : ['Q4_K_M', 'Q8_0']) {
    const re = new RegExp(`${esc(t)}[.-]`, 'i');
    const hit = paths.find((p) => isModel(p) && re.test(p) && firstShard(p));
    if (hit) return hit;
  }
  return tag ? undefined : paths.find((p) => isModel(p) && firstShard(p));
}

const resolveUrl = (endpoint: string, repo: string, file: string) => `${endpoint}/${repo}/resolve/main/${file.split('/').map(encodeURIComponent).join('/')}`;

async function resolveTag(repo: string, tag: string | undefined, o: Required<Pick<PullOptions, 'endpoint' | 'cacheDir'>> & PullOptions): Promise<{ file: string; sha256?: Map<string, string> }> {
  const t = tag ?? 'latest';
  const mPath = manifestPath(o.cacheDir, repo, t);
  const fromCache = () => {
    if (existsSync(mPath)) {
      const f = (JSON.parse(readFileSync(mPath, 'utf8')) as { ggufFile?: { rfilename?: string } }).ggufFile?.rfilename;
      if (f) return f;
    }
    // llama.cpp's get_cached_files: the repository's files already in the cache
    const prefix = `${repo}_`.replaceAll('/', '_');
    const cached = existsSync(o.cacheDir) ? readdirSync(o.cacheDir).filter((n) => n.startsWith(prefix) && n.endsWith('.gguf')).map((n) => n.slice(prefix.length)) : [];
    return pickGguf(cached, tag);
  };
  if (o.offline) {
    const f = fromCache();
    if (!f) throw new HubError('NOT_CACHED', `offline: no cached model of ${repo}${tag ? `:${tag}` : ''} in ${o.cacheDir}`);
    return { file: f };
  }
  const url = `${o.endpoint}/v2/${repo}/manifests/${encodeURIComponent(t)}`;
  let res: Response;
  try {
    res = await hubFetch(url, { headers: requestHeaders(o, { Accept: 'application/json', 'User-Agent': 'llama-cpp/gguf-edge' }) }, o);
  } catch (e) {
    const f = e instanceof HubError && e.code === 'NETWORK' ? fromCache() : undefined;
    if (f) { o.onInfo?.(`${e instanceof Error ? e.message : e}; using the cached ${f}`); return { file: f }; }
    throw e;
  }
  if (res.status === 401 || res.status === 403) throw statusError(res, url, 'repo');
  if (res.ok) {
    const body = await readBody(res, url);
    let f: string | undefined;
    try { f = (JSON.parse(body) as { ggufFile?: { rfilename?: string } }).ggufFile?.rfilename; } catch { f = undefined; }
    if (typeof f === 'string' && f !== '') {
      mkdirSync(o.cacheDir, { recursive: true });
      writeFileSync(mPath, body);
      return { file: f };
    }
  } else {
    await res.body?.cancel();
  }
  // no manifest answer: search the file list
  const listUrl = `${o.endpoint}/api/models/${repo}/tree/main?recursive=true`;
  const list = await hubFetch(listUrl, { headers: requestHeaders(o, { Accept: 'application/json' }) }, o);
  if (!list.ok) throw statusError(list, listUrl, 'repo');
  let items: { type?: string; path?: string; lfs?: { oid?: string } }[];
  try { items = JSON.parse(await readBody(list, listUrl)); } catch (e) { if (e instanceof HubError) throw e; items = undefined as never; }
  if (!Array.isArray(items)) throw new HubError('HTTP_ERROR', `${listUrl}: not a file list`);
  const files = items.filter((x) => x.type === 'file' && typeof x.path === 'string').map((x) => x.path!);
  const file = pickGguf(files, tag);
  if (!file) throw new HubError('FILE_NOT_FOUND', `${repo} has no GGUF file${tag ? ` for the tag ${tag}` : ''}; its GGUF files: ${files.filter((f) => f.endsWith('.gguf')).join(', ') || 'none'}`);
  const sha256 = new Map<string, string>();
  for (const x of items) if (x.path && x.lfs?.oid && /^[0-9a-f]{64}$/.test(x.lfs.oid)) sha256.set(x.path, x.lfs.oid);
  return { file, sha256 };
}

/** Resolves `ref` and makes sure every file of the model is in the cache; returns where they are. */
export async function pull(refText: string | HfRef, opts: PullOptions = {}): Promise<PullResult> {
  const ref = typeof refText === 'string' ? parseHfRef(refText) : refText;
  const o = { ...opts, endpoint: opts.endpoint ?? hubEndpoint(), cacheDir: opts.cacheDir ?? cacheDir(), token: opts.token ?? hubToken() };
  const resolved = ref.file ? { file: ref.file, sha256: undefined } : await resolveTag(ref.repo, ref.tag, o);
  const split = parseSplitName(resolved.file);
  // a split model: every shard, fetched together (naming any shard fetches the whole model)
  const files = split && split.count > 1 ? Array.from({ length: split.count }, (_, i) => splitPath(split.prefix, i, split.count)) : [resolved.file];
  if (!o.offline) mkdirSync(o.cacheDir, { recursive: true });
  const done = new Array<number>(files.length).fill(0);
  const sizes = new Array<number | undefined>(files.length).fill(undefined);
  const report = () => {
    if (!o.onProgress || sizes.some((s) => s === undefined)) return;
    o.onProgress(done.reduce((a, b) => a + b, 0), sizes.reduce<number>((a, b) => a + b!, 0));
  };
  const one = async (file: string, i: number): Promise<PulledFile> => {
    const url = resolveUrl(o.endpoint, ref.repo, file);
    const path = cachedFilePath(o.cacheDir, ref.repo, file);
    const have = existsSync(path);
    const cachedEtag = existsSync(`${path}.etag`) ? readFileSync(`${path}.etag`, 'utf8').trim() : undefined;
    if (o.offline) {
      if (!have) throw new HubError('NOT_CACHED', `offline: ${ref.repo}/${file} is not in the cache (${path})`);
      sizes[i] = 0;
      return { file, path, url, sha256: cachedEtag && /^[0-9a-f]{64}$/.test(cachedEtag) ? cachedEtag : undefined, cached: true };
    }
    // one download of a file at a time (another run -hf, pull or serve may be fetching it): the second waits,
    // then finds it cached
    return withLock(`${path}.lock`, async () => {
      const have = existsSync(path);
      const cachedEtag = existsSync(`${path}.etag`) ? readFileSync(`${path}.etag`, 'utf8').trim() : undefined;
      let meta;
      try {
        meta = await fileMetadata(url, o);
      } catch (e) {
        // llama.cpp: the hub cannot be reached but the file is cached: use it
        if (have && e instanceof HubError && e.code === 'NETWORK') {
          o.onInfo?.(`${e.message}; using the cached ${path}`);
          sizes[i] = 0;
          return { file, path, url, cached: true };
        }
        throw e;
      }
      const listed = resolved.sha256?.get(file);
      if (listed && meta.sha256 && listed !== meta.sha256) throw new HubError('SHA256_MISMATCH', `${url}: the file list says sha256 ${listed}, the file's ETag ${meta.sha256}`);
      meta.sha256 ??= listed;
      // same ETag (or none to compare): the cached copy is current
      if (have && (!meta.etag || cachedEtag === meta.etag)) {
        sizes[i] = 0;
        return { file, path, url, sha256: meta.sha256, cached: true };
      }
      sizes[i] = meta.size ?? 0;
      report();
      o.onInfo?.(`downloading ${ref.repo}/${file}${meta.size !== undefined ? ` (${meta.size} bytes)` : ''}`);
      await downloadTo(path, url, meta, { ...o, onProgress: (d) => { done[i] = d; report(); } });
      return { file, path, url, sha256: meta.sha256, cached: false };
    });
  };
  // a few at a time: the shards of a big model are many
  const out: PulledFile[] = new Array(files.length);
  let next = 0;
  const worker = async () => { while (next < files.length) { const i = next++; out[i] = await one(files[i]!, i); } };
  await Promise.all(Array.from({ length: Math.min(4, files.length) }, worker));
  return { repo: ref.repo, file: files[0]!, path: out[0]!.path, files: out };
}
