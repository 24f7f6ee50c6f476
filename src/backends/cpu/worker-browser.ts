// Browser entry of a pool worker (module Worker): init arrives as the first message.
import { workerMain, type WorkerInit } from './worker-core.js';

const scope = globalThis as unknown as { onmessage: ((e: MessageEvent) => void) | null; postMessage(m: unknown): void };
scope.onmessage = (e: MessageEvent) => {
  scope.onmessage = null;
  void workerMain(e.data as WorkerInit, () => scope.postMessage('ready'));
};
