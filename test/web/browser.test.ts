// The browser build in Chromium (playwright-core driving Debian's chromium-headless-shell): the demo page
// served by `gguf-edge web` loads stories260K from /model.gguf and generates llama.cpp's recorded greedy
// tokens, the same as the Node CLI, cross-origin isolated (2 Web Worker threads) and not (1 thread); a
// user's flow (type a prompt, press Enter, text streams in, tok/s shown); a local file through the file
// input; cacheInOpfs resuming an interrupted download; the same tokens through the webgpu device (Chromium's
// WebGPU over SwiftShader, its software Vulkan), all on the GPU and as prefill-webgpu / decode-cpu.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import type { Server } from 'node:http';
import type { Page } from 'playwright-core';
import { fixture, repoRoot } from '../helpers/fixtures.js';
import { launchChromium } from '../helpers/chromium.js';
import { startWebServer } from '../../src/web/server.js';

const MODEL = fixture('models/stories260K.gguf');
const PROMPT = 'Once upon a time';
const N = 32;

interface Req { url: string; range: string | undefined; status: number }
async function serve(isolation: boolean): Promise<{ server: Server; base: string; log: Req[] }> {
  const log: Req[] = [];
  const server = await startWebServer({ port: 0, modelPath: MODEL, isolation, onRequest: (r) => log.push(r) });
  const a = server.address();
  return { server, base: `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}/`, log };
}

// the oracles: llama.cpp's recorded greedy run, and the Node CLI
const reference = (JSON.parse(readFileSync(fixture('reference/greedy-llama.cpp.json'), 'utf8')) as {
  cases: { model: string; prompt: string; n_predict: number; default: { generated_ids: number[]; generated_text: string } }[];
}).cases.find((c) => c.model === 'stories260K.gguf' && c.prompt === PROMPT)!;

function cliRun(): { tokens: number[]; text: string } {
  const r = spawnSync(process.execPath, [resolve(repoRoot, 'bin/gguf-edge.js'), 'run', MODEL, '-p', PROMPT, '-n', String(N), '--temp', '0', '--json'], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout) as { tokens: number[]; text: string };
}

interface Demo { loads: number; error: string | null; last: { tokens: number[]; text: string; timings: { predicted_per_second: number; prompt_per_second: number } } | null }
declare const demo: Demo;

/** What a user does: set greedy sampling, type the prompt, press Enter; returns what streamed. */
async function chatAsUser(page: Page): Promise<{ tokens: number[]; shown: string; updates: number; stats: string }> {
  await page.waitForFunction(() => typeof demo !== 'undefined' && (demo.loads > 0 || demo.error !== null), null, { timeout: 60_000 });
  assert.equal(await page.evaluate(() => demo.error), null);
  await page.fill('#temp', '0');
  await page.fill('#max-tokens', String(N));
  await page.click('#prompt');
  await page.keyboard.type(PROMPT);
  // count the reply's visible updates while it streams
  await page.evaluate(() => {
    const w = globalThis as unknown as { updates: number };
    w.updates = 0;
    new MutationObserver(() => { w.updates++; }).observe(document.getElementById('transcript')!, { subtree: true, characterData: true, childList: true });
  });
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => /decode \d+ tok [\d.]+ tok\/s/.test(document.getElementById('stats')!.textContent ?? ''), null, { timeout: 60_000 });
  const shown = await page.locator('.msg.assistant .text').last().textContent();
  const { tokens, updates, stats } = await page.evaluate(() => ({ tokens: demo.last!.tokens, updates: (globalThis as unknown as { updates: number }).updates, stats: document.getElementById('stats')!.textContent ?? '' }));
  return { tokens, shown: shown ?? '', updates, stats };
}

test('browser build: the demo page generates the Node CLI\'s (and llama.cpp\'s) greedy tokens', async (t) => {
  assert.ok(reference, 'stories260K case in greedy-llama.cpp.json');
  const want = reference.default.generated_ids.slice(0, N);
  const cli = cliRun();
  assert.deepEqual(cli.tokens, want, 'the Node CLI reproduces llama.cpp');
  // --enable-unsafe-webgpu: Linux Chromium ships WebGPU behind it; with no GPU it runs on SwiftShader
  const browser = await launchChromium(['--enable-unsafe-webgpu']);
  t.after(() => browser.close());

  for (const isolation of [true, false]) {
    await t.test(isolation ? 'cross-origin isolated: 2 threads' : 'no COOP/COEP: single-threaded', async () => {
      const { server, base, log } = await serve(isolation);
      const page = await browser.context.newPage();
      try {
        const errors: string[] = [];
        page.on('pageerror', (e) => errors.push(e.message));
        await page.goto(`${base}?threads=2`);
        assert.equal(await page.evaluate(() => globalThis.crossOriginIsolated), isolation);
        const r = await chatAsUser(page);
        assert.deepEqual(r.tokens, want);
        assert.equal(r.shown, cli.text);
        assert.ok(r.updates >= 8, `the reply streamed in (${r.updates} updates)`);
        assert.match(r.stats, /prefill \d+ tok [\d.]+ tok\/s · decode 32 tok [\d.]+ tok\/s/);
        const device = await page.locator('dd[data-key="device"]').textContent();
        assert.match(device ?? '', isolation ? /on 2 threads/ : /on 1 thread,/);
        assert.match(await page.locator('dd[data-key="plan"]').textContent() ?? '', /^decode: cpu \(\d+ ops\)/);
        assert.match(await page.locator('dd[data-key="memory used"]').textContent() ?? '', /MiB of a [\d.]+ MiB WebAssembly\.Memory/);
        // the header by a Range request, then the tensors streamed from one ranged response
        const model = log.filter((q) => q.url === '/model.gguf');
        assert.deepEqual(model.map((q) => [q.range, q.status]), [['bytes=0-1048575', 206], ['bytes=1048576-', 206]]);
        assert.deepEqual(errors, []);
      } finally {
        await page.close();
        server.close();
      }
    });
  }

  for (const [device, plan] of [['webgpu', /^decode: webgpu \(\d+ ops\); prefill \d+ tokens: webgpu \(\d+ ops\)$/], ['webgpu-prefill', /^decode: cpu \(\d+ ops\); prefill \d+ tokens: webgpu \(\d+ ops\)$/]] as const) {
    await t.test(`the webgpu device (${device === 'webgpu' ? 'all on the GPU' : 'prefill on the GPU, decode on the cpu'})`, async () => {
      const { server, base } = await serve(true);
      const page = await browser.context.newPage();
      try {
        const errors: string[] = [];
        page.on('pageerror', (e) => errors.push(e.message));
        await page.goto(`${base}?threads=2&device=${device}`);
        assert.equal(await page.evaluate(() => !!navigator.gpu), true, 'navigator.gpu (Chromium with --enable-unsafe-webgpu)');
        assert.equal(await page.locator('#device').inputValue(), device);
        const r = await chatAsUser(page);
        assert.deepEqual(r.tokens, want);
        assert.equal(r.shown, cli.text);
        assert.match(await page.locator('dd[data-key="device"]').textContent() ?? '', /^webgpu: WebGPU \(.+\); cpu: /);
        assert.match(await page.locator('dd[data-key="plan"]').textContent() ?? '', plan);
        assert.deepEqual(errors, []);
      } finally {
        await page.close();
        server.close();
      }
    });
  }

  await t.test('a local GGUF through the file input (Blob slices)', async () => {
    const { server, base } = await serve(true);
    const page = await browser.context.newPage();
    try {
      await page.goto(`${base}?autoload=0&threads=2`);
      await page.waitForFunction(() => typeof demo !== 'undefined');
      await page.setInputFiles('#file', MODEL);
      const r = await chatAsUser(page);
      assert.deepEqual(r.tokens, want);
    } finally {
      await page.close();
      server.close();
    }
  });

  await t.test('cacheInOpfs: an interrupted download resumes, then loads from OPFS', async () => {
    const { server, base, log } = await serve(true);
    const page = await browser.context.newPage();
    try {
      await page.goto(`${base}?autoload=0`);
      await page.waitForFunction(() => typeof demo !== 'undefined');
      const CHUNK = 256 * 1024;
      const first = await page.evaluate(async (chunk) => {
        const g = await import('./gguf-edge.js' as string) as typeof import('../../src/api/index.js');
        const ac = new AbortController();
        let error = '';
        try {
          await g.loadModel('/model.gguf', { cacheInOpfs: true, opfsChunkBytes: chunk, signal: ac.signal, threads: 2, onProgress: (p) => { if (p.phase === 'fetch' && p.loaded >= 2 * chunk) ac.abort(); } });
        } catch (e) { error = (e as Error).name; }
        return { error, status: await g.opfsCacheStatus('/model.gguf') };
      }, CHUNK);
      assert.equal(first.error, 'AbortError');
      assert.ok(first.status && !first.status.complete && first.status.bytes >= 2 * CHUNK && first.status.bytes % CHUNK === 0, JSON.stringify(first.status));
      log.length = 0;
      const run = () => page.evaluate(async (n) => {
        const g = await import('./gguf-edge.js' as string) as typeof import('../../src/api/index.js');
        const m = await g.loadModel('/model.gguf', { cacheInOpfs: true, opfsChunkBytes: 256 * 1024, threads: 2 });
        const c = await m.createContext({ ctx: 128 });
        const r = await c.generate('Once upon a time', { maxTokens: n, temperature: 0 }).result;
        await m.close();
        return { tokens: r.tokens, status: await g.opfsCacheStatus('/model.gguf') };
      }, N);
      const second = await run();
      assert.deepEqual(second.tokens, want);
      assert.equal(second.status?.complete, true);
      // only the rest was asked for, under the first response's validator
      assert.deepEqual(log.filter((q) => q.url === '/model.gguf').map((q) => q.range), ['bytes=0-0', `bytes=${first.status!.bytes}-`]);
      log.length = 0;
      const third = await run();
      assert.deepEqual(third.tokens, want);
      assert.deepEqual(log.filter((q) => q.url === '/model.gguf').map((q) => q.range), ['bytes=0-0'], 'loaded from OPFS: only the size/validator probe');
    } finally {
      await page.close();
      server.close();
    }
  });
});
