// The mock NPU runtime: the NpuRuntime interface (./runtime-api.ts) in software, so the NPU device is
// built and tested without the hardware. Its device memory is a private CPU device's WebAssembly.Memory
// (apart from the cpu device the host computes on), reached only through the memcpy calls; every byte
// moved is counted and allocations past the capacity (default 7040 MiB, the AX-M1 card) throw
// OUT_OF_DEVICE_MEMORY. Engines run on the cpu device's WASM kernels: at load the nibble-plane int8
// weights are unpacked into Q8_0 blocks (same integers, same per-32 f16 scales), so every matmul is an
// int8 x int8 integer dot product per block of 32 with activations quantized to int8 per 32 as ggml's
// Q8_0 does, and the other ops use the cpu device's f32 kernels.

import type { Backend, BufferType, ComputeContext, DeviceBuffer, Placement } from '../backend.js';
import type { Graph, TensorDesc } from '../../graph/graph.js';
import { GgmlType } from '../../gguf/ggml-types.js';
import { createCpuDevice } from '../cpu/device.js';
import type { CpuRuntime } from '../cpu/runtime.js';
import { parseEngine, tensorBytes, type EngineProgram, type EngineTensor, type ParsedEngine } from './engine-format.js';
import { PLANE_BLOCK, PLANE_HALF, paddedCols } from './nibble-planes.js';
import {
  NpuRuntimeError, type DevicePtr, type EngineHandle, type EngineInfo, type NpuContext, type NpuCounters, type NpuDeviceInfo, type NpuRuntime, type NpuStream,
} from './runtime-api.js';

export const DEFAULT_NPU_CAPACITY = 7040 * 2 ** 20;
/** Device pointers live above wasm32's 4 GiB so a pointer can never be mistaken for a host address. */
const VBASE = 2 ** 32;
const ALIGN = 64;

export interface MockNpuOptions {
  /** device memory in bytes (default 7040 MiB) */
  capacityBytes?: number;
  /** threads the engine kernels use (default: available cores) */
  threads?: number;
  /** float order of the kernels' block sums: 'fast' (default, as the cpu device) or 'exact' (ggml's order) */
  numerics?: 'exact' | 'fast';
  /** device name reported by deviceInfo */
  name?: string;
}

type CpuDev = Awaited<ReturnType<typeof createCpuDevice>>;
type CpuBuf = DeviceBuffer & { ptr: number };

interface Allocation { base: number; size: number; accounted: number; buffer: CpuBuf }

/** The simulated device: its memory (a private cpu device) and the capacity accounting, shared by its contexts. */
class MockDevice {
  used = 0;
  /** live allocations sorted by base (wasm address) */
  readonly allocs: Allocation[] = [];
  readonly bt: BufferType;
  constructor(readonly id: number, readonly name: string, readonly capacity: number, readonly cpu: CpuDev) {
    this.bt = cpu.bufferType();
  }
  get rt(): CpuRuntime { return this.cpu.runtime; }

  alloc(bytes: number, what: string): Allocation {
    if (!Number.isSafeInteger(bytes) || bytes < 0) throw new NpuRuntimeError('BAD_IO', `malloc: bad size ${bytes}`);
    const accounted = Math.max(ALIGN, Math.ceil(bytes / ALIGN) * ALIGN);
    if (this.used + accounted > this.capacity) {
      throw new NpuRuntimeError('OUT_OF_DEVICE_MEMORY', `npu device ${this.id}: ${what} needs ${accounted} bytes but ${this.capacity - this.used} of ${this.capacity} are free`);
    }
    let buffer: CpuBuf;
    try {
      buffer = this.bt.allocate(Math.max(bytes, 1), 'compute') as CpuBuf;
    } catch (e) {
      // the mock's backing store is a wasm32 memory: at most 4 GiB whatever the simulated capacity
      throw new NpuRuntimeError('OUT_OF_DEVICE_MEMORY', `npu device ${this.id}: ${what} of ${bytes} bytes does not fit the mock's backing store (${(e as Error).message})`);
    }
    const a: Allocation = { base: buffer.ptr, size: bytes, accounted, buffer };
    let lo = 0, hi = this.allocs.length;
    while (lo < hi) { const m = (lo + hi) >> 1; if (this.allocs[m]!.base < a.base) lo = m + 1; else hi = m; }
    this.allocs.splice(lo, 0, a);
    this.used += accounted;
    return a;
  }
  release(a: Allocation): void {
    const i = this.allocs.indexOf(a);
    if (i < 0) return;
    this.allocs.splice(i, 1);
    this.used -= a.accounted;
    a.buffer.free();
  }
  /** the allocation holding wasm address `addr` */
  find(addr: number): Allocation | undefined {
    let lo = 0, hi = this.allocs.length - 1;
    while (lo <= hi) {
      const m = (lo + hi) >> 1, a = this.allocs[m]!;
      if (addr < a.base) hi = m - 1;
      else if (addr >= a.base + Math.max(a.size, 1)) lo = m + 1;
      else return a;
    }
    return undefined;
  }
}

interface LoadedEngine {
  parsed: ParsedEngine;
  info: EngineInfo;
  graph: Graph;
  nodes: number[];
  /** device allocations of the weights and constants */
  held: Allocation[];
  /** placement of weight/const tensors (by program tensor index) */
  fixed: (Placement | undefined)[];
  backend: Backend;
  /** the last bindings and their compiled placement (the cpu backend caches its program per placement function) */
  lastIn: DevicePtr[];
  lastOut: DevicePtr[];
  lastScratch: Allocation | undefined;
  placement: ((id: number) => Placement) | undefined;
  /** program tensors that are KV caches (inputs also bound as outputs): [input index, output index] */
  inout: [number, number][];
  /** for kv_store/attention: [positions tensor, cache slots] checked before each run */
  posChecks: [number, number][];
}

class MockStream implements NpuStream {
  error: unknown = undefined;
  synchronize(): Promise<void> {
    const e = this.error;
    this.error = undefined;
    return e === undefined ? Promise.resolve() : Promise.reject(e);
  }
}

class MockContext implements NpuContext {
  #dev: MockDevice;
  #owned = new Set<Allocation>();
  #engines = new Map<EngineHandle, LoadedEngine>();
  #nextEngine = 1;
  #scratch: Allocation | undefined;
  #closed = false;
  #counters: NpuCounters = { bytesHostToDevice: 0, bytesDeviceToHost: 0, bytesDeviceToDevice: 0, engineCalls: 0 };

  constructor(dev: MockDevice) { this.#dev = dev; }
  get deviceId(): number { return this.#dev.id; }

  #live(): void {
    if (this.#closed) throw new NpuRuntimeError('CLOSED', 'npu context is destroyed');
  }
  /** wasm address of [ptr, ptr + bytes), checked to lie inside one live allocation of this context */
  #addr(ptr: DevicePtr, bytes: number, what: string): { a: Allocation; addr: number } {
    this.#live();
    if (!Number.isSafeInteger(bytes) || bytes < 0) throw new NpuRuntimeError('BAD_IO', `${what}: bad byte count ${bytes}`);
    const addr = ptr - VBASE;
    const a = Number.isSafeInteger(ptr) ? this.#dev.find(addr) : undefined;
    if (!a || !this.#owned.has(a)) throw new NpuRuntimeError('BAD_POINTER', `${what}: ${String(ptr)} is not a live device allocation of this context`);
    if (addr + bytes > a.base + a.size) throw new NpuRuntimeError('BAD_POINTER', `${what}: ${bytes} bytes at offset ${addr - a.base} run past the ${a.size}-byte allocation`);
    return { a, addr };
  }
  #alloc(bytes: number, what: string): Allocation {
    const a = this.#dev.alloc(bytes, what);
    this.#owned.add(a);
    return a;
  }
  #release(a: Allocation): void {
    this.#owned.delete(a);
    this.#dev.release(a);
  }

  malloc(bytes: number): DevicePtr {
    this.#live();
    return VBASE + this.#alloc(bytes, 'malloc').base;
  }
  free(ptr: DevicePtr): void {
    const { a, addr } = this.#addr(ptr, 0, 'free');
    if (addr !== a.base) throw new NpuRuntimeError('BAD_POINTER', `free: ${ptr} is inside an allocation, not its start`);
    for (const e of this.#engines.values()) if (e.held.includes(a)) throw new NpuRuntimeError('BAD_POINTER', 'free: the pointer belongs to a loaded engine');
    this.#release(a);
  }
  memset(ptr: DevicePtr, value: number, bytes: number): void {
    const { addr } = this.#addr(ptr, bytes, 'memset');
    this.#dev.rt.u8(addr, bytes).fill(value & 0xff);
  }
  memcpyHostToDevice(dst: DevicePtr, src: Uint8Array): void {
    const { addr } = this.#addr(dst, src.length, 'memcpyHostToDevice');
    this.#dev.rt.u8(addr, src.length).set(src);
    this.#counters.bytesHostToDevice += src.length;
  }
  memcpyDeviceToHost(dst: Uint8Array, src: DevicePtr): void {
    const { addr } = this.#addr(src, dst.length, 'memcpyDeviceToHost');
    dst.set(this.#dev.rt.u8(addr, dst.length));
    this.#counters.bytesDeviceToHost += dst.length;
  }
  memcpyDeviceToDevice(dst: DevicePtr, src: DevicePtr, bytes: number): void {
    const d = this.#addr(dst, bytes, 'memcpyDeviceToDevice dst'), s = this.#addr(src, bytes, 'memcpyDeviceToDevice src');
    this.#dev.rt.copy(s.addr, d.addr, bytes);
    this.#counters.bytesDeviceToDevice += bytes;
  }

  loadEngine(blob: Uint8Array): EngineHandle {
    this.#live();
    let parsed: ParsedEngine;
    try {
      parsed = parseEngine(blob);
    } catch (e) {
      throw new NpuRuntimeError('BAD_ENGINE', (e as Error).message);
    }
    // the whole blob crosses the host link once
    this.#counters.bytesHostToDevice += blob.length;
    const p = parsed.program, held: Allocation[] = [];
    const fixed: (Placement | undefined)[] = new Array(p.tensors.length).fill(undefined);
    const weightTypes = new Map<number, number>();
    try {
      for (const [i, t] of p.tensors.entries()) {
        if (t.kind === 'weight') {
          const w = this.#loadWeight(t, parsed.data, held);
          fixed[i] = w.placement;
          weightTypes.set(i, w.type);
        }
        else if (t.kind === 'const') {
          const a = this.#alloc(t.data!.bytes, `engine ${parsed.header.name}: constant ${t.name}`);
          held.push(a);
          a.buffer.set(0, parsed.data.subarray(t.data!.offset, t.data!.offset + t.data!.bytes));
          fixed[i] = { buffer: a.buffer, offset: 0, nBytes: t.data!.bytes };
        }
      }
      const needScratch = p.tensors.some((t) => t.kind === 'scratch') ? Math.max(p.scratchBytes, 1) : 0;
      if (needScratch > (this.#scratch?.size ?? 0)) {
        // one scratch area per context, shared by its engines (they run one at a time)
        const s = this.#alloc(needScratch, `engine ${parsed.header.name}: scratch`);
        if (this.#scratch) this.#release(this.#scratch);
        this.#scratch = s;
      }
    } catch (e) {
      for (const a of held) this.#release(a);
      throw e;
    }
    const weightBytes = held.reduce((s, a) => s + a.accounted, 0);
    const info: EngineInfo = {
      target: parsed.header.target, name: parsed.header.name,
      inputs: p.inputs.map((io) => ({ name: io.name, shape: [...io.shape], dtype: io.dtype, bytes: io.bytes })),
      outputs: p.outputs.map((io) => ({ name: io.name, shape: [...io.shape], dtype: io.dtype, bytes: io.bytes })),
      weightBytes, scratchBytes: p.scratchBytes,
    };
    const graph = programGraph(p, parsed.header.nTokens, weightTypes);
    const inout: [number, number][] = [];
    for (const [i, io] of p.inputs.entries()) {
      const j = p.outputs.findIndex((o) => o.tensor === io.tensor);
      if (j >= 0) inout.push([i, j]);
    }
    // data-dependent indices: cache slots (kv_store, attention) and row ids (get_rows)
    const posChecks: [number, number][] = [];
    const rowsOf = (t: EngineTensor) => t.shape.slice(1).reduce((a, b) => a * b, 1);
    for (const o of p.ops) {
      if (o.op === 'kv_store') posChecks.push([o.src[2]!, p.tensors[o.src[0]!]!.shape[1]!]);
      if (o.op === 'attention') posChecks.push([o.src[3]!, p.tensors[o.src[1]!]!.shape[1]!]);
      if (o.op === 'get_rows') posChecks.push([o.src[1]!, rowsOf(p.tensors[o.src[0]!]!)]);
    }
    const h = this.#nextEngine++;
    this.#engines.set(h, {
      parsed, info, graph, nodes: p.ops.map((o) => o.out), held, fixed, backend: this.#dev.cpu.createBackend(),
      lastIn: [], lastOut: [], lastScratch: undefined, placement: undefined, inout, posChecks,
    });
    return h;
  }

  /** nibble planes + f16 scales -> Q8_0 blocks in device memory (then the cpu device's own weight layout) */
  #loadWeight(t: EngineTensor, data: Uint8Array, held: Allocation[]): { placement: Placement; type: number } {
    const [cols, rows] = t.shape as [number, number];
    const nb = cols / 32, rowBytes = nb * 34, bytes = rows * rowBytes;
    const a = this.#alloc(bytes, `weight ${t.name}`);
    held.push(a);
    const dst = a.buffer.hostView!(0, bytes);
    const pc = paddedCols(cols), p0 = t.planes!.offset, s0 = t.scales!.offset;
    for (let r = 0; r < rows; r++) {
      const pr = p0 + r * pc;
      for (let b = 0; b < nb; b++) {
        const o = r * rowBytes + b * 34, so = s0 + 2 * (r * nb + b);
        dst[o] = data[so]!; dst[o + 1] = data[so + 1]!;
        for (let j = 0; j < 32; j++) {
          const c = 32 * b + j, blk = pr + c - (c % PLANE_BLOCK), k = (c % PLANE_BLOCK) >> 1, sh = (c & 1) << 2;
          dst[o + 2 + j] = (((data[blk + k]! >> sh) & 15) | (((data[blk + PLANE_HALF + k]! >> sh) & 15) << 4));
        }
      }
    }
    const placement: Placement = { buffer: a.buffer, offset: 0, nBytes: bytes };
    // the cpu device may interleave rows for its kernels (same integers, same scales)
    const type = this.#dev.cpu.prepareWeight?.(placement, GgmlType.Q8_0, [cols, rows]) ?? GgmlType.Q8_0;
    return { placement, type };
  }

  engineInfo(engine: EngineHandle): EngineInfo {
    return this.#engine(engine).info;
  }
  #engine(h: EngineHandle): LoadedEngine {
    this.#live();
    const e = this.#engines.get(h);
    if (!e) throw new NpuRuntimeError('BAD_ENGINE', `engine handle ${h} is not loaded in this context`);
    return e;
  }

  execute(engine: EngineHandle, inputs: readonly DevicePtr[], outputs: readonly DevicePtr[]): void {
    const e = this.#engine(engine);
    const info = e.info, p = e.parsed.program;
    if (inputs.length !== info.inputs.length || outputs.length !== info.outputs.length) {
      throw new NpuRuntimeError('BAD_IO', `engine ${info.name}: ${inputs.length} inputs and ${outputs.length} outputs bound, it has ${info.inputs.length} and ${info.outputs.length}`);
    }
    const inAddr = inputs.map((ptr, i) => this.#addr(ptr, info.inputs[i]!.bytes, `engine ${info.name} input ${i} (${info.inputs[i]!.name})`));
    const outAddr = outputs.map((ptr, i) => this.#addr(ptr, info.outputs[i]!.bytes, `engine ${info.name} output ${i} (${info.outputs[i]!.name})`));
    const rt = this.#dev.rt;
    // in/out tensors (the KV cache): updated in place, or copied to the output binding first
    for (const [i, j] of e.inout) {
      if (inputs[i] !== outputs[j]) rt.copy(inAddr[i]!.addr, outAddr[j]!.addr, info.inputs[i]!.bytes);
    }
    if (!sameBindings(e, inputs, outputs, this.#scratch)) {
      const place: (Placement | undefined)[] = [...e.fixed];
      const bind = (tensor: number, x: { a: Allocation; addr: number }, bytes: number) => { place[tensor] = { buffer: x.a.buffer, offset: x.addr - x.a.base, nBytes: bytes }; };
      p.inputs.forEach((io, i) => bind(io.tensor, inAddr[i]!, io.bytes));
      p.outputs.forEach((io, j) => bind(io.tensor, outAddr[j]!, io.bytes));
      const s = this.#scratch;
      for (const [i, t] of p.tensors.entries()) {
        if (t.kind === 'scratch') place[i] = { buffer: s!.buffer, offset: t.scratch!, nBytes: tensorBytes(t) };
      }
      e.placement = (id: number) => place[id]!;
      e.lastIn = [...inputs]; e.lastOut = [...outputs]; e.lastScratch = s;
    }
    // positions are device data: a slot outside the cache would write or read past it
    for (const [tensor, slots] of e.posChecks) {
      const pl = e.placement!(tensor), n = pl.nBytes / 4;
      const pos = new Int32Array(rt.memory.buffer, (pl.buffer as CpuBuf).ptr + pl.offset, n);
      for (let i = 0; i < n; i++) {
        if (pos[i]! < 0 || pos[i]! >= slots) throw new NpuRuntimeError('BAD_IO', `engine ${info.name}: index ${pos[i]} (element ${i} of ${p.tensors[tensor]!.name}) is outside the ${slots} rows/slots it selects from`);
      }
    }
    const ctx: ComputeContext = { graph: e.graph, placement: e.placement! };
    try {
      e.backend.compute(ctx, e.nodes);
    } catch (err) {
      throw new NpuRuntimeError('ENGINE_FAILED', `engine ${info.name}: ${(err as Error).message}`);
    }
    this.#counters.engineCalls++;
  }
  executeAsync(engine: EngineHandle, inputs: readonly DevicePtr[], outputs: readonly DevicePtr[], stream: NpuStream): void {
    if (!(stream instanceof MockStream)) throw new NpuRuntimeError('BAD_IO', 'executeAsync: the stream was not created by this runtime');
    // Work runs at enqueue time, in order (one simulated queue); a failure is reported by synchronize(),
    // and later work on a failed stream is skipped until then, as a real queue would.
    if (stream.error !== undefined) return;
    try {
      this.execute(engine, inputs, outputs);
    } catch (err) {
      stream.error = err;
    }
  }
  createStream(): NpuStream {
    this.#live();
    return new MockStream();
  }
  unloadEngine(engine: EngineHandle): void {
    const e = this.#engine(engine);
    for (const a of e.held) this.#release(a);
    this.#engines.delete(engine);
  }
  counters(): NpuCounters {
    return { ...this.#counters };
  }
  destroy(): void {
    if (this.#closed) return;
    for (const a of [...this.#owned]) this.#release(a);
    this.#engines.clear();
    this.#scratch = undefined;
    this.#closed = true;
  }
}

function sameBindings(e: LoadedEngine, inputs: readonly DevicePtr[], outputs: readonly DevicePtr[], scratch: Allocation | undefined): boolean {
  if (!e.placement || e.lastScratch !== scratch) return false;
  for (let i = 0; i < inputs.length; i++) if (e.lastIn[i] !== inputs[i]) return false;
  for (let i = 0; i < outputs.length; i++) if (e.lastOut[i] !== outputs[i]) return false;
  return true;
}

/** The engine program as a graph the cpu device computes (weights carry the cpu layout they were loaded into). */
function programGraph(p: EngineProgram, nTokens: number, weightTypes: Map<number, number>): Graph {
  const producer = new Map<number, number>();
  p.ops.forEach((o, i) => producer.set(o.out, i));
  const tensors: TensorDesc[] = p.tensors.map((t, id) => {
    const o = producer.has(id) ? p.ops[producer.get(id)!]! : undefined;
    const dtype = t.kind === 'weight' ? weightTypes.get(id)! : t.dtype === 'f16' ? 'f16' : t.dtype === 'i32' ? 'i32' : 'f32';
    return {
      id, name: t.name, op: o ? o.op : 'none',
      role: o ? 'intermediate' : t.kind === 'weight' || t.kind === 'const' ? 'weight' : 'input',
      dtype, shape: [...t.shape], src: o ? [...o.src] : [], params: o ? { ...o.params } : {},
    } as TensorDesc;
  });
  return { tensors, nodes: p.ops.map((o) => o.out), inputs: { tokens: -1, positions: -1, outputRows: -1 }, output: p.ops[p.ops.length - 1]!.out, nTokens, nOutputs: nTokens };
}

export interface MockNpuRuntime extends NpuRuntime {
  /** stops the kernel worker threads; contexts are unusable afterwards */
  close(): Promise<void>;
}

/** The software NPU runtime with one device (a real driver binding would enumerate its cards). */
export async function createMockNpuRuntime(opts: MockNpuOptions = {}): Promise<MockNpuRuntime> {
  const capacity = opts.capacityBytes ?? DEFAULT_NPU_CAPACITY;
  if (!Number.isSafeInteger(capacity) || capacity < 0) throw new NpuRuntimeError('NO_DEVICE', `mock npu: bad capacity ${capacity}`);
  const cpu = await createCpuDevice({ threads: opts.threads, numerics: opts.numerics ?? 'fast' });
  const dev = new MockDevice(0, opts.name ?? 'mock-npu', capacity, cpu);
  const contexts: MockContext[] = [];
  let closed = false;
  const check = (id: number) => {
    if (closed) throw new NpuRuntimeError('CLOSED', 'mock npu runtime is closed');
    if (id !== 0) throw new NpuRuntimeError('NO_DEVICE', `npu device ${id} does not exist (the mock has 1)`);
  };
  return {
    name: 'mock',
    deviceCount: () => 1,
    deviceInfo(id: number): NpuDeviceInfo {
      check(id);
      return { id, name: dev.name, memTotal: dev.capacity, memFree: dev.capacity - dev.used };
    },
    createContext(id: number): NpuContext {
      check(id);
      const c = new MockContext(dev);
      contexts.push(c);
      return c;
    },
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      for (const c of contexts) c.destroy();
      await cpu.close();
    },
  };
}
