// The `sim-npu` device: whole transformer layers as compiled engines on an NPU, reached only through
// the vendor-shaped runtime interface (../npu/runtime-api.ts). With the mock runtime it is a
// simulated NPU (engines executed in software, time from ./cost-model.ts); a binding to a real
// driver would replace the runtime without touching this file.
//
// Life of a model on it: the scheduler asks claimGroups() for the layer groups ('blk.N', 'output'),
// checks supportsOp() for every node (a table built once), reserve()s weights/KV/scratch, and
// compileGroup()s each group at each static shape (1 = decode, 128 = a prefill chunk) at load. An
// engine holds its own int8 copy of the group's weights (holdsWeight). compute() runs the engines of
// the nodes it is given, binding their inputs and outputs to this device's buffers, which live in
// device memory (never host-visible: set/get/copyTo go through memcpy).

import type { Backend, BufferType, BufferUsage, CompileRequest, ComputeContext, Device, DeviceBuffer, DeviceDescription, DeviceEvent, DeviceMemory, MemoryReservation, NodeGroup, Placement } from '../backend.js';
import { DeviceError } from '../backend.js';
import type { Graph, Op } from '../../graph/graph.js';
import type { Phase } from '../backend.js';
import { ggmlTypeName } from '../../gguf/ggml-types.js';
import type { DevicePtr, EngineHandle, NpuContext, NpuRuntime, NpuStream } from '../npu/runtime-api.js';
import { NpuRuntimeError } from '../npu/runtime-api.js';
import { callCost, DEFAULT_NPU_TARGET, groupWork, layerGroups, npuTarget, predictGraph, transferSeconds, type NpuTarget } from './cost-model.js';
import { buildOpTable, type OpTable } from './op-table.js';

/** A compiled engine blob and the graph tensor ids bound to its inputs and outputs, in engine I/O order. */
export interface EncodedEngine {
  blob: Uint8Array;
  inputIds: number[];
  outputIds: number[];
}

/** The engine encoder (src/backends/npu/encoder.ts encodeGroupEngine): one group at one static shape -> one blob. */
export type GroupEncoder = (req: CompileRequest, target: string) => EncodedEngine;

/** Where compiled blobs are kept between runs (keyed by a hash of everything that went into them). */
export interface EngineCache {
  key(parts: (string | Uint8Array)[]): string;
  get(key: string): EncodedEngine | undefined;
  put(key: string, e: EncodedEngine): void;
}

export interface SimNpuOptions {
  runtime: NpuRuntime;
  encode: GroupEncoder;
  /** cost-model preset and the target the encoder writes for (default ax8850) */
  target?: string;
  deviceId?: number;
  /** ops withheld from the claim table (a device lacking an op; tests of the fallback) */
  disabledOps?: readonly Op[];
  /** ops and weight types the encoder can encode (default: the whole NPU op set, Q8_0 and Q4_0) */
  ops?: readonly Op[];
  weightTypes?: readonly number[];
  cache?: EngineCache;
  /** device name (default 'sim-npu') */
  name?: string;
}

/** Simulated time and traffic since the device was created (or since resetStats()). */
export interface SimNpuStats {
  /** simulated seconds: engines + host-link copies + crossings */
  seconds: number;
  engineSeconds: number;
  transferSeconds: number;
  /** wall seconds spent in this device's computes and copies (what the simulated seconds replace) */
  wallSeconds: number;
  engineCalls: number;
  computes: number;
  bytesToDevice: number;
  bytesFromDevice: number;
}

export interface SimNpuDevice extends Device {
  readonly target: NpuTarget;
  readonly runtime: NpuRuntime;
  stats(): SimNpuStats;
  resetStats(): void;
  /** Simulated seconds one compute of `nodes` (whole groups of `g`) takes on this device, without running it. */
  estimateSeconds(g: Graph, nodes: readonly number[]): number;
  /** Simulated seconds of one evaluation of `g` with every layer group here (the phase policy's figure). */
  estimateGraph(g: Graph): number;
  /** The scheduler's cost hook: estimateSeconds of `nodes`, or estimateGraph of the whole graph. */
  estimate(phase: Phase, g: Graph, nodes?: readonly number[]): number;
  /** Simulated seconds of one host<->device copy of `bytes` (0 on shared memory). */
  transferSeconds(bytes: number, direction?: 'in' | 'out'): number;
  createBackend(): SimNpuBackend;
  close(): Promise<void>;
}

export interface SimNpuBackend extends Backend {
  /** binds `nodes` to their engines and device pointers once (plan time), so compute allocates nothing */
  prepare(ctx: ComputeContext, nodes: readonly number[]): void;
  release(nodes: readonly number[]): void;
  /** simulated seconds of the last compute/submit: its engine calls, plus the crossing once synchronized (a compute, or a submit's wait); copies are charged as they happen */
  lastSimulatedSeconds(): number;
}

interface NpuBuffer extends DeviceBuffer {
  readonly ptr: DevicePtr;
  readonly npu: NpuContext;
}

interface LoadedEngine {
  handle: EngineHandle;
  inputs: number[];
  outputs: number[];
  seconds: number;
  group: string;
  /** which weights it holds (weightPrint) */
  print: string;
}

/**
 * A cheap fingerprint of a group's weights (names, sizes, and bytes sampled at 16 places each): the
 * device is shared by every model of the process, and two models of the same shape have engines of the
 * same structure. A compile with other weights replaces the engine (the last model loaded runs).
 */
function weightPrint(g: Graph, nodes: readonly number[], bytes: (id: number) => Uint8Array): string {
  let s = '';
  const seen = new Set<number>();
  for (const id of nodes) for (const x of g.tensors[id]!.src) {
    const t = g.tensors[x]!;
    if (t.role !== 'weight' || seen.has(x)) continue;
    seen.add(x);
    const b = bytes(x);
    let h = 0x811c9dc5;
    const step = Math.max(1, Math.floor(b.length / 16));
    for (let i = 0; i < b.length; i += step) for (let j = i; j < Math.min(b.length, i + 16); j++) h = Math.imul(h ^ b[j]!, 0x01000193);
    s += `${t.name}:${b.length}:${(h >>> 0).toString(16)};`;
  }
  return s;
}

const MiB = (n: number) => `${(n / 2 ** 20).toFixed(1)} MiB`;

/**
 * Key of an engine: the group, the graph's shape, and everything about its nodes an engine bakes in
 * (ops, params, shapes and types, and the ids and shapes of their sources: the KV cache's slot count,
 * the tensor ids the engine's I/O is bound to).
 */
function engineKey(g: Graph, group: string, nodes: readonly number[]): string {
  let s = `${group}|${g.nTokens}|${g.nOutputs}`;
  for (const id of nodes) {
    const t = g.tensors[id]!;
    s += `|${id}=${t.op}:${t.dtype}:${t.shape.join('x')}:${JSON.stringify(t.params)}<`;
    for (const x of t.src) { const st = g.tensors[x]!; s += `${x}:${st.dtype}:${st.shape.join('x')},`; }
  }
  return s;
}

export function createSimNpuDevice(opts: SimNpuOptions): SimNpuDevice {
  const target = npuTarget(opts.target ?? DEFAULT_NPU_TARGET);
  const rt = opts.runtime;
  const deviceId = opts.deviceId ?? 0;
  if (rt.deviceCount() <= deviceId) throw new DeviceError('DEVICE_LOST', `${rt.name} NPU runtime: no device ${deviceId} (it has ${rt.deviceCount()})`);
  const npu = rt.createContext(deviceId);
  const table: OpTable = buildOpTable({ ops: opts.ops, weightTypes: opts.weightTypes, disabledOps: opts.disabledOps });
  const name = opts.name ?? 'sim-npu';
  const engines = new Map<string, LoadedEngine>();
  const heldWeights = new Set<string>();
  let reserved = 0;
  let lastSeconds = 0;
  const st: SimNpuStats = { seconds: 0, engineSeconds: 0, transferSeconds: 0, wallSeconds: 0, engineCalls: 0, computes: 0, bytesToDevice: 0, bytesFromDevice: 0 };
  const toDevice = (n: number) => { st.bytesToDevice += n; const s = transferSeconds(target, n); st.transferSeconds += s; st.seconds += s; };
  const fromDevice = (n: number) => { st.bytesFromDevice += n; const s = transferSeconds(target, n); st.transferSeconds += s; st.seconds += s; };
  // host staging for copies to buffers that are not host-visible either; grows, never shrinks
  let staging = new Uint8Array(0);

  const runtimeError = (e: unknown, what: string): never => {
    if (e instanceof NpuRuntimeError && e.code === 'OUT_OF_DEVICE_MEMORY') {
      const info = rt.deviceInfo(deviceId);
      throw new DeviceError('OVER_BUDGET', `${name}: ${what}: out of NPU memory (${MiB(info.memFree)} free of ${MiB(info.memTotal)}; raise --npu-mem): ${e.message}`);
    }
    throw e;
  };

  const bufferType: BufferType = {
    name: `${name}-device`,
    alignment: 64,
    allocate(size: number, usage: BufferUsage): NpuBuffer {
      let ptr: DevicePtr;
      try { ptr = npu.malloc(Math.max(size, 1)); } catch (e) { return runtimeError(e, `allocating ${MiB(size)} of ${usage}`); }
      let freed = false;
      const buf: NpuBuffer = {
        ptr, npu, size, usage, type: bufferType,
        set(offset, bytes) { const t0 = performance.now(); npu.memcpyHostToDevice(ptr + offset, bytes); toDevice(bytes.length); st.wallSeconds += (performance.now() - t0) / 1e3; },
        get(offset, length, dest) {
          const t0 = performance.now();
          const d = dest ? (dest.length === length ? dest : dest.subarray(0, length)) : new Uint8Array(length);
          npu.memcpyDeviceToHost(d, ptr + offset);
          fromDevice(length);
          st.wallSeconds += (performance.now() - t0) / 1e3;
          return dest ?? d;
        },
        clear(value = 0) { npu.memset(ptr, value, size); },
        copyTo(dst, srcOffset, dstOffset, length) {
          const t0 = performance.now();
          try { copy(dst, srcOffset, dstOffset, length); } finally { st.wallSeconds += (performance.now() - t0) / 1e3; }
        },
        free() { if (!freed) { freed = true; npu.free(ptr); } },
      };
      // device to device stays on the card; anything else crosses the host link
      const copy = (dst: DeviceBuffer, srcOffset: number, dstOffset: number, length: number) => {
        const d = dst as Partial<NpuBuffer>;
        if (d.npu === npu && d.ptr !== undefined) { npu.memcpyDeviceToDevice(d.ptr + dstOffset, ptr + srcOffset, length); return; }
        const view = dst.hostView?.(dstOffset, length);
        if (view) { npu.memcpyDeviceToHost(view, ptr + srcOffset); fromDevice(length); return; }
        if (staging.length < length) staging = new Uint8Array(length);
        const s = staging.subarray(0, length);
        npu.memcpyDeviceToHost(s, ptr + srcOffset);
        fromDevice(length);
        dst.set(dstOffset, s);
      };
      return buf;
    },
  };

  const ptrOf = (p: Placement, what: string): DevicePtr => {
    const b = p.buffer as Partial<NpuBuffer>;
    if (b.npu !== npu || b.ptr === undefined) throw new DeviceError('UNSUPPORTED', `${name}: ${what} is not in this device's memory (buffer type ${p.buffer.type.name}); the scheduler must copy it in`);
    return b.ptr + p.offset;
  };

  /** Consecutive runs of `nodes` by group name. */
  const runsOf = (g: Graph, nodes: readonly number[]) => {
    const runs: { group: string; nodes: number[] }[] = [];
    for (const id of nodes) {
      const gr = g.tensors[id]!.group ?? '';
      const last = runs[runs.length - 1];
      if (last && last.group === gr) last.nodes.push(id);
      else runs.push({ group: gr, nodes: [id] });
    }
    return runs;
  };

  interface Program { placement: ComputeContext['placement']; calls: { engine: LoadedEngine; ins: DevicePtr[]; outs: DevicePtr[] }[] }
  const programs = new WeakMap<readonly number[], Program>();
  function program(ctx: ComputeContext, nodes: readonly number[]): Program {
    const cached = programs.get(nodes);
    if (cached && cached.placement === ctx.placement) return cached;
    const g = ctx.graph;
    const calls = runsOf(g, nodes).map((run) => {
      const engine = engines.get(engineKey(g, run.group, run.nodes));
      if (!engine) {
        throw new DeviceError('UNSUPPORTED', `${name}: no engine for group ${run.group || '(none)'} at ${g.nTokens} tokens (${run.nodes.length} nodes): ` +
          'groups are compiled at load (compileGroup), never mid-run');
      }
      const bind = (id: number) => ptrOf(ctx.placement(id), `tensor ${g.tensors[id]!.name}`);
      return { engine, ins: engine.inputs.map(bind), outs: engine.outputs.map(bind) };
    });
    const p = { placement: ctx.placement, calls };
    programs.set(nodes, p);
    return p;
  }
  /**
   * A CPU<->NPU crossing is paid once per synchronization with the host: per compute, or per wait on
   * queued submits (queue many, wait once), not per engine call.
   */
  const account = (p: Program, crossing: boolean) => {
    st.computes++;
    const cross = crossing ? target.crossingS : 0;
    st.seconds += cross;
    lastSeconds = cross;
    for (const c of p.calls) { st.engineCalls++; st.engineSeconds += c.engine.seconds; st.seconds += c.engine.seconds; lastSeconds += c.engine.seconds; }
  };

  const estimateSeconds = (g: Graph, nodes: readonly number[]): number => {
    let s = target.crossingS;
    for (const run of runsOf(g, nodes)) s += callCost(target, groupWork(g, run.nodes)).seconds;
    return s;
  };

  const device: SimNpuDevice = {
    name,
    kind: 'npu',
    description: `simulated NPU: ${target.description}; engines run by the ${rt.name} runtime`,
    target,
    runtime: rt,
    staticShapes: [1, 128],
    memory(): DeviceMemory {
      const info = rt.deviceInfo(deviceId);
      return { free: info.memFree, total: info.memTotal };
    },
    bufferType: () => bufferType,
    supportsOp: (t, g) => table.supports(t, g),
    // the offload gate (llama.cpp's GGML_OP_OFFLOAD_MIN_BATCH): a whole-layer NPU pays a fixed cost
    // per engine call, so it wants batches; an explicit --prefill-device overrides this
    prefersOp: (_t, _g, batch) => batch >= 32,
    claimGroups(g: Graph): NodeGroup[] {
      return layerGroups(g);
    },
    compileGroup(request: CompileRequest): void {
      // the group's weight bytes are read once here (fingerprint, cache key, encoder)
      const read = new Map<number, Uint8Array>();
      const req: CompileRequest = { ...request, weightBytes: (id) => { let b = read.get(id); if (!b) read.set(id, (b = request.weightBytes(id))); return b; } };
      const g = req.graph, gr = req.group;
      for (const id of gr.nodes) {
        const why = table.reason(g.tensors[id]!, g);
        if (why) throw new DeviceError('COMPILE_FAILED', `${name}: group ${gr.name} at ${req.nTokens} tokens: ${why}`);
      }
      // the file's type of each weight (the graph may carry a host device's repacked layout id)
      const fileType = (id: number) => (request.weightType ? request.weightType(id) : (request.graph.tensors[id]!.dtype as number));
      for (const id of gr.nodes) for (const s of g.tensors[id]!.src) {
        const w = g.tensors[s]!;
        if (w.role !== 'weight') continue;
        const type = fileType(s);
        if (!table.takesWeightType(type)) throw new DeviceError('COMPILE_FAILED', `${name}: group ${gr.name}: weight ${w.name} of type ${ggmlTypeName(type)} cannot be stored in an engine`);
      }
      const key = engineKey(g, gr.name, gr.nodes);
      const print = weightPrint(g, gr.nodes, (id) => req.weightBytes(id));
      const old = engines.get(key);
      if (old?.print === print) return;
      if (old) { npu.unloadEngine(old.handle); engines.delete(key); }
      let enc: EncodedEngine | undefined;
      let cacheKey: string | undefined;
      if (opts.cache) {
        const weights: Uint8Array[] = [];
        const seen = new Set<number>();
        for (const id of gr.nodes) for (const s of g.tensors[id]!.src) {
          const t = g.tensors[s]!;
          if (t.role === 'weight' && !seen.has(s)) { seen.add(s); weights.push(req.weightBytes(s)); }
        }
        cacheKey = opts.cache.key([target.name, key, ...weights]);
        enc = opts.cache.get(cacheKey);
      }
      if (!enc) {
        // the encoder sees the weights with the file's types (the graph may carry a host layout id)
        const encReq: CompileRequest = { ...req, graph: { ...g, tensors: g.tensors.map((t) => (t.role === 'weight' ? { ...t, dtype: fileType(t.id) } : t)) } };
        try { enc = opts.encode(encReq, target.name); } catch (e) {
          if (e instanceof DeviceError) throw e;
          throw new DeviceError('COMPILE_FAILED', `${name}: encoding group ${gr.name} at ${req.nTokens} tokens failed: ${(e as Error).message}`);
        }
        if (cacheKey) opts.cache!.put(cacheKey, enc);
      }
      let handle: EngineHandle;
      try { handle = npu.loadEngine(enc.blob); } catch (e) {
        if (e instanceof NpuRuntimeError && e.code === 'BAD_ENGINE') throw new DeviceError('COMPILE_FAILED', `${name}: engine for group ${gr.name} rejected: ${e.message}`);
        return runtimeError(e, `loading the engine of group ${gr.name} at ${req.nTokens} tokens (${MiB(enc.blob.length)} blob)`);
      }
      const info = npu.engineInfo(handle);
      if (info.inputs.length !== enc.inputIds.length || info.outputs.length !== enc.outputIds.length) {
        npu.unloadEngine(handle);
        throw new DeviceError('COMPILE_FAILED', `${name}: engine of group ${gr.name} has ${info.inputs.length} inputs/${info.outputs.length} outputs but the encoder bound ${enc.inputIds.length}/${enc.outputIds.length}`);
      }
      const seconds = callCost(target, groupWork(g, gr.nodes)).seconds;
      engines.set(key, { handle, inputs: enc.inputIds, outputs: enc.outputIds, seconds, group: gr.name, print });
      for (const id of gr.nodes) for (const s of g.tensors[id]!.src) if (g.tensors[s]!.role === 'weight') heldWeights.add(g.tensors[s]!.name);
    },
    // The weights are already in device memory (engines load at compile, one per static shape, so a
    // weight may be held twice): what must fit is the loaded engines (at least the weights asked for),
    // the KV cache and the scratch arena. The scheduler may reserve several times at load (dropping groups until it fits):
    // the last call is the one in force.
    reserve(r: MemoryReservation): void {
      // what is allocated now is the loaded engines (reservations come before any buffer)
      const info = rt.deviceInfo(deviceId), total = info.memTotal, engineBytes = total - info.memFree;
      const need = Math.max(engineBytes, r.weights) + r.kv + r.scratch;
      if (need > total) {
        throw new DeviceError('OVER_BUDGET', `${name}: needs ${MiB(need)} (engines ${MiB(engineBytes)} holding ${MiB(r.weights)} of weights, KV ${MiB(r.kv)}, ` +
          `scratch ${MiB(r.scratch)}) but has ${MiB(total)} (raise --npu-mem)`);
      }
      reserved = need;
    },
    holdsWeight: (n: string) => heldWeights.has(n),
    describe(): DeviceDescription {
      return {
        ops: [...table.ops],
        weightTypes: table.weightTypes.map(ggmlTypeName),
        staticShapes: device.staticShapes,
        status: `simulated (${rt.name} runtime, target ${target.name}); ${engines.size} engine${engines.size === 1 ? '' : 's'} loaded; ${MiB(reserved)} reserved`,
      };
    },
    createBackend(): SimNpuBackend {
      let stream: NpuStream | undefined;
      return {
        device,
        prepare(ctx: ComputeContext, nodes: readonly number[]) { program(ctx, nodes); },
        release(nodes: readonly number[]) { programs.delete(nodes); },
        lastSimulatedSeconds: () => lastSeconds,
        compute(ctx: ComputeContext, nodes: readonly number[]) {
          const t0 = performance.now();
          const p = program(ctx, nodes);
          for (const c of p.calls) npu.execute(c.engine.handle, c.ins, c.outs);
          account(p, true);
          st.wallSeconds += (performance.now() - t0) / 1e3;
        },
        submit(ctx: ComputeContext, nodes: readonly number[]): DeviceEvent {
          const p = program(ctx, nodes);
          const s = (stream ??= npu.createStream());
          // (the mock runs work as it is enqueued: the wall time is spent here, not in wait)
          const t0 = performance.now();
          for (const c of p.calls) npu.executeAsync(c.engine.handle, c.ins, c.outs, s);
          account(p, false);
          st.wallSeconds += (performance.now() - t0) / 1e3;
          return { wait: async () => { await s.synchronize(); st.seconds += target.crossingS; lastSeconds += target.crossingS; } };
        },
      };
    },
    stats: () => ({ ...st }),
    resetStats() { for (const k of Object.keys(st) as (keyof SimNpuStats)[]) st[k] = 0; },
    estimateSeconds,
    estimateGraph: (g: Graph) => predictGraph(target, g).seconds,
    estimate: (_phase: Phase, g: Graph, nodes?: readonly number[]) => (nodes ? estimateSeconds(g, nodes) : predictGraph(target, g).seconds),
    transferSeconds: (bytes: number) => transferSeconds(target, bytes),
    async close() {
      for (const e of engines.values()) npu.unloadEngine(e.handle);
      engines.clear();
      heldWeights.clear();
      npu.destroy();
    },
  };
  return device;
}
