// The kernel table shared by the main thread and the workers: an op is dispatched by its index here.
// Every kernel takes the half-open range [r0, r1) it must compute as its first two arguments, then up to
// MAX_ARGS more (pointers, sizes, strides and scalars), all passed as numbers.

export const KERNEL_NAMES = [
  'cvt_f32_f16', 'cvt_f16_f32', 'round_f16',
  'quantize_q8_0', 'quantize_q8_1', 'quantize_q8_K', 'q8_0_aux', 'q8_1_aux', 'q8_K_aux',
  'mm_q4_0', 'mm_q4_0x4', 'repack_q4_0x4', 'mm_q4_0r4', 'repack_q4_0r4', 'mm_q4_1', 'mm_q5_0', 'mm_q5_1', 'mm_q8_0',
  'mm_q2_K', 'mm_q3_K', 'mm_q4_K', 'mm_q5_K', 'mm_q6_K', 'mm_f32', 'mm_f16', 'mm_bf16', 'round_bf16', 'mm_iq4_nl', 'mm_iq4_xs',
  'mmf_q8_0', 'mmf_q8_0r4', 'repack_r4', 'mmf_q4_0r4', 'mmf_q4_K',
  'rms_norm', 'layer_norm', 'add_row', 'mul_row', 'softmax', 'rope', 'silu', 'silu_mul', 'gelu', 'add', 'mul', 'scale', 'attn_f16', 'attn_ggml', 'attn_kv_f32',
] as const;
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
} as const;
export const CTL_INTS = 16;
export const CTL_ARGS_BYTE_OFFSET = CTL_INTS * 4;
export const CTL_BYTES = CTL_ARGS_BYTE_OFFSET + MAX_ARGS * 8;

/** Thread tid of `active` computes [sliceStart, sliceEnd) of n, slices being multiples of align (no allocation). */
export function sliceStart(n: number, active: number, align: number, tid: number): number {
  return Math.min(n, tid * Math.ceil(n / active / align) * align);
}
export function sliceEnd(n: number, active: number, align: number, tid: number): number {
  return Math.min(n, (tid + 1) * Math.ceil(n / active / align) * align);
}
