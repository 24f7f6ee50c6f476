// The `cpu` device: weights, KV cache and activations live in one shared WebAssembly.Memory; hot
// ops run as WASM SIMD128 kernels split across worker threads (runtime.ts). Ops without a WASM kernel
// reproducing the reference's numerics (policy.ts) run the reference kernels directly on views of the
// same memory, so the device supports every op and nothing is copied. Each split is compiled once per
// plan (compile.ts: bounds checks, then runners with everything bound); buffers are ranges of the
// runtime's memory that free() returns for reuse (buffer.ts).
import type { Backend, ComputeContext, Device, Placement } from '../backend.js';
import { cpuBufferType, type CpuBuffer } from './buffer.js';
import { Compiler, type Program } from './compile.js';
import { repackTarget } from './policy.js';
import { profileEnabled } from './profile.js';
import { createCpuRuntime, type CpuRuntime, type CpuRuntimeOptions } from './runtime.js';
import { resolveNumerics } from '../numerics.js';

export type { CpuBuffer } from './buffer.js';
export { LLAMA_EXACT_MATMUL_TYPES } from '../ggml-routing.js';

export interface CpuDeviceOptions extends CpuRuntimeOptions {
  /**
   * Default: DEFAULT_NUMERICS (src/backends/numerics.ts). 'fast': free-order kernels for Q8_0, Q4_0 (4-row layout for any rows % 4 == 0) and the Q4_K
   * GEMV, several rows per pass and plain f32 multiply-adds; every parity fixture passes under the
   * reference's rule and tolerances (test/parity/cpu.test.ts). 'exact': matmuls with the weight types
   * whose llama.cpp order is known (LLAMA_EXACT_MATMUL_TYPES) reproduce the reference backend bit for bit
   * (Q4_0/Q4_K with rows % 8 != 0 run the reference kernel). Either way the other types use their WASM
   * kernels (agreeing with the reference's generic formulas to float rounding).
   */
  numerics?: 'exact' | 'fast';
}

export async function createCpuDevice(opts: CpuDeviceOptions = {}): Promise<Device & { runtime: CpuRuntime; close(): Promise<void> }> {
  const fastNumerics = resolveNumerics(opts.numerics) === 'fast';
  const rt = await createCpuRuntime({ ...opts, numerics: fastNumerics ? 'fast' : 'exact' });
  const bt = cpuBufferType(rt);
  const compiler = new Compiler(rt, fastNumerics, profileEnabled());
  const ptrOf = (p: Placement) => (p.buffer as CpuBuffer).ptr + p.offset;

  /** Compiled node runners per split (its node list and placement are fixed for the plan's lifetime). */
  const programs = new WeakMap<readonly number[], Program>();
  function program(ctx: ComputeContext, nodes: readonly number[]): Program {
    let prog = programs.get(nodes);
    // views made at compile time are over memory.buffer as it was: recompile when the memory grew
    if (prog && prog.placement === ctx.placement && prog.bytes === rt.memory.buffer.byteLength) return prog;
    prog = compiler.program(ctx.graph, nodes, ctx.placement);
    programs.set(nodes, prog);
    return prog;
  }

  const device: Device & { runtime: CpuRuntime; close(): Promise<void> } = {
    name: 'cpu',
    kind: 'cpu',
    description: `WebAssembly ${rt.simd === 'relaxed' ? 'relaxed SIMD' : 'SIMD128'} kernels on ${rt.threads} thread${rt.threads === 1 ? '' : 's'}, ${fastNumerics ? 'fast' : 'exact'} numerics`,
    runtime: rt,
    memory: () => ({ free: rt.maxBytes - rt.liveBytes(), total: rt.maxBytes }),
    bufferType: () => bt,
    supportsOp: () => true,
    multiSequence: true,
    flashAttention: 'supported',
    prefersOp: () => true,
    createBackend(): Backend {
      return {
        device,
        compute(ctx: ComputeContext, nodes: readonly number[]) {
          const run = program(ctx, nodes).run;
          for (let i = 0; i < run.length; i++) run[i]!();
        },
        // plan time: compile the split's node runners (and size the runtime's scratch for its shape)
        prepare(ctx: ComputeContext, nodes: readonly number[]) { program(ctx, nodes); },
      };
    },
    close: () => rt.close(),
    /** repacks the weights policy.ts names, in place (Q4_0r4 / Q8_0r4) */
    prepareWeight(placement: Placement, type: number, dims: readonly number[]): number {
      const cols = dims[0]!, rows = dims.slice(1).reduce((a, b) => a * b, 1);
      if (!(placement.buffer as Partial<CpuBuffer>).ptr) return type;
      // a 3-D weight (MoE experts) is repacked only when 4-row groups stay within one expert's matrix
      const target = repackTarget(type, dims.length > 2 ? dims[1]! : rows, fastNumerics);
      return target === null ? type : rt.repackRows4(ptrOf(placement), rows, cols, target);
    },
  };
  return device;
}
