#!/usr/bin/env node
// The browser build: src/api/index.ts as one ESM bundle, dist/web/gguf-edge.js (the WASM kernels are in it,
// embedded as base64 by build-kernels.mjs), plus the cpu device's worker entry dist/web/worker-browser.js,
// which the bundle starts as a module Worker by `new URL('./worker-browser.js', import.meta.url)` (so the
// two files must stay side by side). The web command's demo page (src/web/page/) is copied next to them.
// Modules that only Node runs (file descriptors, worker_threads, V8 flags, the sim-npu disk cache) are only
// ever imported dynamically behind an isNode() check; in the bundle they are replaced by a module that
// throws when loaded, so no Node built-in is bundled and a wrong path fails with a clear message.
import { build } from 'esbuild';
import { cpSync, mkdirSync, readFileSync, statSync } from 'node:fs';

const NODE_ONLY = /(?:^node:|[/\\](?:node-flags|node-workers|node-io|file-source|open|disk-cache|split-write|worker-node)\.(?:js|ts)$)/;

const nodeOnly = {
  name: 'node-only',
  setup(b) {
    b.onResolve({ filter: /.*/ }, (args) => {
      if (args.kind === 'entry-point') return undefined;
      if (/^node:/.test(args.path)) return { path: args.path, namespace: 'node-only' };
      if (args.path.startsWith('.') && NODE_ONLY.test(args.path)) return { path: args.path, namespace: 'node-only' };
      return undefined;
    });
    b.onLoad({ filter: /.*/, namespace: 'node-only' }, (args) => ({
      contents: `throw new Error(${JSON.stringify(`gguf-edge (browser build): ${args.path} is Node-only`)});`,
      loader: 'js',
    }));
  },
};

const common = {
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: 'es2022',
  sourcemap: true,
  legalComments: 'none',
  plugins: [nodeOnly],
  logLevel: 'warning',
  // the worker URL is resolved against import.meta.url at run time (esbuild leaves it alone)
  logOverride: { 'unsupported-dynamic-import': 'silent' },
};

mkdirSync('dist/web', { recursive: true });
await build({ ...common, entryPoints: { 'gguf-edge': 'src/api/index.ts' }, outdir: 'dist/web' });
await build({ ...common, entryPoints: { 'worker-browser': 'src/backends/cpu/worker-browser.ts' }, outdir: 'dist/web' });
cpSync('src/web/page', 'dist/web', { recursive: true });

// a Node built-in that slipped into the bundle would be an import statement in it
for (const f of ['gguf-edge.js', 'worker-browser.js']) {
  const text = readFileSync(`dist/web/${f}`, 'utf8');
  const bad = text.match(/\bfrom\s*["'](?:node:)?(?:fs|path|url|os|worker_threads|v8|module|crypto|http|child_process)["']/);
  if (bad) { console.error(`build-web: dist/web/${f} imports a Node module: ${bad[0]}`); process.exit(1); }
  console.error(`dist/web/${f}: ${statSync(`dist/web/${f}`).size} bytes`);
}
