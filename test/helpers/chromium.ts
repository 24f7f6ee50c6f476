// Chromium for the browser tests: Debian's chromium-headless-shell (or chromium) driven by playwright-core.
// Playwright cannot download browsers here, so the executable is always given; a missing browser fails the
// test loudly (.ci/run installs the package).
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext } from 'playwright-core';

const CANDIDATES = ['/usr/bin/chromium-headless-shell', '/usr/bin/chromium'];

export function chromiumPath(): string {
  const env = process.env.GGUF_EDGE_CHROMIUM;
  const p = env ?? CANDIDATES.find((c) => existsSync(c));
  if (!p || !existsSync(p)) throw new Error(`no Chromium: install Debian's chromium-headless-shell (apt-get install -y chromium-headless-shell; .ci/run does) or set GGUF_EDGE_CHROMIUM (looked for ${env ?? CANDIDATES.join(', ')})`);
  return p;
}

export const CHROMIUM_ARGS = [
  '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
  '--disable-sync', '--no-first-run', '--disable-quic', '--disable-extensions',
];

/** A persistent context on a fresh user-data-dir (removed on close), so OPFS starts empty. */
export async function launchChromium(extraArgs: string[] = []): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  const { chromium } = await import('playwright-core');
  const dir = mkdtempSync(join(tmpdir(), 'gguf-edge-chromium-'));
  const context = await chromium.launchPersistentContext(dir, { executablePath: chromiumPath(), headless: true, args: [...CHROMIUM_ARGS, ...extraArgs] });
  return {
    context,
    async close() {
      await context.close().catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export type { Browser };
