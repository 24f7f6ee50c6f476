// CPU runtime: WebAssembly SIMD kernels (SIMD128 or relaxed-SIMD build) on worker threads sharing one memory.
export { createCpuRuntime, CpuRuntimeError, CpuLayout, activationTypeFor, activationRowBytes, weightRowBytes, MATMUL_TYPES } from './runtime.js';
export type { CpuRuntime, CpuArena, CpuRuntimeOptions, GgmlAttentionArgs, RopeArgs } from './runtime.js';
export { compileKernels, kernelWasmBytes, relaxedSimdAvailable, type KernelVariant } from './wasm.js';
export { KERNEL_NAMES, type KernelName, type KernelExports } from './runtime/protocol.js';
export type { SpawnWorker, WorkerHandle } from './workers.js';
// Node-only helpers live in ./node-io.js (file reads) and ./node-flags.js (enableRelaxedSimd) and are not re-exported here.
