// Typed errors of the Hugging Face download path. `code` is stable; the message names the repository,
// file, URL or cache path concerned.
export type HubErrorCode =
  | 'BAD_REF' // not OWNER/REPO[:QUANT|FILE]
  | 'UNAUTHORIZED' // 401/403: a private or gated repository (set HF_TOKEN)
  | 'REPO_NOT_FOUND'
  | 'FILE_NOT_FOUND' // the repository has no such file / no GGUF matching the quant tag
  | 'HTTP_ERROR' // any other status
  | 'NETWORK' // the hub could not be reached (and nothing usable is cached)
  | 'NOT_CACHED' // offline and the file is not in the cache
  | 'SIZE_MISMATCH' // the bytes received differ from the size the hub announced
  | 'SHA256_MISMATCH' // the file's sha256 differs from the hub's (or the one given)
  | 'RANGE_IGNORED'; // a resumed download got neither 206 nor a full 200

export class HubError extends Error {
  readonly code: HubErrorCode;
  constructor(code: HubErrorCode, message: string) {
    super(message);
    this.name = 'HubError';
    this.code = code;
  }
}
