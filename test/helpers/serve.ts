// Starts a real `gguf-edge serve` process on a free loopback port and waits for /health 200.
import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { repoRoot } from './fixtures.js';

export interface ServeProcess {
  base: string;
  proc: ChildProcess;
  stderr(): string;
  stop(): Promise<void>;
}

export async function startServe(args: string[], timeoutMs = 60_000): Promise<ServeProcess> {
  const proc = spawn(process.execPath, [resolve(repoRoot, 'bin/gguf-edge.js'), 'serve', ...args, '--port', '0'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  proc.stderr!.setEncoding('utf8');
  const base = await new Promise<string>((ok, fail) => {
    const timer = setTimeout(() => fail(new Error(`serve did not listen within ${timeoutMs} ms:\n${err}`)), timeoutMs);
    proc.stderr!.on('data', (d: string) => {
      err += d;
      const m = /listening on (http:\/\/\S+)/.exec(err);
      if (m) { clearTimeout(timer); ok(m[1]!); }
    });
    proc.once('exit', (code) => { clearTimeout(timer); fail(new Error(`serve exited with ${code}:\n${err}`)); });
  });
  const t0 = Date.now();
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`serve exited with ${proc.exitCode}:\n${err}`);
    try {
      const r = await fetch(`${base}/health`);
      if (r.status === 200) break;
    } catch { /* not yet */ }
    if (Date.now() - t0 > timeoutMs) throw new Error(`serve never became healthy:\n${err}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return {
    base, proc, stderr: () => err,
    stop: () => new Promise<void>((ok) => {
      if (proc.exitCode !== null) return ok();
      proc.once('exit', () => ok());
      proc.kill('SIGTERM');
      setTimeout(() => proc.kill('SIGKILL'), 5000).unref();
    }),
  };
}

/** Reads an SSE response to the end: the JSON of every `data:` event, and whether `[DONE]` closed it. */
export async function readSse(res: Response): Promise<{ events: any[]; done: boolean; raw: string }> {
  const raw = await res.text();
  const events: any[] = [];
  let done = false;
  for (const block of raw.split('\n\n')) {
    if (!block.trim()) continue;
    if (!block.startsWith('data: ')) throw new Error(`not an SSE data event: ${JSON.stringify(block)}`);
    const data = block.slice(6);
    if (data === '[DONE]') { done = true; continue; }
    if (done) throw new Error('event after [DONE]');
    events.push(JSON.parse(data));
  }
  return { events, done, raw };
}
