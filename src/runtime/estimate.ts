// What a run of a model needs, from its header alone (nothing loaded): parameter count, the weight type
// mix, and memory — weights, the KV cache at a context size, recurrent state, and the compute arena. The KV
// and state come from the model's own graph (its 'state' leaves: a leaf whose size grows with the context is
// KV, one that does not is recurrent state), so a new architecture's caches are counted without a table;
// the arena is the scheduler's plan for the worst cases a Context reserves (decode, a full batch).
import { tensorBytes, type Device } from '../backends/backend.js';
import { ggmlTypeName, rowBytes } from '../gguf/ggml-types.js';
import { metaString, type GgufFile } from '../gguf/reader.js';
import { type Graph } from '../graph/graph.js';
import { isQuantizedKv, type KvType } from '../graph/kv-type.js';
import { readHParams } from '../models/hparams.js';
import { archSpec, supportedArchitectures } from '../models/index.js';
import { GgufError } from '../gguf/errors.js';
import { buildTransformer, type WeightInfo } from '../models/transformer.js';
import { validateTensors } from '../models/validate.js';
import { Scheduler, type PlanKey } from '../sched/scheduler.js';
import { swaRingShape } from './swa-ring.js';

export interface TypeShare { type: string; tensors: number; params: number; bytes: number }

export interface ModelSummary {
  params: number;
  weight_bytes: number;
  /** by bytes, largest first */
  types: TypeShare[];
}

export interface MemoryEstimate {
  n_ctx: number;
  n_batch: number;
  kv_type: KvType;
  weights: number;
  /** every KV cache: the full layers' (n_ctx rows) and the sliding-window rings */
  kv: number;
  /** what one more token of context adds (the full layers' rows; a ring does not grow) */
  kv_bytes_per_token: number;
  /** the sliding-window layers' rings, part of kv (0: no rings: no sliding-window layers, swa_full, or nothing saved) */
  kv_swa_ring: number;
  /** the rings' shape: rows per sequence (the period, window + n_batch padded to 256, then the window mirrored) */
  swa_ring: { window: number; period: number; rows: number } | null;
  /** what the sliding-window layers would take as full caches instead (0 without sliding-window layers) */
  kv_swa_full: number;
  /** recurrent state (bytes that do not grow with the context) */
  state: number;
  /** the compute arena on `device` for decode and an n_batch prefill */
  arena: number;
  total: number;
}

export function summarize(f: GgufFile): ModelSummary {
  const by = new Map<number, TypeShare>();
  let params = 0, bytes = 0;
  for (const t of f.tensors) {
    const s = by.get(t.type) ?? { type: ggmlTypeName(t.type), tensors: 0, params: 0, bytes: 0 };
    s.tensors++; s.params += t.nElements; s.bytes += t.nBytes;
    by.set(t.type, s);
    params += t.nElements; bytes += t.nBytes;
  }
  return { params, weight_bytes: bytes, types: [...by.values()].sort((a, b) => b.bytes - a.bytes) };
}

const stateSizes = (g: Graph) => new Map(g.tensors.filter((t) => t.role === 'state').map((t) => [t.name, tensorBytes(t, rowBytes)]));

/**
 * The memory a run with `nCtx` / `nBatch` needs. Throws the loader's typed errors for a model it cannot run
 * (unsupported architecture, bad hyperparameters or tensors).
 */
export function estimateMemory(f: GgufFile, o: { nCtx: number; nBatch?: number; kvType?: KvType; device: Device; swaFull?: boolean }): MemoryEstimate {
  const arch = metaString(f, 'general.architecture');
  const spec = arch !== undefined ? archSpec(arch) : undefined;
  if (!spec) throw new GgufError('UNSUPPORTED_ARCH', `architecture "${arch ?? '(none)'}" is not supported (supported: ${supportedArchitectures.join(', ')})`, f.name, undefined, { key: 'general.architecture', found: arch });
  const hp = readHParams(f);
  validateTensors(f, hp); // the loader's checks: a model a run would refuse gets no estimate
  const kvType = o.kvType ?? 'f16';
  const nCtx = o.nCtx;
  const nBatch = Math.max(1, Math.min(Math.floor(o.nBatch ?? 512), nCtx));
  const weights = new Map<string, WeightInfo>(f.tensors.map((t) => [t.name, { dtype: t.type, dims: t.dims }]));
  // the ring a Context on a host device makes (src/runtime/context.ts: one sequence)
  const shape = o.swaFull || !hp.swaLayers.some((x) => x) ? undefined : swaRingShape(hp.slidingWindow, nBatch, nCtx);
  const ring = shape ? { swaRing: { rows: shape.stride } } : {};
  const graph = (nTokens: number, nOutputs: number, ctx = nCtx) => buildTransformer(spec, hp, weights, { nTokens, nOutputs, nCtx: ctx, kvType, flashAttn: isQuantizedKv(kvType), ...ring });
  const decode = graph(1, 1);
  const at = stateSizes(decode);
  const next = stateSizes(graph(1, 1, nCtx + 1));
  const ringLeaves = new Set<string>();
  if (decode.inputs.swaRows !== undefined) for (const t of decode.tensors) if (t.op === 'kv_store' && t.src[2] === decode.inputs.swaRows) ringLeaves.add(decode.tensors[t.src[0]!]!.name);
  let kv = 0, perToken = 0, state = 0, kvRing = 0, kvRingFull = 0;
  for (const [name, n] of at) {
    const grow = (next.get(name) ?? n) - n;
    if (ringLeaves.has(name)) { kv += n; kvRing += n; kvRingFull += (n / shape!.stride) * nCtx; } else if (grow > 0) { kv += n; perToken += grow; } else state += n;
  }
  // without rings, what the sliding-window layers' full caches take (for the report's comparison)
  if (!shape && hp.slidingWindow > 0) {
    const seen = new Set<string>();
    for (const t of decode.tensors) {
      if (t.op !== 'attention' || !(t.params.window as number > 0)) continue;
      for (const c of [decode.tensors[t.src[1]!]!, decode.tensors[t.src[2]!]!]) if (!seen.has(c.name)) { seen.add(c.name); kvRingFull += at.get(c.name) ?? 0; }
    }
  }
  const dev = o.device;
  const sched = new Scheduler({ devices: [dev], weights: { get: () => ({ device: dev, placement: { buffer: undefined as never, offset: 0, nBytes: 0 } }) } });
  const worst: { graph: Graph; key: PlanKey }[] = [{ graph: decode, key: { phase: 'decode', nTokens: 1, nOutputs: 1, accel: false } }];
  if (nBatch > 1) {
    worst.push({ graph: graph(nBatch, nBatch), key: { phase: 'prefill', nTokens: nBatch, nOutputs: nBatch, accel: false } });
    worst.push({ graph: graph(nBatch, nBatch - 1), key: { phase: 'prefill', nTokens: nBatch, nOutputs: nBatch - 1, accel: false } });
  }
  const arena = [...sched.reserve(worst, true).values()].reduce((a, b) => a + b, 0);
  const w = summarize(f).weight_bytes;
  return {
    n_ctx: nCtx, n_batch: nBatch, kv_type: kvType, weights: w, kv, kv_bytes_per_token: perToken, kv_swa_ring: kvRing,
    swa_ring: shape ? { window: shape.window, period: shape.period, rows: shape.stride } : null, kv_swa_full: kvRingFull,
    state, arena, total: w + kv + state + arena,
  };
}
