// Where downloaded models live: GGUF_EDGE_CACHE, else the user's cache folder (XDG_CACHE_HOME or ~/.cache on
// Linux, ~/Library/Caches on macOS, %LOCALAPPDATA% on Windows) + /gguf-edge. File names follow llama.cpp's
// -hf cache: `OWNER_REPO_FILE` with every '/' turned into '_', the hub's ETag beside it in `FILE.etag`
// (for an LFS file that ETag is the content's sha256), a download in progress in `FILE.part` (+ `.part.etag`,
// the ETag it was started against, for If-Range), and a quant tag's manifest in `manifest=OWNER=REPO=TAG.json`.
import { homedir } from 'node:os';
import { join } from 'node:path';

export function cacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.GGUF_EDGE_CACHE) return env.GGUF_EDGE_CACHE;
  if (process.platform === 'win32') return join(env.LOCALAPPDATA ?? join(homedir(), 'AppData', 'Local'), 'gguf-edge');
  if (process.platform === 'darwin') return join(homedir(), 'Library', 'Caches', 'gguf-edge');
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'gguf-edge');
}

/** The cached copy of `file` (a path inside the repository) of `repo`. */
export function cachedFilePath(dir: string, repo: string, file: string): string {
  return join(dir, `${repo}_${file}`.replaceAll('/', '_'));
}

export function manifestPath(dir: string, repo: string, tag: string): string {
  return join(dir, `manifest=${repo}=${tag}.json`.replaceAll('/', '='));
}

/** The sha256 recorded for a cached file (its .etag when that is a sha256, as the hub gives for LFS files). */
export const SHA256_RE = /^[0-9a-f]{64}$/;
