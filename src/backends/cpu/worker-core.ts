// The worker side of the thread pool, free of platform imports: instantiate the kernels over the shared
// memory, then loop: wait for the generation counter to move (spin briefly, then Atomics.wait), run this
// thread's slice of the op (a chunked op: claim chunks until none is left), count itself done (the last one
// wakes the main thread).
import { CTL, CTL_ARGS_BYTE_OFFSET, KERNEL_NAMES, MAX_ARGS, claimChunk, kernelExports, sliceEnd, sliceStart, type KernelFn } from './runtime/protocol.js';

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
    seen = g;
    if (ctl[CTL.STOP]) return;
    if (ctl[CTL.CHUNKED]) {
      const fn = fns[ctl[CTL.OP]!]!, n = ctl[CTL.N]!, size = ctl[CTL.ALIGN]!;
      for (let c = claimChunk(ctl); c >= 0; c = claimChunk(ctl)) {
        try {
          fn(c * size, Math.min(n, (c + 1) * size), a[0]!, a[1]!, a[2]!, a[3]!, a[4]!, a[5]!, a[6]!, a[7]!, a[8]!, a[9]!, a[10]!, a[11]!, a[12]!, a[13]!);
        } catch {
          Atomics.store(ctl, CTL.ERR, 1);
        }
        // the caller may be waiting for the last chunk
        if (Atomics.add(ctl, CTL.CDONE, 1) === Math.ceil(n / size) - 1) Atomics.notify(ctl, CTL.CDONE);
      }
    } else if (tid < ctl[CTL.ACTIVE]!) {
      const n = ctl[CTL.N]!, align = ctl[CTL.ALIGN]!, active = ctl[CTL.ACTIVE]!;
      const r0 = sliceStart(n, active, align, tid), r1 = sliceEnd(n, active, align, tid);
      if (r0 < r1) {
        try {
          fns[ctl[CTL.OP]!]!(r0, r1, a[0]!, a[1]!, a[2]!, a[3]!, a[4]!, a[5]!, a[6]!, a[7]!, a[8]!, a[9]!, a[10]!, a[11]!, a[12]!, a[13]!);
        } catch {
          Atomics.store(ctl, CTL.ERR, 1);
        }
      }
    }
    if (Atomics.add(ctl, CTL.DONE, 1) === init.threads - 2) Atomics.notify(ctl, CTL.DONE);
  }
}
