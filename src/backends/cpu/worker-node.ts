// Node entry of a pool worker (worker_threads): init arrives as workerData.
import { parentPort, workerData } from 'node:worker_threads';
import { workerMain, type WorkerInit } from './worker-core.js';

await workerMain(workerData as WorkerInit, () => parentPort!.postMessage('ready'));
parentPort?.close();
