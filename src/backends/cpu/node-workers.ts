// Node-specific pieces of the CPU runtime: worker_threads spawning and the core count.
import { Worker } from 'node:worker_threads';
import os from 'node:os';
import type { WorkerInit } from './worker-core.js';
import type { WorkerHandle } from './workers.js';

export function spawnNodeWorker(init: WorkerInit): WorkerHandle {
  const w = new Worker(new URL('./worker-node.js', import.meta.url), { workerData: init });
  const ready = new Promise<void>((resolve, reject) => {
    // workers blocked in Atomics.wait must not keep the process alive once started
    w.once('message', () => { w.unref(); resolve(); });
    w.once('error', (e) => reject(e));
    w.once('exit', (code) => reject(new Error(`cpu worker exited early (code ${code})`)));
  });
  return { ready, terminate: () => w.terminate() };
}

export function nodeCores(): number {
  return typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length;
}
