// The thread pool: `threads - 1` workers plus the calling thread run one kernel at a time over slices of
// [0, n). An op is published in a small SharedArrayBuffer control block (protocol.ts), the generation
// counter bumped and notified; each thread computes its slice and counts itself done; the caller spins,
// then Atomics.waits. Ops with less work than `minWork` run on the calling thread alone. Row-independent
// ops (the matmuls) go through dispatchChunked instead: chunks claimed by whoever is free (protocol.ts).
// The fields are written under a seqlock (GEN odd while writing, workers copy them and re-check GEN), and
// chunks are claimed under their generation's tag, so an op can be written while a late worker has not
// yet looked at the last chunked one: the caller never waits for a worker to acknowledge a chunked op.
import { CpuRuntimeError } from './errors.js';
import { CLAIM_BITS, CTL, CTL_ARGS_BYTE_OFFSET, CTL_BYTES, KERNEL_NAMES, MAX_ARGS, MAX_CHUNKS, claimChunk, claimTag, sliceEnd, sliceStart, type KernelExports, type KernelFn } from './protocol.js';
import type { WorkerInit } from '../worker-core.js';
import { defaultSpawner, type SpawnWorker, type WorkerHandle } from '../workers.js';

/** chunks per thread of a chunked op: enough that a late or slow thread costs little, few enough that the
 *  per-chunk call and claim (~0.1 us) stay negligible against a chunk (a 1024-row matvec: 64-row chunks) */
const CHUNKS_PER_THREAD = 8;

function canBlock(): boolean {
  try {
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 1, 0);
    return true;
  } catch {
    return false;
  }
}

export class ThreadPool {
  private readonly fns: KernelFn[];
  private readonly blocking = canBlock();
  closed = false;
  /** the next dispatchChunked's least number of chunks (dispatchChunkedMin) */
  private minChunks = 0;
  /** the last published generation (even) */
  private gen = 0;

  private constructor(
    readonly threads: number,
    private readonly ctl: Int32Array,
    private readonly args: Float64Array,
    private readonly workers: WorkerHandle[],
    private readonly minWork: number,
    kernels: KernelExports,
  ) {
    this.fns = KERNEL_NAMES.map((n) => kernels[n]);
  }

  /** starts the workers (each instantiates `module` over `memory`) and waits until they are ready */
  static async start(module: WebAssembly.Module, memory: WebAssembly.Memory, kernels: KernelExports, threads: number,
    opts: { spin?: number; minWork: number; spawnWorker?: SpawnWorker }): Promise<ThreadPool> {
    // one thread on a page without SharedArrayBuffer (no cross-origin isolation): a plain buffer will do
    const ctlBuf = threads > 1 || typeof SharedArrayBuffer === 'function' ? new SharedArrayBuffer(CTL_BYTES) : new ArrayBuffer(CTL_BYTES);
    const ctl = new Int32Array(ctlBuf, 0, CTL_ARGS_BYTE_OFFSET / 4);
    const args = new Float64Array(ctlBuf, CTL_ARGS_BYTE_OFFSET, MAX_ARGS);
    ctl[CTL.SPIN] = opts.spin ?? 2000;
    const workers: WorkerHandle[] = [];
    if (threads > 1) {
      const spawn = opts.spawnWorker ?? (await defaultSpawner());
      for (let tid = 1; tid < threads; tid++) {
        const init: WorkerInit = { module, memory, ctl: ctlBuf as SharedArrayBuffer, tid, threads };
        workers.push(spawn(init));
      }
      try {
        await Promise.all(workers.map((w) => w.ready));
      } catch (e) {
        await Promise.all(workers.map((w) => w.terminate()));
        throw e;
      }
    }
    return new ThreadPool(threads, ctl, args, workers, opts.minWork, kernels);
  }

  /**
   * Runs kernel `op` over [0, n) on all threads (slices of multiples of align), or on the calling thread
   * alone when `work` (about the number of multiply-adds) is too small to pay for a fork/join.
   */
  dispatch(op: number, n: number, align: number, work: number,
    a0 = 0, a1 = 0, a2 = 0, a3 = 0, a4 = 0, a5 = 0, a6 = 0, a7 = 0, a8 = 0, a9 = 0, a10 = 0, a11 = 0, a12 = 0, a13 = 0): void {
    if (this.closed) throw new CpuRuntimeError('CLOSED', 'cpu runtime is closed');
    if (n <= 0) return;
    const fn = this.fns[op]!;
    const T = this.threads;
    if (T === 1 || work < this.minWork || n <= align) {
      fn(0, n, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13);
      return;
    }
    this.publishStatic(op, n, align, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13);
    const r0 = sliceStart(n, T, align, 0), r1 = sliceEnd(n, T, align, 0);
    let err: unknown = null;
    try {
      if (r0 < r1) fn(r0, r1, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13);
    } catch (e) {
      err = e;
    }
    this.waitFor(CTL.DONE, T - 1);
    this.raiseIfFailed(op, err);
  }

  /**
   * dispatch for kernels whose rows do not depend on the range they are given (the matmuls): [0, n) is cut into
   * about CHUNKS_PER_THREAD chunks per thread (multiples of `chunkAlign`), which every thread, the caller
   * included, claims until none is left. A worker that is still waking from Atomics.wait, descheduled, or
   * slower takes fewer chunks instead of holding the op up; the caller waits for the claimed chunks only, and
   * never for an acknowledgement: a worker that wakes after the op is over claims nothing (chunks are claimed
   * under the op's generation tag) and goes on to the newest op. (Waiting for the acknowledgement before the
   * next op was written held the caller for a descheduled worker's whole time slice on a loaded machine.)
   * (The static split waited for its peer's wake-up, tens of us per op once the peer slept, and for the slower
   * of two equal halves.)
   */
  dispatchChunked(op: number, n: number, chunkAlign: number, work: number,
    a0 = 0, a1 = 0, a2 = 0, a3 = 0, a4 = 0, a5 = 0, a6 = 0, a7 = 0, a8 = 0, a9 = 0, a10 = 0, a11 = 0, a12 = 0, a13 = 0): void {
    if (this.closed) throw new CpuRuntimeError('CLOSED', 'cpu runtime is closed');
    const minChunks = this.minChunks;
    this.minChunks = 0;
    if (n <= 0) return;
    const fn = this.fns[op]!;
    const T = this.threads;
    if (T === 1 || work < this.minWork || n <= chunkAlign) {
      fn(0, n, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13);
      return;
    }
    const size = Math.ceil(Math.ceil(n / Math.min(Math.max(T * CHUNKS_PER_THREAD, minChunks), MAX_CHUNKS)) / chunkAlign) * chunkAlign;
    const chunks = Math.ceil(n / size);
    const ctl = this.ctl;
    let g = this.gen + 2;
    // the tag wraps every 2^20 ops: a static no-op first, which every worker must acknowledge, so that no
    // worker still holds the arguments of the op that last had this tag
    if (claimTag(g) === 0) { this.publishStatic(-1, 0, 1); this.waitFor(CTL.DONE, T - 1); g = this.gen + 2; }
    Atomics.store(ctl, CTL.GEN, g - 1);
    this.setArgs(a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13);
    ctl[CTL.OP] = op;
    ctl[CTL.N] = n;
    ctl[CTL.ALIGN] = size;
    ctl[CTL.CHUNKED] = 1;
    const tag = claimTag(g);
    Atomics.store(ctl, CTL.CDONE, 0);
    Atomics.store(ctl, CTL.CLAIM, (tag << CLAIM_BITS) | chunks);
    Atomics.store(ctl, CTL.GEN, g);
    Atomics.notify(ctl, CTL.GEN);
    this.gen = g;
    let err: unknown = null;
    for (let c = claimChunk(ctl, tag); c >= 0; c = claimChunk(ctl, tag)) {
      try {
        fn(c * size, Math.min(n, (c + 1) * size), a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13);
      } catch (e) {
        err ??= e;
      }
      Atomics.add(ctl, CTL.CDONE, 1);
    }
    this.waitFor(CTL.CDONE, chunks);
    this.raiseIfFailed(op, err);
  }

  /**
   * dispatchChunked cut into at least `minChunks` chunks (at most MAX_CHUNKS): the one-token matmuls over big
   * weights (the output head: 16 chunks of ~8 MB left the thread that finished first idle for half a chunk,
   * ~0.5 ms per token)
   */
  dispatchChunkedMin(minChunks: number, op: number, n: number, chunkAlign: number, work: number,
    a0 = 0, a1 = 0, a2 = 0, a3 = 0, a4 = 0, a5 = 0, a6 = 0, a7 = 0, a8 = 0, a9 = 0, a10 = 0, a11 = 0, a12 = 0, a13 = 0): void {
    this.minChunks = minChunks;
    this.dispatchChunked(op, n, chunkAlign, work, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13);
  }

  /** the op's numeric arguments into the control block's argument slots (read by every worker) */
  private setArgs(a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number,
    a7: number, a8: number, a9: number, a10: number, a11: number, a12: number, a13: number): void {
    const args = this.args;
    args[0] = a0; args[1] = a1; args[2] = a2; args[3] = a3; args[4] = a4; args[5] = a5;
    args[6] = a6; args[7] = a7; args[8] = a8; args[9] = a9; args[10] = a10; args[11] = a11; args[12] = a12; args[13] = a13;
  }

  /** after an op: a kernel that threw here or trapped in a worker (ERR) becomes KERNEL_FAILED */
  private raiseIfFailed(op: number, err: unknown): void {
    const ctl = this.ctl;
    if (!err && !ctl[CTL.ERR]) return;
    ctl[CTL.ERR] = 0;
    throw new CpuRuntimeError('KERNEL_FAILED', `kernel ${KERNEL_NAMES[op]} failed${err ? ': ' + (err as Error).message : ' in a worker'}`);
  }

  /** publishes a static op (op -1: none, only acknowledged); its caller waits for DONE == threads - 1 */
  private publishStatic(op: number, n: number, align: number,
    a0 = 0, a1 = 0, a2 = 0, a3 = 0, a4 = 0, a5 = 0, a6 = 0, a7 = 0, a8 = 0, a9 = 0, a10 = 0, a11 = 0, a12 = 0, a13 = 0): void {
    const ctl = this.ctl, g = this.gen + 2;
    Atomics.store(ctl, CTL.GEN, g - 1);
    this.setArgs(a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13);
    ctl[CTL.OP] = op;
    ctl[CTL.N] = n;
    ctl[CTL.ALIGN] = align;
    ctl[CTL.ACTIVE] = this.threads;
    ctl[CTL.CHUNKED] = 0;
    Atomics.store(ctl, CTL.DONE, 0);
    Atomics.store(ctl, CTL.GEN, g);
    Atomics.notify(ctl, CTL.GEN);
    this.gen = g;
  }

  /** spins, then (where this thread may block) Atomics.waits, until ctl[slot] == want */
  private waitFor(slot: number, want: number): void {
    const ctl = this.ctl;
    let d = Atomics.load(ctl, slot);
    if (d === want) return;
    const spin = ctl[CTL.SPIN]!;
    for (let i = 0; i < spin && d !== want; i++) d = Atomics.load(ctl, slot);
    while (d !== want) {
      if (this.blocking) Atomics.wait(ctl, slot, d, 100);
      d = Atomics.load(ctl, slot);
    }
  }

  /** runs kernel `op` on the calling thread alone (e.g. an in-place pass that must not be split) */
  runHere(op: number, r0: number, r1: number, ...a: number[]): void {
    if (this.closed) throw new CpuRuntimeError('CLOSED', 'cpu runtime is closed');
    this.fns[op]!(r0, r1, ...a);
  }
  /** runHere with up to 8 arguments and no rest array (allocation-free, for calls while decoding) */
  runHere8(op: number, r0: number, r1: number, a0 = 0, a1 = 0, a2 = 0, a3 = 0, a4 = 0, a5 = 0, a6 = 0, a7 = 0): void {
    if (this.closed) throw new CpuRuntimeError('CLOSED', 'cpu runtime is closed');
    this.fns[op]!(r0, r1, a0, a1, a2, a3, a4, a5, a6, a7);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const g = this.gen + 2;
    Atomics.store(this.ctl, CTL.GEN, g - 1);
    Atomics.store(this.ctl, CTL.STOP, 1);
    Atomics.store(this.ctl, CTL.GEN, g);
    Atomics.notify(this.ctl, CTL.GEN);
    this.gen = g;
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}
