// The thread pool's protocol, shared by the main thread and the workers (no platform imports): the kernel
// table (an op is dispatched by its index here), the control block layout, row slicing.
// Every kernel takes the half-open range [r0, r1) it must compute as its first two arguments, then up to
// MAX_ARGS more (pointers, sizes, strides and scalars), all passed as numbers. KERNEL_NAMES is generated from
// the compiled module's exports (scripts/build-kernels.mjs), so the table is never kept by hand.
import { KERNEL_NAMES } from '../kernel-abi.gen.js';
export { KERNEL_NAMES };

export type KernelName = (typeof KERNEL_NAMES)[number];
export const MAX_ARGS = 14;

export type KernelFn = (r0: number, r1: number, ...args: number[]) => void;
export type KernelExports = Record<KernelName, KernelFn>;

export const KERNEL_INDEX: Record<KernelName, number> = Object.fromEntries(KERNEL_NAMES.map((n, i) => [n, i])) as Record<KernelName, number>;

/** Picks the kernels out of an instance's exports, checking that every one is there. */
export function kernelExports(exports: WebAssembly.Exports): KernelExports {
  const out: Partial<KernelExports> = {};
  for (const name of KERNEL_NAMES) {
    const f = exports[name];
    if (typeof f !== 'function') throw new Error(`kernel module lacks export ${name}`);
    out[name] = f as KernelFn;
  }
  return out as KernelExports;
}

// Control block layout (Int32 slots of a SharedArrayBuffer, separate from the wasm memory)
export const CTL = {
  GEN: 0, // bumped by the main thread to start an op
  DONE: 1, // workers that finished the current op
  OP: 2, // kernel index
  N: 3, // size of the split dimension
  ALIGN: 4, // slices are multiples of this
  STOP: 5, // workers exit when set
  ERR: 6, // set by a worker whose kernel threw
  SPIN: 7, // spin iterations before Atomics.wait
  ACTIVE: 8, // threads taking part in the current op (tid < ACTIVE)
  CHUNKED: 9, // 1: the op's rows are cut into chunks of ALIGN rows, claimed from CLAIM; 0: static slices
  CLAIM: 10, // chunked ops: chunks not yet claimed (claimed from the last one down; < 0 once all are)
  CDONE: 11, // chunked ops: chunks finished
} as const;
export const CTL_INTS = 16;
export const CTL_ARGS_BYTE_OFFSET = CTL_INTS * 4;
export const CTL_BYTES = CTL_ARGS_BYTE_OFFSET + MAX_ARGS * 8;

/** Claims one chunk of the current chunked op: its index, or -1 when all are claimed. */
export function claimChunk(ctl: Int32Array): number {
  const left = Atomics.sub(ctl, CTL.CLAIM, 1);
  return left > 0 ? left - 1 : -1;
}

/** Thread tid of `active` computes [sliceStart, sliceEnd) of n, slices being multiples of align (no allocation). */
export function sliceStart(n: number, active: number, align: number, tid: number): number {
  return Math.min(n, tid * Math.ceil(n / active / align) * align);
}
export function sliceEnd(n: number, active: number, align: number, tid: number): number {
  return Math.min(n, (tid + 1) * Math.ceil(n / active / align) * align);
}
