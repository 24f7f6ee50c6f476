// CPU runtime: WebAssembly SIMD128 kernels on worker threads sharing one memory.
export { createCpuRuntime, CpuRuntimeError, CpuLayout, activationTypeFor, activationRowBytes, weightRowBytes, MATMUL_TYPES } from './runtime.js';
export type { CpuRuntime, CpuArena, CpuRuntimeOptions, AttentionArgs, RopeArgs } from './runtime.js';
export { compileKernels, kernelWasmBytes } from './wasm.js';
export { KERNEL_NAMES, type KernelName, type KernelExports } from './ops.js';
export type { SpawnWorker, WorkerHandle } from './workers.js';
// Node-only helpers (file reads) live in ./node-io.js and are not re-exported here.
