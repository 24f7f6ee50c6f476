// The worker side of the thread pool, free of platform imports: instantiate the kernels over the shared
// memory, then loop: wait for the generation counter to move (spin briefly, then Atomics.wait), copy the op's
// fields and check that the generation did not move meanwhile (a seqlock: the main thread makes it odd while it
// writes), run this thread's slice of the op (a chunked op: claim chunks of that generation until none is
// left) and, for a static op, count itself done (the last one wakes the main thread). A worker that wakes
// after a chunked op is over finds nothing to claim and goes on to the newest op: the main thread never
// waits for it to acknowledge a chunked op.
import { CTL, CTL_ARGS_BYTE_OFFSET, KERNEL_NAMES, MAX_ARGS, claimChunk, claimTag, kernelExports, sliceEnd, sliceStart, type KernelFn } from './runtime/protocol.js';

export interface WorkerInit {
  module: WebAssembly.Module;
  memory: WebAssembly.Memory;
  ctl: SharedArrayBuffer;
  tid: number;
  threads: number;
}

export async function workerMain(init: WorkerInit, ready: () => void): Promise<void> {
  const instance = await WebAssembly.instantiate(init.module, { env: { memory: init.memory } });
  const k = kernelExports(instance.exports);
  const fns: KernelFn[] = KERNEL_NAMES.map((n) => k[n]);
  const ctl = new Int32Array(init.ctl, 0, CTL_ARGS_BYTE_OFFSET / 4);
  const a = new Float64Array(init.ctl, CTL_ARGS_BYTE_OFFSET, MAX_ARGS);
  const tid = init.tid;
  let seen = Atomics.load(ctl, CTL.GEN);
  ready();
  for (;;) {
    let g = Atomics.load(ctl, CTL.GEN);
    if (g === seen) {
      const spin = ctl[CTL.SPIN]!;
      for (let i = 0; i < spin && g === seen; i++) g = Atomics.load(ctl, CTL.GEN);
      while (g === seen) {
        Atomics.wait(ctl, CTL.GEN, seen);
        g = Atomics.load(ctl, CTL.GEN);
      }
    }
    if (g & 1) continue; // the main thread is writing the next op
    const stop = ctl[CTL.STOP]!, chunked = ctl[CTL.CHUNKED]!, op = ctl[CTL.OP]!, n = ctl[CTL.N]!, align = ctl[CTL.ALIGN]!, active = ctl[CTL.ACTIVE]!;
    const a0 = a[0]!, a1 = a[1]!, a2 = a[2]!, a3 = a[3]!, a4 = a[4]!, a5 = a[5]!, a6 = a[6]!, a7 = a[7]!, a8 = a[8]!, a9 = a[9]!, a10 = a[10]!, a11 = a[11]!, a12 = a[12]!, a13 = a[13]!;
    if (Atomics.load(ctl, CTL.GEN) !== g) continue; // a newer op was written meanwhile: read that one
    seen = g;
    if (stop) return;
    if (chunked) {
      const fn = fns[op]!, tag = claimTag(g), chunks = Math.ceil(n / align);
      for (let c = claimChunk(ctl, tag); c >= 0; c = claimChunk(ctl, tag)) {
        try {
          fn(c * align, Math.min(n, (c + 1) * align), a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13);
        } catch {
          Atomics.store(ctl, CTL.ERR, 1);
        }
        // the caller may be waiting for the last chunk
        if (Atomics.add(ctl, CTL.CDONE, 1) === chunks - 1) Atomics.notify(ctl, CTL.CDONE);
      }
      continue;
    }
    if (op >= 0 && tid < active) {
      const r0 = sliceStart(n, active, align, tid), r1 = sliceEnd(n, active, align, tid);
      if (r0 < r1) {
        try {
          fns[op]!(r0, r1, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13);
        } catch {
          Atomics.store(ctl, CTL.ERR, 1);
        }
      }
    }
    if (Atomics.add(ctl, CTL.DONE, 1) === init.threads - 2) Atomics.notify(ctl, CTL.DONE);
  }
}
