// `gguf-edge web [MODEL]`: serves the browser build and its demo page (src/web/server.ts, src/web/page/).
import { parseArgs } from 'node:util';
import { existsSync, statSync } from 'node:fs';
import type { Command } from '../main.js';
import { num, usage } from '../options.js';

const help = () => `Usage: gguf-edge web [MODEL] [options]

Serves a demo page that runs gguf-edge in the browser (the browser build, dist/web: one ES module bundle
with the WebAssembly kernels, and its worker). On the page: load the MODEL given here (served at
/model.gguf), a URL or a local GGUF file; chat with streaming output; load progress, prefill and decode
tok/s, the device plan and the memory used. The engine runs in the tab; this server only serves files.

Headers: Cross-Origin-Opener-Policy: same-origin and Cross-Origin-Embedder-Policy: require-corp (cross-origin
isolation: SharedArrayBuffer, so the cpu device's Web Workers share one WebAssembly.Memory), Range requests
(206/416, If-Range: the page reads the GGUF header first and streams the tensors), JavaScript/wasm MIME types.
Query parameters of the page: ?model=URL (load it at start; the MODEL loads at start unless autoload=0),
threads=N, ctx=N, numerics=fast|exact, device=cpu|webgpu|webgpu-prefill (webgpu: every op the GPU has;
webgpu-prefill: prompt batches on the GPU, decode on the cpu device; needs navigator.gpu), opfs=1 (keep URL
downloads in the Origin Private File System).

Options:
  --host ADDR         address to listen on (default 127.0.0.1: loopback only)
  --port N            port (default 8080; 0 = any free port); the URL is printed on stderr
  --no-isolation      serve without COOP/COEP: the page is not cross-origin isolated and runs single-threaded
  -h, --help          show this help`;

export const command: Command = {
  summary: 'serve a demo page running the engine in the browser (COOP/COEP, Range)',
  get help() { return help(); },
  async run(args) {
    const { values, positionals } = parseArgs({
      args, allowPositionals: true,
      options: { host: { type: 'string' }, port: { type: 'string' }, 'no-isolation': { type: 'boolean' } },
    });
    if (positionals.length > 1) throw usage(`web takes at most one MODEL, got ${positionals.length}: ${positionals.join(' ')}`);
    const port = num(values.port, 'port', 8080);
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw usage(`--port needs an integer 0..65535, got "${String(values.port)}"`);
    const modelPath = positionals[0];
    if (modelPath !== undefined && !(existsSync(modelPath) && statSync(modelPath).isFile())) throw usage(`MODEL ${modelPath} is not a file`);
    const { startWebServer } = await import('../../web/server.js');
    const server = await startWebServer({ host: values.host ?? '127.0.0.1', port, modelPath, isolation: !values['no-isolation'] });
    const addr = server.address();
    const url = typeof addr === 'object' && addr ? `http://${addr.family === 'IPv6' ? `[${addr.address}]` : addr.address}:${addr.port}/` : String(addr);
    process.stderr.write(`gguf-edge web: ${url}${modelPath ? ` (model: ${modelPath} at /model.gguf)` : ''}${values['no-isolation'] ? ' (not cross-origin isolated: single-threaded)' : ''}\n`);
    await new Promise<void>((resolve) => {
      const stop = () => { process.off('SIGINT', stop); process.off('SIGTERM', stop); resolve(); };
      process.on('SIGINT', stop);
      process.on('SIGTERM', stop);
    });
    server.close();
    server.closeAllConnections();
    return 0;
  },
};
