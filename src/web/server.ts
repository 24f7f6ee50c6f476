// The `gguf-edge web` server (Node only): the browser build (dist/web) and its demo page, plus an optional
// model file at /model.gguf, with the headers a page running the engine needs:
// - COOP same-origin + COEP require-corp make the page cross-origin isolated, which is what gives it
//   SharedArrayBuffer and so a shared WebAssembly.Memory for the worker threads (isolation: false serves
//   without them: the page then runs single-threaded);
// - Range requests (206, Content-Range, 416 outside the file, If-Range) so the loader reads the GGUF header
//   first and streams tensors (and resumes a download into OPFS);
// - MIME types browsers insist on (module scripts must be JavaScript, wasm application/wasm).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createReadStream, existsSync, statSync, type Stats } from 'node:fs';
import { basename, extname, join, normalize, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface WebServerOptions {
  host?: string;
  /** 0 = any free port */
  port?: number;
  /** the GGUF served at /model.gguf (and named in /config.json) */
  modelPath?: string;
  /** COOP/COEP headers (default true) */
  isolation?: boolean;
  /** the folder served at / (default: the package's dist/web) */
  root?: string;
  /** more folders: URL prefix -> directory (e.g. the benchmark's peers) */
  mounts?: Record<string, string>;
  /** called for every request (method, url, range header, status) */
  onRequest?: (r: { method: string; url: string; range: string | undefined; status: number }) => void;
}

export const WEB_ROOT = fileURLToPath(new URL('../../web/', import.meta.url));

const MIME: Record<string, string> = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8', '.json': 'application/json; charset=utf-8', '.map': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm', '.gguf': 'application/octet-stream', '.png': 'image/png', '.svg': 'image/svg+xml',
  '.txt': 'text/plain; charset=utf-8', '.ico': 'image/x-icon',
};

export function mimeType(path: string): string {
  return MIME[extname(path).toLowerCase()] ?? 'application/octet-stream';
}

/** Parses one `bytes=a-b` / `bytes=a-` / `bytes=-n` range against a size: [start, end] inclusive, or 'bad'. */
export function parseRange(header: string, size: number): [number, number] | 'bad' | undefined {
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m) return undefined; // multi-range or another unit: ignored, the whole file is sent (RFC 9110 allows it)
  const [, a, b] = m;
  if (a === '' && b === '') return 'bad';
  let start: number, end: number;
  if (a === '') { // suffix: the last n bytes
    const n = Number(b);
    if (n === 0) return 'bad';
    start = Math.max(0, size - n); end = size - 1;
  } else {
    start = Number(a);
    end = b === '' ? size - 1 : Math.min(Number(b), size - 1);
  }
  if (start >= size || start > end) return 'bad';
  return [start, end];
}

export async function startWebServer(o: WebServerOptions = {}): Promise<Server> {
  const root = resolve(o.root ?? WEB_ROOT);
  if (!existsSync(join(root, 'gguf-edge.js'))) throw new Error(`${root} has no gguf-edge.js: build the browser bundle first (npm run build:web)`);
  const isolation = o.isolation ?? true;
  const mounts = Object.entries(o.mounts ?? {}).map(([p, d]) => [p.replace(/\/?$/, '/'), resolve(d)] as const);
  const config = JSON.stringify({
    model: o.modelPath ? { url: '/model.gguf', name: basename(o.modelPath), size: statSync(o.modelPath).size } : null,
    isolation,
  });

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const done = (status: number) => o.onRequest?.({ method: req.method ?? '', url: url.pathname + url.search, range: req.headers.range, status });
    res.on('finish', () => done(res.statusCode));
    if (isolation) {
      res.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
      res.setHeader('Cross-Origin-Embedder-Policy', 'require-corp');
    }
    // same-origin resources only; this also lets an isolated page of another port embed nothing from here
    res.setHeader('Cross-Origin-Resource-Policy', 'same-origin');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { Allow: 'GET, HEAD' }).end();
      return;
    }
    let path = decodeURIComponent(url.pathname);
    if (path === '/config.json') {
      res.writeHead(200, { 'Content-Type': MIME['.json']!, 'Cache-Control': 'no-store' }).end(req.method === 'HEAD' ? undefined : config);
      return;
    }
    let file: string | undefined;
    if (path === '/model.gguf') file = o.modelPath;
    else {
      if (path.endsWith('/')) path += 'index.html';
      const mount = mounts.find(([p]) => path.startsWith(p));
      const base = mount ? mount[1] : root;
      const rel = normalize(mount ? path.slice(mount[0].length) : path.slice(1));
      const abs = resolve(base, rel);
      // no way out of the served folder (../, absolute paths)
      if (abs === base || abs.startsWith(base + sep)) file = abs;
    }
    let st: Stats | undefined;
    try { st = file !== undefined ? statSync(file) : undefined; } catch { st = undefined; }
    if (!file || !st?.isFile()) {
      res.writeHead(404, { 'Content-Type': MIME['.txt']! }).end('not found\n');
      return;
    }
    sendFile(req, res, file, st);
  });
  await new Promise<void>((ok, fail) => {
    server.once('error', fail);
    server.listen(o.port ?? 8080, o.host ?? '127.0.0.1', () => { server.off('error', fail); ok(); });
  });
  return server;
}

function sendFile(req: IncomingMessage, res: ServerResponse, file: string, st: Stats): void {
  const size = st.size;
  const etag = `"${st.size.toString(16)}-${Math.floor(st.mtimeMs).toString(16)}"`;
  const headers: Record<string, string | number> = {
    'Content-Type': mimeType(file), 'Accept-Ranges': 'bytes', ETag: etag,
    'Last-Modified': st.mtime.toUTCString(), 'Cache-Control': 'no-cache',
  };
  let range = req.headers.range !== undefined ? parseRange(req.headers.range, size) : undefined;
  // If-Range: a range only while the file is the one the client started with, else the whole file
  const ifRange = req.headers['if-range'];
  if (range !== undefined && ifRange !== undefined && ifRange !== etag && ifRange !== headers['Last-Modified']) range = undefined;
  if (range === 'bad') {
    res.writeHead(416, { ...headers, 'Content-Range': `bytes */${size}` }).end();
    return;
  }
  let start = 0, end = size - 1, status = 200;
  if (range) {
    [start, end] = range;
    status = 206;
    headers['Content-Range'] = `bytes ${start}-${end}/${size}`;
  }
  headers['Content-Length'] = size === 0 ? 0 : end - start + 1;
  res.writeHead(status, headers);
  if (req.method === 'HEAD' || size === 0) { res.end(); return; }
  const s = createReadStream(file, { start, end });
  s.on('error', () => res.destroy());
  res.on('close', () => s.destroy());
  s.pipe(res);
}
