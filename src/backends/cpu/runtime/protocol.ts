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
  GEN: 0, // the op's generation, even when published; odd while the main thread writes the next op's fields
  DONE: 1, // workers that finished the current op
  OP: 2, // kernel index
  N: 3, // size of the split dimension
  ALIGN: 4, // slices are multiples of this
  STOP: 5, // workers exit when set
  ERR: 6, // set by a worker whose kernel threw
  SPIN: 7, // spin iterations before Atomics.wait
  ACTIVE: 8, // threads taking part in the current op (tid < ACTIVE)
  CHUNKED: 9, // 1: the op's rows are cut into chunks of ALIGN rows, claimed from CLAIM; 0: static slices
  CLAIM: 10, // chunked ops: (claimTag(GEN) << CLAIM_BITS) | chunks not yet claimed (claimed from the last one down)
  CDONE: 11, // chunked ops: chunks finished
} as const;
export const CTL_INTS = 16;
export const CTL_ARGS_BYTE_OFFSET = CTL_INTS * 4;
export const CTL_BYTES = CTL_ARGS_BYTE_OFFSET + MAX_ARGS * 8;

/** chunks of one op fit CLAIM's low CLAIM_BITS bits; the generation's tag the rest */
export const CLAIM_BITS = 11;
export const MAX_CHUNKS = (1 << CLAIM_BITS) - 1;
/** the tag of generation gen in CLAIM: a thread holding an older op's arguments never claims a newer op's chunk */
export function claimTag(gen: number): number {
  return (gen >>> 1) & ((1 << (31 - CLAIM_BITS)) - 1);
}
/** Claims one chunk of the chunked op tagged `tag`: its index, or -1 when all are claimed or that op is over. */
export function claimChunk(ctl: Int32Array, tag: number): number {
  for (;;) {
    const c = Atomics.load(ctl, CTL.CLAIM), left = c & MAX_CHUNKS;
    if (c >>> CLAIM_BITS !== tag || left === 0) return -1;
    if (Atomics.compareExchange(ctl, CTL.CLAIM, c, c - 1) === c) return left - 1;
  }
}

/** Thread tid of `active` computes [sliceStart, sliceEnd) of n, slices being multiples of align (no allocation). */
export function sliceStart(n: number, active: number, align: number, tid: number): number {
  return Math.min(n, tid * Math.ceil(n / active / align) * align);
}
export function sliceEnd(n: number, active: number, align: number, tid: number): number {
  return Math.min(n, (tid + 1) * Math.ceil(n / active / align) * align);
}
