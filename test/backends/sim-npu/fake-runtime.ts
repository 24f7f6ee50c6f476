// A test double of the NPU runtime interface, for the sim-npu device's own unit tests: device memory
// apart from the host (reached through memcpy, capacity enforced), and "engines" that run the group's
// nodes with the reference kernels. The real mock runtime and engine format are npu-rt's
// (src/backends/npu/); this double lets the device's plumbing (binding, budgets, fallback, stats)
// be tested on its own.
import type { CompileRequest, Placement } from '../../../src/backends/backend.js';
import { hostBuffer, hostBufferType } from '../../../src/backends/host-buffer.js';
import { computeNode } from '../../../src/backends/reference/device.js';
import type { EncodedEngine } from '../../../src/backends/sim-npu/device.js';
import type { DevicePtr, EngineInfo, NpuContext, NpuRuntime, NpuStream } from '../../../src/backends/npu/runtime-api.js';
import { NpuRuntimeError } from '../../../src/backends/npu/runtime-api.js';
import { tensorBytes } from '../../../src/backends/backend.js';
import { rowBytes } from '../../../src/gguf/ggml-types.js';
import type { Graph } from '../../../src/graph/graph.js';

interface FakeEngineDesc { graph: Graph; nodes: number[]; inputs: number[]; outputs: number[]; weights: Map<number, Uint8Array> }
const registry = new Map<number, FakeEngineDesc>();
let nextId = 1;
const tBytes = (g: Graph, id: number) => tensorBytes(g.tensors[id]!, rowBytes);

/** Encodes a group: the blob names a registry entry and is as long as the weights it holds. */
export function fakeEncode(req: CompileRequest): EncodedEngine {
  const g = req.graph, inGroup = new Set(req.group.nodes);
  const inputs: number[] = [], outputs: number[] = [];
  const weights = new Map<number, Uint8Array>();
  let wBytes = 0;
  for (const id of req.group.nodes) {
    for (const s of g.tensors[id]!.src) {
      const t = g.tensors[s]!;
      if (t.role === 'weight') { if (!weights.has(s)) { const b = req.weightBytes(s).slice(); weights.set(s, b); wBytes += b.length; } }
      else if (!inGroup.has(s) && !inputs.includes(s)) inputs.push(s);
    }
  }
  // outputs: nodes read outside the group, and the graph output
  for (const id of req.group.nodes) {
    const readOutside = g.nodes.some((n) => !inGroup.has(n) && g.tensors[n]!.src.includes(id));
    if ((readOutside || id === g.output) && g.tensors[id]!.op !== 'kv_store') outputs.push(id);
  }
  const eid = nextId++;
  registry.set(eid, { graph: g, nodes: [...req.group.nodes], inputs, outputs, weights });
  const blob = new Uint8Array(8 + wBytes);
  new DataView(blob.buffer).setUint32(0, 0x454b4146, true);
  new DataView(blob.buffer).setUint32(4, eid, true);
  return { blob, inputIds: inputs, outputIds: outputs };
}

export interface FakeRuntime extends NpuRuntime { executed: number }

export function createFakeRuntime(capacityBytes: number): FakeRuntime {
  const allocs = new Map<number, Uint8Array>();
  let used = 0, next = 4096;
  const engines = new Map<number, { desc: FakeEngineDesc; ptr: number; bytes: number }>();
  let nextEngine = 1;
  const counters = { bytesHostToDevice: 0, bytesDeviceToHost: 0, bytesDeviceToDevice: 0, engineCalls: 0 };
  const resolve = (p: DevicePtr, len: number): Uint8Array => {
    for (const [base, a] of allocs) if (p >= base && p + len <= base + a.length) return a.subarray(p - base, p - base + len);
    throw new NpuRuntimeError('BAD_POINTER', `fake: no allocation holds [${p}, ${p + len})`);
  };
  const malloc = (n: number): DevicePtr => {
    if (used + n > capacityBytes) throw new NpuRuntimeError('OUT_OF_DEVICE_MEMORY', `fake: ${n} bytes requested, ${capacityBytes - used} free`);
    const p = next;
    allocs.set(p, new Uint8Array(n));
    used += n;
    next += Math.ceil((n + 1) / 4096) * 4096;
    return p;
  };
  const free = (p: DevicePtr) => { const a = allocs.get(p); if (!a) throw new NpuRuntimeError('BAD_POINTER', `fake: free of ${p}`); used -= a.length; allocs.delete(p); };
  const scratchType = hostBufferType('fake-scratch');
  const rt: FakeRuntime = {
    name: 'fake', executed: 0,
    deviceCount: () => 1,
    deviceInfo: () => ({ id: 0, name: 'fake', memTotal: capacityBytes, memFree: capacityBytes - used }),
    createContext(): NpuContext {
      const run = (h: number, ins: readonly DevicePtr[], outs: readonly DevicePtr[]) => {
        const e = engines.get(h);
        if (!e) throw new NpuRuntimeError('BAD_ENGINE', `fake: engine ${h}`);
        const { graph: g, nodes, inputs, outputs, weights } = e.desc;
        if (ins.length !== inputs.length || outs.length !== outputs.length) throw new NpuRuntimeError('BAD_IO', 'fake: I/O count');
        const at = new Map<number, Placement>();
        const bind = (id: number, p: DevicePtr) => { const n = tBytes(g, id); at.set(id, { buffer: hostBuffer(resolve(p, n), 'compute', scratchType), offset: 0, nBytes: n }); };
        inputs.forEach((id, i) => bind(id, ins[i]!));
        outputs.forEach((id, i) => bind(id, outs[i]!));
        for (const [id, b] of weights) at.set(id, { buffer: hostBuffer(b, 'weights', scratchType), offset: 0, nBytes: b.length });
        for (const id of nodes) if (!at.has(id)) { const n = tBytes(g, id); at.set(id, { buffer: scratchType.allocate(n, 'compute'), offset: 0, nBytes: n }); }
        for (const id of nodes) computeNode(g, g.tensors[id]!, (x) => at.get(x)!);
        counters.engineCalls++;
        rt.executed++;
      };
      return {
        deviceId: 0,
        malloc, free,
        memset(p, v, n) { resolve(p, n).fill(v); },
        memcpyHostToDevice(d, s) { resolve(d, s.length).set(s); counters.bytesHostToDevice += s.length; },
        memcpyDeviceToHost(d, s) { d.set(resolve(s, d.length)); counters.bytesDeviceToHost += d.length; },
        memcpyDeviceToDevice(d, s, n) { resolve(d, n).set(resolve(s, n)); counters.bytesDeviceToDevice += n; },
        loadEngine(blob) {
          const dv = new DataView(blob.buffer, blob.byteOffset, blob.byteLength);
          if (blob.length < 8 || dv.getUint32(0, true) !== 0x454b4146) throw new NpuRuntimeError('BAD_ENGINE', 'fake: not a fake engine');
          const desc = registry.get(dv.getUint32(4, true));
          if (!desc) throw new NpuRuntimeError('BAD_ENGINE', 'fake: unknown engine');
          const ptr = malloc(blob.length);
          const h = nextEngine++;
          engines.set(h, { desc, ptr, bytes: blob.length });
          return h;
        },
        engineInfo(h): EngineInfo {
          const e = engines.get(h)!;
          const io = (id: number) => ({ name: e.desc.graph.tensors[id]!.name, shape: e.desc.graph.tensors[id]!.shape, dtype: 'f32' as const, bytes: tBytes(e.desc.graph, id) });
          return { target: 'fake', name: 'fake', inputs: e.desc.inputs.map(io), outputs: e.desc.outputs.map(io), weightBytes: e.bytes, scratchBytes: 0 };
        },
        execute: run,
        executeAsync(h, ins, outs, _s) { run(h, ins, outs); },
        createStream(): NpuStream { return { synchronize: async () => {} }; },
        unloadEngine(h) { const e = engines.get(h); if (e) { free(e.ptr); engines.delete(h); } },
        counters: () => ({ ...counters }),
        destroy() {},
      };
    },
  };
  return rt;
}
