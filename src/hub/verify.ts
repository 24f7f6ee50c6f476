// sha256 of a model's file(s), streamed, checked against the sha256 a model card or the hub lists. A split
// model is every shard (found from its first shard as openGguf finds them).
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, readFileSync, statSync } from 'node:fs';
import { openGguf } from '../gguf/open.js';
import { HubError } from './errors.js';
import { SHA256_RE } from './cache.js';

export interface VerifiedFile {
  path: string;
  size: number;
  sha256: string;
  /** what it was checked against, and where that came from */
  expected?: string;
  source?: 'given' | 'hub';
  ok?: boolean;
}

/** The shard paths of the model at `path` (validated as openGguf does). */
export function modelFiles(path: string): string[] {
  const f = openGguf(path);
  try { return f.shards ? f.shards.map((s) => s.name) : [path]; } finally { f.source.close?.(); }
}

/** The sha256 the hub gave for a file this cache downloaded (its .etag, when that is a sha256). */
export function recordedSha256(path: string): string | undefined {
  const p = `${path}.etag`;
  const e = existsSync(p) ? readFileSync(p, 'utf8').trim().toLowerCase() : undefined;
  return e && SHA256_RE.test(e) ? e : undefined;
}

/**
 * Hashes every file of the model; `expected` (one sha256 per file, in shard order) wins over the hub's
 * recorded ones. Throws HubError('SHA256_MISMATCH') naming the first file that differs.
 */
export async function verifyModel(path: string, expected: string[] | undefined, onProgress?: (done: number, total: number) => void): Promise<VerifiedFile[]> {
  const files = modelFiles(path);
  if (expected && expected.length !== files.length) throw new HubError('BAD_REF', `${expected.length} sha256 value(s) given for ${files.length} file(s) (${files.join(', ')})`);
  for (const e of expected ?? []) if (!SHA256_RE.test(e)) throw new HubError('BAD_REF', `"${e}" is not a sha256 (64 hex digits)`);
  const total = files.reduce((a, f) => a + statSync(f).size, 0);
  let done = 0;
  const out: VerifiedFile[] = [];
  for (const [i, file] of files.entries()) {
    const h = createHash('sha256');
    for await (const chunk of createReadStream(file, { highWaterMark: 1 << 20 })) {
      h.update(chunk as Buffer);
      done += (chunk as Buffer).length;
      onProgress?.(done, total);
    }
    const sha256 = h.digest('hex');
    const given = expected?.[i]?.toLowerCase();
    const want = given ?? recordedSha256(file);
    const v: VerifiedFile = { path: file, size: statSync(file).size, sha256 };
    if (want) { v.expected = want; v.source = given ? 'given' : 'hub'; v.ok = want === sha256; }
    out.push(v);
  }
  const bad = out.find((v) => v.ok === false);
  if (bad) throw Object.assign(new HubError('SHA256_MISMATCH', `${bad.path}: sha256 ${bad.sha256}, expected ${bad.expected} (${bad.source === 'given' ? 'given' : 'from the hub'})`), { files: out });
  return out;
}
