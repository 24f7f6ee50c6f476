#!/usr/bin/env node
// Runs every compiled test file (dist/test/**/*.test.js) with node's built-in test runner.
// Node 20's `--test` does not expand globs, so we list the files ourselves.
// Usage: node scripts/run-tests.mjs [filter...]  (filters match against the file path)
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';

function walk(dir, out) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else if (name.endsWith('.test.js')) out.push(p);
  }
  return out;
}
const filters = process.argv.slice(2);
// only compiled files whose source still exists (tsc never deletes the output of a removed test)
const hasSource = (f) => existsSync(f.replace(/^dist[\\/]/, '').replace(/\.js$/, '.ts'));
const files = walk('dist/test', []).sort().filter(hasSource).filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)));
if (files.length === 0) {
  console.error('no test files found under dist/test' + (filters.length ? ` matching ${filters.join(', ')}` : ''));
  process.exit(1);
}
// The CLI's relaxed-SIMD setup on Node 20 (src/backends/cpu/node-flags.ts), so the tests run the kernels
// the CLI runs; backend-ops also covers the SIMD128 build.
const probe = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 8, 1, 96, 3, 123, 123, 123, 1, 123, 3, 2, 1, 0, 10, 13, 1, 11, 0, 32, 0, 32, 1, 32, 2, 253, 147, 2, 11]);
const relaxedFlags = ['--experimental-wasm-relaxed-simd', '--no-liftoff'];
const flags = !WebAssembly.validate(probe) && spawnSync(process.execPath, [...relaxedFlags, '-e', '0']).status === 0 ? relaxedFlags : [];
const r = spawnSync(process.execPath, [...flags, '--test', '--test-concurrency=2', ...files], { stdio: 'inherit' });
process.exit(r.status ?? 1);
