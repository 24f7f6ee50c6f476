// The HTTP layer of `serve`: node:http, routing (every route also without its /v1 prefix), a body size
// limit, read/write timeouts for slow clients, API-key auth, CORS (off unless --cors), and one error shape.
// Nothing a request says reaches the filesystem: routes read the loaded model and the engine only.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createHash, timingSafeEqual } from 'node:crypto';
import { ApiError, asApiError } from './errors.js';
import { RequestCounter } from './metrics.js';
import { routeTable, type Handler, type ServerState } from './routes.js';

export interface HttpOptions {
  host: string;
  port: number;
  /** accepted keys; empty: no auth */
  apiKeys: string[];
  /** allowed CORS origins ('*' = any); empty: no CORS headers */
  cors: string[];
  maxBodyBytes: number;
  /** read (whole request) and write (a stalled response) timeout */
  timeoutMs: number;
}

/** Routes anyone may call, even with --api-key (llama-server's public endpoints). */
const PUBLIC = new Set(['/health', '/v1/health', '/models', '/v1/models']);

export interface Reply {
  req: IncomingMessage;
  res: ServerResponse;
  /** JSON response */
  json(status: number, body: unknown, headers?: Record<string, string>): void;
  /** the parsed-later raw body */
  body: string;
  /** write timeout: destroys the connection when a write stays blocked this long */
  timeoutMs: number;
}

const digest = (s: string) => createHash('sha256').update(s).digest();

export function startHttp(state: ServerState, o: HttpOptions): Promise<Server> {
  const counter = new RequestCounter();
  state.requests = counter;
  const routes = routeTable(state);
  const keys = o.apiKeys.map(digest);
  const authorized = (req: IncomingMessage): boolean => {
    if (!keys.length) return true;
    const h = req.headers.authorization;
    const x = req.headers['x-api-key'];
    const given = typeof h === 'string' && /^Bearer\s+/i.test(h) ? h.replace(/^Bearer\s+/i, '').trim() : typeof x === 'string' ? x : undefined;
    if (given === undefined) return false;
    const g = digest(given);
    let ok = false;
    for (const k of keys) ok = timingSafeEqual(g, k) || ok; // every key compared: no timing hint which matched
    return ok;
  };
  const corsHeaders = (req: IncomingMessage): Record<string, string> => {
    const origin = req.headers.origin;
    if (!o.cors.length || typeof origin !== 'string') return {};
    if (!o.cors.includes('*') && !o.cors.includes(origin)) return {};
    return { 'Access-Control-Allow-Origin': origin, 'Access-Control-Allow-Credentials': 'true', 'Access-Control-Allow-Methods': 'GET, POST', 'Access-Control-Allow-Headers': '*', Vary: 'Origin' };
  };

  // requestTimeout bounds the receipt of a whole request (a slow-loris body); node checks it every
  // connectionsCheckingInterval, so that follows the timeout
  const server = createServer({
    requestTimeout: o.timeoutMs, headersTimeout: Math.min(o.timeoutMs, 60_000), keepAliveTimeout: 5_000,
    connectionsCheckingInterval: Math.max(100, Math.min(30_000, o.timeoutMs / 4)),
  }, (req, res) => {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q >= 0 ? url.slice(0, q) : url;
    const cors = corsHeaders(req);
    for (const [k, v] of Object.entries(cors)) res.setHeader(k, v);
    const route = routes.get(path);
    const routeName = route ? path : '(unknown)';
    res.on('finish', () => counter.add(routeName, res.statusCode));
    const json = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      if (res.headersSent) { res.end(); return; }
      const text = JSON.stringify(body);
      res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(text), ...headers });
      res.end(text);
    };
    const fail = (e: unknown) => {
      const err = asApiError(e);
      if (err.status >= 500 && err.type === 'server_error') process.stderr.write(`serve: ${req.method} ${path}: ${err.message}\n`);
      json(err.status, err.body(), err.headers);
    };
    if (req.method === 'OPTIONS') {
      // CORS preflight: answered without auth, as browsers send no credentials with it
      res.writeHead(cors['Access-Control-Allow-Origin'] ? 204 : 405, cors['Access-Control-Allow-Origin'] ? {} : { Allow: 'GET, POST' });
      res.end();
      return;
    }
    if (!route) return fail(new ApiError(404, 'not_found_error', `no route ${req.method} ${path}`));
    const handler: Handler | undefined = route[req.method ?? ''];
    if (!handler) {
      res.setHeader('Allow', Object.keys(route).join(', '));
      return fail(new ApiError(405, 'invalid_request_error', `${path} does not take ${req.method} (allowed: ${Object.keys(route).join(', ')})`));
    }
    if (!PUBLIC.has(path) && !authorized(req)) return fail(new ApiError(401, 'authentication_error', 'Invalid API Key'));
    readBody(req, o.maxBodyBytes).then(
      (body) => handler({ req, res, json, body, timeoutMs: o.timeoutMs }),
    ).catch(fail);
  });
  // malformed HTTP (bad request line, oversized headers): a 400 and the connection closed, never a crash
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    if (!socket.writable || (err.code === 'ECONNRESET')) { socket.destroy(); return; }
    const status = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
    const body = JSON.stringify(new ApiError(status, 'invalid_request_error', `bad HTTP request (${err.code ?? err.message})`).body());
    socket.end(`HTTP/1.1 ${status} Bad Request\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => { server.off('error', reject); resolve(server); });
  });
}

/** The request body as UTF-8 text, at most `limit` bytes (413 beyond). */
function readBody(req: IncomingMessage, limit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    if (req.method === 'GET' || req.method === 'HEAD') { req.resume(); resolve(''); return; }
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) {
      reject(new ApiError(413, 'invalid_request_error', `the request body has ${declared} bytes, more than the limit of ${limit} (--max-body)`));
      req.resume();
      return;
    }
    const chunks: Buffer[] = [];
    let n = 0;
    let done = false;
    req.on('data', (c: Buffer) => {
      if (done) return;
      n += c.length;
      if (n > limit) {
        done = true;
        reject(new ApiError(413, 'invalid_request_error', `the request body is more than the limit of ${limit} bytes (--max-body)`));
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => { if (!done) { done = true; resolve(Buffer.concat(chunks).toString('utf8')); } });
    req.on('error', (e) => { if (!done) { done = true; reject(new ApiError(400, 'invalid_request_error', `cannot read the request body: ${e.message}`)); } });
  });
}
