// A local stand-in for the Hugging Face hub on 127.0.0.1, answering the way huggingface.co does for the
// routes the download code uses, so the tests run the real download code without the internet:
//   GET  /v2/OWNER/REPO/manifests/TAG            {"ggufFile": {"rfilename", "size"}} for a llama-cpp User-Agent
//   GET  /api/models/OWNER/REPO/tree/main        [{type, path, size, oid, lfs: {oid (sha256), size}}]
//   HEAD|GET /OWNER/REPO/resolve/main/FILE       an LFS file: 302 to a relative /cdn/SHA256 with X-Repo-Commit,
//                                                X-Linked-Etag "SHA256", X-Linked-Size; a small git file: 200
//   HEAD|GET /cdn/SHA256                         the bytes, ETag "SHA256", Accept-Ranges, Range -> 206 (If-Range)
// Unknown repositories answer 401 (as the hub does, not to reveal private ones); a private repository wants
// `Authorization: Bearer TOKEN`. Knobs: cut a CDN response after N bytes (then close the socket), serve
// corrupted bytes, and a log of every request.
import { createHash } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeFile {
  /** path in the repository */
  path: string;
  bytes: Uint8Array;
  /** stored in git (small files): served directly with a git-sha1 ETag, no sha256 */
  git?: boolean;
}

export interface FakeRepo {
  files: FakeFile[];
  /** quant tag -> file, for the manifest API; absent: the API says 404 */
  manifests?: Record<string, string>;
  /** needs this bearer token */
  token?: string;
}

export interface FakeHub {
  url: string;
  requests: { method: string; url: string; headers: IncomingHttpHeaders; status?: number }[];
  /** sha256 -> how many more CDN responses to cut, and after how many body bytes */
  cut: Map<string, { times: number; after: number }>;
  /** sha256s whose CDN bytes come back with one byte flipped */
  corrupt: Set<string>;
  repos: Record<string, FakeRepo>;
  sha256(bytes: Uint8Array): string;
  close(): Promise<void>;
}

const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
const gitSha1 = (b: Uint8Array) => createHash('sha1').update(`blob ${b.length}\0`).update(b).digest('hex');
const COMMIT = '0123456789abcdef0123456789abcdef01234567';

export async function startFakeHub(repos: Record<string, FakeRepo>): Promise<FakeHub> {
  const hub: FakeHub = { url: '', requests: [], cut: new Map(), corrupt: new Set(), repos, sha256, close: async () => {} };
  const blob = (sha: string) => {
    for (const r of Object.values(hub.repos)) for (const f of r.files) if (!f.git && sha256(f.bytes) === sha) return f.bytes;
    return undefined;
  };
  const server: Server = createServer((req, res) => {
    const entry: FakeHub['requests'][number] = { method: req.method ?? '', url: req.url ?? '', headers: req.headers };
    hub.requests.push(entry);
    const send = (status: number, headers: Record<string, string | number>, body?: string | Uint8Array) => {
      entry.status = status;
      res.writeHead(status, headers);
      res.end(req.method === 'HEAD' ? undefined : body);
    };
    const json = (status: number, v: unknown) => send(status, { 'Content-Type': 'application/json' }, JSON.stringify(v));
    const u = new URL(req.url ?? '/', 'http://x');
    const path = decodeURIComponent(u.pathname);
    const repoOf = (owner: string, name: string): FakeRepo | 'denied' => {
      const r = hub.repos[`${owner}/${name}`];
      if (!r) return 'denied';
      if (r.token && req.headers.authorization !== `Bearer ${r.token}`) return 'denied';
      return r;
    };
    let m: RegExpExecArray | null;
    if ((m = /^\/v2\/([^/]+)\/([^/]+)\/manifests\/([^/]+)$/.exec(path))) {
      const r = repoOf(m[1]!, m[2]!);
      if (r === 'denied') return json(401, { error: 'Invalid username or password.' });
      const file = r.manifests?.[m[3]!];
      const f = file && r.files.find((x) => x.path === file);
      if (!f || !(req.headers['user-agent'] ?? '').startsWith('llama-cpp')) return json(404, { error: `no GGUF for tag ${m[3]}` });
      return json(200, { ggufFile: { rfilename: f.path, size: f.bytes.length, lfs: { sha256: sha256(f.bytes), size: f.bytes.length } } });
    }
    if ((m = /^\/api\/models\/([^/]+)\/([^/]+)\/tree\/main$/.exec(path))) {
      const r = repoOf(m[1]!, m[2]!);
      if (r === 'denied') return json(401, { error: 'Repository not found' });
      return json(200, r.files.map((f) => ({ type: 'file', path: f.path, size: f.bytes.length, oid: gitSha1(f.bytes), ...(f.git ? {} : { lfs: { oid: sha256(f.bytes), size: f.bytes.length, pointerSize: 134 } }) })));
    }
    if ((m = /^\/([^/]+)\/([^/]+)\/resolve\/main\/(.+)$/.exec(path))) {
      const r = repoOf(m[1]!, m[2]!);
      if (r === 'denied') return send(401, { 'X-Error-Code': 'RepoNotFound' }, 'Repository not found');
      const f = r.files.find((x) => x.path === m![3]);
      if (!f) return send(404, { 'X-Error-Code': 'EntryNotFound' }, 'Entry not found');
      if (f.git) return send(200, { 'X-Repo-Commit': COMMIT, ETag: `"${gitSha1(f.bytes)}"`, 'Content-Length': f.bytes.length }, f.bytes);
      const sha = sha256(f.bytes);
      return send(302, { Location: `/cdn/${sha}`, 'X-Repo-Commit': COMMIT, 'X-Linked-Etag': `"${sha}"`, 'X-Linked-Size': f.bytes.length, ETag: `"${sha}"` }, `Found. Redirecting to /cdn/${sha}`);
    }
    if ((m = /^\/cdn\/([0-9a-f]{64})$/.exec(path))) {
      const sha = m[1]!;
      let bytes = blob(sha);
      if (!bytes) return send(404, {}, 'NoSuchKey');
      if (hub.corrupt.has(sha)) { bytes = bytes.slice(); bytes[bytes.length >> 1] ^= 0xff; }
      const etag = `"${sha}"`;
      const range = /^bytes=(\d+)-$/.exec(String(req.headers.range ?? ''));
      const ifRange = req.headers['if-range'];
      let start = 0;
      let status = 200;
      const headers: Record<string, string | number> = { ETag: etag, 'Accept-Ranges': 'bytes', 'Content-Type': 'application/octet-stream' };
      if (range && (ifRange === undefined || ifRange === etag)) {
        start = Number(range[1]);
        if (start >= bytes.length) return send(416, { 'Content-Range': `bytes */${bytes.length}` });
        status = 206;
        headers['Content-Range'] = `bytes ${start}-${bytes.length - 1}/${bytes.length}`;
      }
      const body = bytes.subarray(start);
      headers['Content-Length'] = body.length;
      entry.status = status;
      res.writeHead(status, headers);
      if (req.method === 'HEAD') return res.end();
      const cut = hub.cut.get(sha);
      if (cut && cut.times > 0) {
        cut.times--;
        // part of the body, then the connection drops (the client sees fewer bytes than Content-Length)
        res.write(body.subarray(0, Math.min(cut.after, body.length)), () => res.socket?.destroy());
        return;
      }
      return res.end(body);
    }
    return send(404, {}, 'not found');
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  hub.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  hub.close = () => new Promise((ok) => { server.closeAllConnections(); server.close(() => ok()); });
  return hub;
}
