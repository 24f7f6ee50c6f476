// How the pool starts its workers. The core runtime only sees this interface; Node's implementation
// lives in node-workers.ts, the browser's below.
import type { WorkerInit } from './worker-core.js';

export interface WorkerHandle {
  /** resolves once the worker has instantiated the kernels and entered its loop */
  ready: Promise<void>;
  terminate(): Promise<unknown> | void;
}
export type SpawnWorker = (init: WorkerInit) => WorkerHandle;

export function spawnBrowserWorker(init: WorkerInit): WorkerHandle {
  const W = (globalThis as unknown as { Worker: new (u: URL, o: object) => Worker }).Worker;
  const w = new W(new URL('./worker-browser.js', import.meta.url), { type: 'module' });
  const ready = new Promise<void>((resolve, reject) => {
    w.onmessage = () => resolve();
    w.onerror = (e) => reject(new Error(`cpu worker failed: ${e.message}`));
  });
  w.postMessage(init);
  return { ready, terminate: () => w.terminate() };
}

export function isNode(): boolean {
  const p = (globalThis as { process?: { versions?: { node?: string } } }).process;
  return !!p?.versions?.node;
}

/**
 * Can worker threads share this thread's memory? In Node always; in a browser only on a cross-origin isolated
 * page (COOP/COEP), which is what exposes SharedArrayBuffer and lets a shared WebAssembly.Memory be posted to
 * a Worker. (Chromium still creates a shared WebAssembly.Memory without isolation: the kernels run, on one
 * thread.)
 */
export function canShareMemory(): boolean {
  if (isNode()) return true;
  const g = globalThis as { crossOriginIsolated?: boolean; SharedArrayBuffer?: unknown };
  return typeof g.SharedArrayBuffer === 'function' && g.crossOriginIsolated !== false;
}

/** The platform's default spawner (Node: worker_threads; elsewhere: module Workers). */
export async function defaultSpawner(): Promise<SpawnWorker> {
  if (isNode()) return (await import('./node-workers.js')).spawnNodeWorker;
  return spawnBrowserWorker;
}

/** Cores available to this process (navigator.hardwareConcurrency / os.availableParallelism). */
export async function availableCores(): Promise<number> {
  if (isNode()) return (await import('./node-workers.js')).nodeCores();
  const n = (globalThis as { navigator?: { hardwareConcurrency?: number } }).navigator?.hardwareConcurrency;
  return n && n > 0 ? n : 1;
}
