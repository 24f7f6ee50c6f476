// The demo page of `gguf-edge web` in headless Chromium (playwright-core), as a user sees it after a greedy
// reply: `npm run build && node scripts/web-screenshot.mjs docs/images/web-demo.png`. Needs the Chromium the
// browser tests use (test/helpers/chromium.ts) and the shared fixtures beside the repo.
import { startWebServer } from '../dist/src/web/server.js';
import { launchChromium } from '../dist/test/helpers/chromium.js';
const server = await startWebServer({ port: 0, modelPath: new URL('../../shared/fixtures/models/stories260K.gguf', import.meta.url).pathname, isolation: true });
const base = `http://127.0.0.1:${server.address().port}/`;
const { context, close } = await launchChromium();
const page = await context.newPage();
await page.setViewportSize({ width: 1100, height: 800 });
await page.goto(base);
await page.waitForFunction(() => typeof demo !== 'undefined' && (demo.loads > 0 || demo.error !== null), null, { timeout: 60000 });
await page.fill('#temp', '0');
await page.fill('#max-tokens', '48');
await page.click('#prompt');
await page.keyboard.type('Once upon a time');
await page.keyboard.press('Enter');
await page.waitForFunction(() => /decode \d+ tok [\d.]+ tok\/s/.test(document.getElementById('stats').textContent ?? ''), null, { timeout: 60000 });
await page.screenshot({ path: process.argv[2], fullPage: true });
console.log(await page.evaluate(() => document.getElementById('stats').textContent));
await close(); server.close();
