// The `sim-npu` device as the registry creates it: the device (./device.ts) on the mock NPU runtime
// (../npu/mock-runtime.ts) with our engine encoder (../npu/encoder.ts). A driver binding for a real
// card would be wired here instead of the mock; the device code stays as it is.
import type { Op } from '../../graph/graph.js';
import { encodeGroupEngine, type NpuTarget as EncoderTarget } from '../npu/encoder.js';
import { createMockNpuRuntime } from '../npu/mock-runtime.js';
import { DEFAULT_NPU_TARGET, npuTarget } from './cost-model.js';
import { createSimNpuDevice, type EngineCache, type SimNpuDevice } from './device.js';

export { createSimNpuDevice } from './device.js';
export { NPU_TARGETS, DEFAULT_NPU_TARGET } from './cost-model.js';

/** --npu-mem's default: the 8 GB AX-M1 card's CMM as axcl-smi reports it. */
export const DEFAULT_NPU_MEM_MIB = 7040;

export interface SimNpuCreateOptions {
  /** cost-model preset and encoder target (--npu-target; default ax8850) */
  npuTarget?: string;
  /** device memory capacity in MiB (--npu-mem; default 7040) */
  npuMemMiB?: number;
  /** threads of the mock runtime's kernels */
  threads?: number;
  /** ops the device pretends to lack (tests of the group fallback) */
  disabledOps?: readonly Op[];
  /** compiled-engine cache (Node: ./disk-cache.ts) */
  cache?: EngineCache;
  name?: string;
}

export async function createSimNpu(o: SimNpuCreateOptions = {}): Promise<SimNpuDevice> {
  const target = npuTarget(o.npuTarget ?? DEFAULT_NPU_TARGET);
  const mib = o.npuMemMiB ?? DEFAULT_NPU_MEM_MIB;
  if (!(mib > 0) || !Number.isFinite(mib)) throw Object.assign(new Error(`--npu-mem must be a positive number of MiB, got ${o.npuMemMiB}`), { code: 'USAGE' });
  // GGUF_EDGE_NPU_CACHE=DIR: compiled engines kept on disk between runs (Node only)
  const cacheDir = (globalThis as { process?: { env: Record<string, string | undefined> } }).process?.env.GGUF_EDGE_NPU_CACHE;
  const cache = o.cache ?? (cacheDir ? (await import('./disk-cache.js')).diskEngineCache(cacheDir) : undefined);
  const runtime = await createMockNpuRuntime({ capacityBytes: Math.floor(mib * 2 ** 20), threads: o.threads });
  const dev = createSimNpuDevice({
    runtime, target: target.name, disabledOps: o.disabledOps, cache, name: o.name,
    encode: (req, t) => encodeGroupEngine(req, t as EncoderTarget),
  });
  const closeDevice = dev.close;
  dev.close = async () => { await closeDevice(); await runtime.close(); };
  return dev;
}
