// The `webgpu` device: WGSL kernels (shaders.ts) through the backend contract, op by op like the cpu device.
//
// Per split of a plan, prepare() builds a Program once: a pipeline per kernel variant (cached on the
// device), one uniform block per dispatch, a bind group per dispatch over the tensors' fixed placements
// (the scheduler's one arena per device, the KV state buffers, the weights). submit() then encodes the
// whole split (a decode token, when every op runs here) in one command buffer and reads back only what the
// host can read afterwards (buffer.ts): the graph output (logits), tensors that nodes outside the split read,
// and the KV rows its kv_store nodes wrote (for the Context's hand-over to a decode device). Per submit the
// host computes only the RoPE cos/sin rows of the batch's positions (ggml's glibc cosf/sinf, as the cpu).
//
// Weights: when the model's weights live on another device (the cpu device holds them: this device runs only
// part of the op set), each weight a node reads is uploaded once, at plan time, into a GPU buffer of its own
// (holdsWeight), taken back out of the cpu device's 4-row layouts. Matrices wider than the adapter's largest
// storage binding (128 MiB on lavapipe/GLES: token_embd and output at big vocabularies) are bound in row
// chunks, one dispatch each.
import type { Backend, ComputeContext, Device, DeviceBuffer, DeviceDescription, DeviceEvent, Placement } from '../backend.js';
import { DeviceError, tensorBytes } from '../backend.js';
import type { Graph, TensorDesc } from '../../graph/graph.js';
import { nElements } from '../../graph/graph.js';
import { GgmlType, ggmlTypeName, rowBytes } from '../../gguf/ggml-types.js';
import { ropeCacheRow, ropeThetaScale } from '../rope-cache.js';
import { baseType, CpuLayout } from '../cpu/runtime/layouts.js';
import { gpuBufferType, isGpuBuffer, MAP_READ, USAGE, type GpuBuffer } from './buffer.js';
import { setupGpu, type GpuSetup, type GpuSetupOptions } from './gpu.js';
import { probeFusedFma, withFmaX, type FmaMode } from './fma.js';
import { actLayout, actQuantQShader, MMQ_ROWS, MMQ_TM, mulMatQShader, type ActQ } from './shaders-mmq.js';
import { llamaRepacks, q4KGemmRows, usesTinyBlas } from '../ggml-routing.js';
import { MMF_ROWS, MMF_TM, mulMatFShader } from './shaders-mmf.js';
import {
  actQuantShader, ATTN_MAX_HEAD, attentionShader, type ActQuant, elementwiseShader, ewHasB, getRowsShader, kvStoreShader,
  normShader, ropeShader, WEIGHT_TYPES, WG, type EwOp,
} from './shaders.js';

export interface WebGpuDeviceOptions extends GpuSetupOptions {
  /** device name (default 'webgpu') */
  name?: string;
  /** tests: bind at most this many bytes per storage binding (below the adapter's limit), to exercise row chunks */
  maxBindingBytes?: number;
  /**
   * fmaX, the fused multiply-add of the kernels where ggml uses fmaf (fma.ts): WGSL's fma when it is fused
   * ('native'), the exact emulation ('emulated'), or whichever a probe at creation finds right ('auto', default)
   */
  fma?: FmaMode;
}

export interface WebGpuDevice extends Device {
  readonly gpu: GpuSetup;
  close(): Promise<void>;
}

const SUPPORTED_OPS = new Set(['get_rows', 'mul_mat', 'add', 'mul', 'scale', 'rms_norm', 'l2_norm', 'rope', 'swiglu', 'geglu', 'softcap', 'view_cols', 'view_blocks', 'silu', 'sigmoid', 'scale_rows', 'kv_store', 'attention']);
const EW_OPS = new Set<string>(['add', 'mul', 'scale', 'softcap', 'swiglu', 'geglu', 'view_cols', 'view_blocks', 'silu', 'sigmoid', 'scale_rows']);
const weightTypes = new Set(WEIGHT_TYPES);
/** the graph's weight type (the cpu device's 4-row layouts read as their base type: the upload undoes them) */
const typeOf = (t: TensorDesc): number => (typeof t.dtype === 'number' ? baseType(t.dtype) : t.dtype === 'f16' ? GgmlType.F16 : GgmlType.F32);
const tBytes = (t: TensorDesc) => tensorBytes(t, (type, ne0) => rowBytes(baseType(type), ne0));
const round4 = (n: number) => Math.ceil(n / 4) * 4;
const PARAM_SLOT = 256; // >= minUniformBufferOffsetAlignment everywhere
/** the activation rounding ggml applies before a matmul with this weight type (its vec_dot_type) */
const actQuant = (type: number): ActQuant | null =>
  type === GgmlType.Q8_0 || type === GgmlType.Q4_0 ? 'q8_0' : type === GgmlType.Q4_K || type === GgmlType.Q6_K ? 'q8_k' : type === GgmlType.F16 ? 'f16' : null;

interface Binding { buffer: GPUBuffer; offset: number; size: number }
interface Dispatch { pipeline: GPUComputePipeline; bind: GPUBindGroup; x: number; y: number }
interface RopeTable { pos: Placement; nTok: number; nDims: number; thetaScale: number; freqScale: number; factors: Float32Array | null; host: Float32Array; gpu: GPUBuffer }
interface Read { src: GPUBuffer; offset: number; size: number; shadow: Uint8Array }
interface KvRead { cache: GpuBuffer; cacheOffset: number; rowBytes: number; pos: Placement; nTok: number }
interface Program {
  placement: (id: number) => Placement;
  dispatches: Dispatch[];
  ropes: RopeTable[];
  reads: Read[];
  kvReads: KvRead[];
  params: GPUBuffer;
  keep: GPUBuffer[];
}
/** a submitted split's readback: resolved once its bytes are in the shadows */
interface Pending { staging: GPUBuffer; bytes: number; copies: { shadow: Uint8Array; at: number; stagingAt: number; size: number }[]; mapped: Promise<void>; done: boolean }

/** 4-row interleaved Q4_0/Q8_0 (the cpu device's layouts) back to plain rows */
function unpackRows4(src: Uint8Array, rows: number, cols: number, bs: number): Uint8Array {
  const nb = cols / 32, rb = nb * bs, qb = bs - 2, out = new Uint8Array(rows * rb);
  for (let g = 0; g < rows; g += 4) {
    for (let b = 0; b < nb; b++) {
      const o = g * rb + b * 4 * bs;
      for (let j = 0; j < 4; j++) {
        const d = (g + j) * rb + b * bs;
        out[d] = src[o + 2 * j]!;
        out[d + 1] = src[o + 2 * j + 1]!;
        out.set(src.subarray(o + 8 + qb * j, o + 8 + qb * (j + 1)), d + 2);
      }
    }
  }
  return out;
}

export async function createWebGpuDevice(o: WebGpuDeviceOptions = {}): Promise<WebGpuDevice> {
  const gpu = await setupGpu(o);
  const dev = gpu.device;
  const L = { ...gpu.limits, maxBinding: Math.min(gpu.limits.maxBinding, o.maxBindingBytes ?? Infinity) };
  const align = Math.max(256, L.storageAlign);
  let liveBytes = 0;
  const bt = gpuBufferType(dev, align, L.maxBuffer, (d) => { liveBytes += d; });
  const fused = o.fma === 'native' ? true : o.fma === 'emulated' ? false : await probeFusedFma(dev);
  const pipelines = new Map<string, GPUComputePipeline>();
  const pipeline = (key: string, code: () => string): GPUComputePipeline => {
    let p = pipelines.get(key);
    if (!p) {
      // every fma is fmaX: the kernels use fma( only where ggml fuses one
      const src = withFmaX(code(), fused);
      const module = dev.createShaderModule({ code: src, label: key });
      p = dev.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' }, label: key });
      pipelines.set(key, p);
    }
    return p;
  };
  /** weights uploaded from another device's buffer: per buffer, per offset */
  const mirrors = new WeakMap<DeviceBuffer, Map<number, GPUBuffer>>();
  const consumersOf = new WeakMap<Graph, Map<number, number[]>>();

  const own = (b: DeviceBuffer): b is GpuBuffer => isGpuBuffer(b, dev);

  /** the GPU buffer and range of a source tensor: its own placement, or (a weight elsewhere) an uploaded copy */
  function bindingOf(t: TensorDesc, p: Placement): Binding {
    if (own(p.buffer)) return { buffer: p.buffer.gpu, offset: p.offset, size: p.nBytes };
    if (t.role !== 'weight') throw new DeviceError('UNSUPPORTED', `webgpu: ${t.name} (${t.role}) is not on the webgpu device`);
    let m = mirrors.get(p.buffer);
    if (!m) mirrors.set(p.buffer, (m = new Map()));
    let g = m.get(p.offset);
    if (!g) {
      const host = p.buffer.hostView?.(p.offset, p.nBytes) ?? p.buffer.get(p.offset, p.nBytes);
      const rows = t.shape.slice(1).reduce((a, b) => a * b, 1);
      const bytes = t.dtype === CpuLayout.Q4_0r4 ? unpackRows4(host, rows, t.shape[0]!, 18)
        : t.dtype === CpuLayout.Q8_0r4 ? unpackRows4(host, rows, t.shape[0]!, 34) : host;
      if (bytes.length > L.maxBuffer) throw new DeviceError('OVER_BUDGET', `webgpu: ${t.name} (${bytes.length} bytes) exceeds maxBufferSize ${L.maxBuffer}`);
      g = dev.createBuffer({ size: Math.max(4, round4(bytes.length)), usage: USAGE.STORAGE | USAGE.COPY_DST, label: t.name });
      // a copy: padded to 4 bytes, and the cpu device's memory is a SharedArrayBuffer (Dawn refuses those)
      const padded = new Uint8Array(round4(bytes.length));
      padded.set(bytes);
      dev.queue.writeBuffer(g, 0, padded.buffer, 0, padded.length);
      liveBytes += g.size;
      m.set(p.offset, g);
    }
    return { buffer: g, offset: 0, size: p.nBytes };
  }

  /** host bytes of a (small) source tensor: rope factors */
  function hostF32(p: Placement, n: number): Float32Array {
    const v = own(p.buffer) ? p.buffer.get(p.offset, 4 * n) : (p.buffer.hostView?.(p.offset, 4 * n) ?? p.buffer.get(p.offset, 4 * n));
    return new Float32Array(v.buffer.slice(v.byteOffset, v.byteOffset + 4 * n));
  }
  function i32Shadow(p: Placement, n: number): Int32Array {
    if (!own(p.buffer) || !p.buffer.shadow) throw new DeviceError('UNSUPPORTED', 'webgpu: positions are not readable on the host');
    const s = p.buffer.shadow;
    return new Int32Array(s.buffer, s.byteOffset + p.offset, n);
  }

  const grid = (groups: number): [number, number] => {
    const x = Math.min(Math.max(groups, 1), L.maxWorkgroupsPerDim);
    return [x, Math.ceil(Math.max(groups, 1) / x)];
  };

  /** row chunks of a weight matrix so each binding stays within maxStorageBufferBindingSize (offsets aligned) */
  function rowChunks(rb: number, rows: number): [number, number][] {
    if (rb * rows <= L.maxBinding) return [[0, rows]];
    const gcd = (a: number, b: number): number => (b ? gcd(b, a % b) : a);
    const q = L.storageAlign / gcd(rb, L.storageAlign);
    const per = Math.floor(Math.floor(L.maxBinding / rb) / q) * q;
    if (per < 1) throw new DeviceError('UNSUPPORTED', `webgpu: a weight row of ${rb} bytes exceeds the binding limit`);
    const out: [number, number][] = [];
    for (let r = 0; r < rows; r += per) out.push([r, Math.min(per, rows - r)]);
    return out;
  }

  function supportsOp(t: TensorDesc, g: Graph): boolean {
    if (!SUPPORTED_OPS.has(t.op)) return false;
    const src = t.src.map((s) => g.tensors[s]!);
    // every binding but a chunked weight within the binding limit
    const fits = (x: TensorDesc) => tBytes(x) <= L.maxBinding;
    if (!fits(t)) return false;
    switch (t.op) {
      case 'mul_mat': case 'get_rows': {
        const w = src[0]!;
        // a weight of a type with a kernel, or (get_rows of the output rows) an f32 intermediate
        if (typeof w.dtype === 'number' ? !weightTypes.has(baseType(w.dtype)) : w.dtype !== 'f32' || t.op !== 'get_rows') return false;
        if (w.shape.length > 2) return false;
        // rows must chunk at aligned offsets when the matrix is wider than one binding
        try { rowChunks(rowBytes(typeOf(w), w.shape[0]!), w.shape[1] ?? 1); } catch { return false; }
        return src.slice(1).every((x) => x.role === 'weight' || fits(x));
      }
      case 'kv_store': {
        const c = src[0]!;
        if (c.dtype !== 'f16' && c.dtype !== 'f32') return false;
        if (c.dtype === 'f16' && c.shape[0]! % 2) return false;
        return fits(c) && fits(src[1]!);
      }
      case 'attention': {
        const p = t.params, kc = src[1]!;
        if ((p.seqStride as number | undefined ?? 0) > 0) return false;
        const dk = p.headDimK as number, dv = p.headDimV as number;
        if (dk > ATTN_MAX_HEAD || dv > ATTN_MAX_HEAD || (kc.dtype === 'f16' && (dk % 2 || dv % 2))) return false;
        if (kc.dtype !== 'f16' && kc.dtype !== 'f32') return false;
        return src.slice(0, 4).every(fits);
      }
      default:
        return src.every((x) => x.role === 'weight' ? typeof x.dtype !== 'number' || x.dtype === GgmlType.F32 : x.dtype === 'f32' || x.dtype === 'i32') && src.every(fits);
    }
  }

  /** nodes whose results the host or another device may read: the output, and those read outside the split */
  function escaping(g: Graph, nodes: readonly number[]): number[] {
    let cons = consumersOf.get(g);
    if (!cons) {
      cons = new Map();
      for (const id of g.nodes) for (const s of g.tensors[id]!.src) { let l = cons.get(s); if (!l) cons.set(s, (l = [])); l.push(id); }
      consumersOf.set(g, cons);
    }
    const inSplit = new Set(nodes);
    return nodes.filter((id) => id === g.output || (cons!.get(id) ?? []).some((c) => !inSplit.has(c)));
  }

  function compile(ctx: ComputeContext, nodes: readonly number[]): Program {
    const g = ctx.graph, at = ctx.placement;
    const dispatches: Dispatch[] = [];
    const ropes: RopeTable[] = [];
    const ropeByKey = new Map<string, RopeTable>();
    const kvReads: KvRead[] = [];
    const keep: GPUBuffer[] = [];
    const params: Uint32Array[] = [];
    const pending: { pipeline: GPUComputePipeline; slot: number; bindings: Binding[]; x: number; y: number }[] = [];
    const T = (id: number) => g.tensors[id]!;
    const B = (id: number): Binding => {
      const p = at(id);
      const b = bindingOf(T(id), p);
      if (b.offset % L.storageAlign) throw new DeviceError('UNSUPPORTED', `webgpu: ${T(id).name} at offset ${b.offset}, not a multiple of ${L.storageAlign}`);
      return { ...b, size: Math.max(4, round4(b.size)) };
    };
    const emit = (key: string, code: () => string, words: number[], bindings: Binding[], groups: number) => {
      const slot = params.length;
      const u = new Uint32Array(PARAM_SLOT / 4);
      u.set(words);
      params.push(u);
      const [x, y] = grid(groups);
      pending.push({ pipeline: pipeline(key, code), slot, bindings, x, y });
    };
    const f = (x: number) => new Uint32Array(new Float32Array([x]).buffer)[0]!;
    // one scratch buffer for the quantized activations of every matmul (dispatches run in order); matmuls
    // reading the same input with the same rounding (Q/K/V, gate/up) share one quantization
    let actBytes = 0;
    for (const id of nodes) {
      const t = T(id);
      if (t.op === 'mul_mat' && actQuant(typeOf(T(t.src[0]!)))) actBytes = Math.max(actBytes, tBytes(T(t.src[1]!)));
    }
    const act = actBytes ? dev.createBuffer({ size: round4(actBytes), usage: USAGE.STORAGE }) : null;
    if (act) keep.push(act);
    let lastAct = '';

    for (const id of nodes) {
      const t = T(id);
      const s = (i: number) => T(t.src[i]!);
      const n = nElements(t);
      switch (t.op) {
        case 'mul_mat': case 'get_rows': {
          const w = s(0), type = typeOf(w), K = w.shape[0]!, rows = w.shape[1] ?? 1, rb = rowBytes(type, K);
          const wb = bindingOf(w, at(w.id));
          for (const [r0, nr] of rowChunks(rb, rows)) {
            const wbind: Binding = { buffer: wb.buffer, offset: wb.offset + r0 * rb, size: round4(nr * rb) };
            if (wbind.offset + wbind.size > wb.buffer.size) wbind.size = wb.buffer.size - wbind.offset;
            if (t.op === 'mul_mat') {
              const x = s(1), M = x.shape[1] ?? 1;
              const aq = actQuant(type);
              let xb = B(x.id);
              if (aq === 'q8_0' || aq === 'q8_k') {
                // ggml's integer path: activations quantized as ggml does, block dots in its float order
                const nx = nElements(x), lay = actLayout(aq, nx);
                const repack = llamaRepacks(type, rows), gemmRows = q4KGemmRows(type, rows, M);
                const key = `${x.id}:${aq}:${gemmRows}`;
                if (key !== lastAct) {
                  emit(`aqq:${aq}`, () => actQuantQShader(aq as ActQ), [nx, K, gemmRows, lay.dOff, lay.bOff], [xb, { buffer: act!, offset: 0, size: round4(4 * lay.words) }], Math.ceil(nx / (aq === 'q8_0' ? 32 : 256) / WG));
                  lastAct = key;
                }
                const chain = type === GgmlType.Q4_0 || (type === GgmlType.Q4_K && repack);
                const nrg = Math.ceil(nr / MMQ_ROWS), nt = Math.ceil(M / MMQ_TM);
                emit(`mmq:${type}:${chain}`, () => mulMatQShader(type, chain), [K, nr, M, rb, r0, rows, nrg, nt, repack ? 1 : 0, gemmRows, lay.dOff, lay.bOff],
                  [wbind, { buffer: act!, offset: 0, size: round4(4 * lay.words) }, B(id)], nrg * nt);
                continue;
              }
              if (aq) {
                const key = `${x.id}:${aq}`, nx = nElements(x);
                if (key !== lastAct) {
                  const groups = Math.ceil((aq === 'f16' ? nx : aq === 'q8_0' ? nx / 32 : nx / 256) / WG);
                  emit(`aq:${aq}`, () => actQuantShader('f16'), [nx], [xb, { buffer: act!, offset: 0, size: round4(4 * nx) }], groups);
                  lastAct = key;
                }
                xb = { buffer: act!, offset: 0, size: round4(4 * nx) };
              }
              // F32/F16: tinyBLAS's or ggml_vec_dot_f32/_f16's order (shaders-mmf.ts)
              const f16 = type === GgmlType.F16, tiny = usesTinyBlas(M, K, rows);
              const nrg = Math.ceil(nr / MMF_ROWS), nt = Math.ceil(M / MMF_TM);
              emit(`mmf:${f16}:${tiny}`, () => mulMatFShader(f16, tiny), [K, nr, M, rb, r0, rows, nrg, nt], [wbind, xb, B(id)], nrg * nt);
            } else {
              const nIds = s(1).shape[0]!, nsb = Math.ceil(K / 32);
              emit(`gr:${type}`, () => getRowsShader(type), [K, nIds, rb, r0, nr, nsb], [wbind, B(t.src[1]!), B(id)], Math.ceil(nIds * nsb / WG));
            }
          }
          break;
        }
        case 'rms_norm': case 'l2_norm': {
          const len = t.params.rowLen as number;
          const kind = t.op === 'rms_norm' ? 'rms' : 'l2';
          const eps = t.params.eps as number;
          emit(`norm:${kind}`, () => normShader(kind), [len, n / len, f(eps), f(eps - Math.fround(eps))], [B(t.src[0]!), B(id)], n / len);
          break;
        }
        case 'rope': {
          const p = t.params, nTok = t.shape[1] ?? 1, nDims = p.nDims as number;
          const factorsId = t.src[2];
          const key = `${t.src[1]}:${nDims}:${p.freqBase}:${p.freqScale}:${factorsId ?? ''}`;
          let tab = ropeByKey.get(key);
          if (!tab) {
            const host = new Float32Array(nTok * nDims);
            const buf = dev.createBuffer({ size: host.byteLength, usage: USAGE.STORAGE | USAGE.COPY_DST });
            keep.push(buf);
            tab = { pos: at(t.src[1]!), nTok, nDims, thetaScale: ropeThetaScale(p.freqBase as number, nDims), freqScale: p.freqScale as number, factors: factorsId !== undefined ? hostF32(at(factorsId), nDims / 2) : null, host, gpu: buf };
            ropeByKey.set(key, tab);
            ropes.push(tab);
          }
          emit('rope', ropeShader, [n, t.shape[0]!, p.headDim as number, nDims, p.neox ? 1 : 0], [B(t.src[0]!), { buffer: tab.gpu, offset: 0, size: tab.host.byteLength }, B(id)], Math.ceil(n / WG));
          break;
        }
        case 'kv_store': {
          const c = s(0), x = s(1), f16 = c.dtype === 'f16', rowLen = x.shape[0]!, nTok = x.shape[1] ?? 1;
          const cp = at(c.id);
          emit(`kv:${f16}`, () => kvStoreShader(f16), [rowLen, nTok], [B(c.id), B(x.id), B(t.src[2]!)], Math.ceil(nTok * (f16 ? rowLen / 2 : rowLen) / WG));
          if (own(cp.buffer) && cp.buffer.shadow) kvReads.push({ cache: cp.buffer, cacheOffset: cp.offset, rowBytes: rowLen * (f16 ? 2 : 4), pos: at(t.src[2]!), nTok });
          break;
        }
        case 'attention': {
          const p = t.params, kc = s(1), f16 = kc.dtype === 'f16', nTok = s(0).shape[1] ?? 1, nHead = p.nHead as number;
          const cap = p.softcap as number;
          const batch = nTok >= 2;
          emit(`attn:${f16}:${batch}`, () => attentionShader(f16, batch), [nHead, p.nHeadKv as number, p.headDimK as number, p.headDimV as number, nTok, p.window as number, f(Math.fround(p.scale as number)), f(cap), f(cap > 0 ? Math.fround(1 / cap) : 0)],
            [B(t.src[0]!), B(t.src[1]!), B(t.src[2]!), B(t.src[3]!), B(id)], nTok * nHead);
          break;
        }
        default: {
          if (!EW_OPS.has(t.op)) throw new DeviceError('UNSUPPORTED', `webgpu: no kernel for ${t.op} (${t.name})`);
          const op = t.op as EwOp, a = s(0), p = t.params;
          let nb = 0, s0 = 0, s1 = 0, w = 0, srcw = 0, off = 0, blk = 0, stride = 0;
          if (op === 'add' || op === 'mul') nb = nElements(s(1));
          if (op === 'scale') s0 = Math.fround(p.scale as number);
          if (op === 'softcap') { s0 = Math.fround(1 / (p.cap as number)); s1 = Math.fround(p.cap as number); }
          if (op === 'view_cols' || op === 'view_blocks') { w = t.shape[0]!; srcw = a.shape[0]!; off = p.offset as number; }
          if (op === 'view_blocks') { blk = p.block as number; stride = p.stride as number; }
          if (op === 'scale_rows') w = t.shape[0]!;
          const binds = ewHasB(op) ? [B(a.id), B(t.src[1]!), B(id)] : [B(a.id), B(id)];
          emit(`ew:${op}`, () => elementwiseShader(op), [n, nb, f(s0), f(s1), w, srcw, off, blk, stride], binds, Math.ceil(n / WG));
        }
      }
    }
    const paramBuf = dev.createBuffer({ size: Math.max(PARAM_SLOT, params.length * PARAM_SLOT), usage: USAGE.UNIFORM | USAGE.COPY_DST });
    keep.push(paramBuf);
    const all = new Uint32Array(params.length * (PARAM_SLOT / 4));
    params.forEach((u, i) => all.set(u, i * (PARAM_SLOT / 4)));
    if (all.length) dev.queue.writeBuffer(paramBuf, 0, all);
    for (const d of pending) {
      const entries: GPUBindGroupEntry[] = [{ binding: 0, resource: { buffer: paramBuf, offset: d.slot * PARAM_SLOT, size: 64 } }];
      d.bindings.forEach((b, i) => entries.push({ binding: i + 1, resource: { buffer: b.buffer, offset: b.offset, size: b.size } }));
      dispatches.push({ pipeline: d.pipeline, bind: dev.createBindGroup({ layout: d.pipeline.getBindGroupLayout(0), entries }), x: d.x, y: d.y });
    }
    const reads: Read[] = [];
    for (const id of escaping(g, nodes)) {
      const t = T(id), p = at(id);
      if (t.op === 'kv_store' || tBytes(t) === 0) continue;
      if (!own(p.buffer) || !p.buffer.shadow) continue;
      reads.push({ src: p.buffer.gpu, offset: p.offset, size: round4(p.nBytes), shadow: p.buffer.shadow });
    }
    return { placement: at, dispatches, ropes, reads, kvReads, params: paramBuf, keep };
  }

  const device: WebGpuDevice = {
    name: o.name ?? 'webgpu',
    kind: 'gpu',
    gpu,
    description: `WebGPU (${gpu.adapterName}${gpu.fallbackAdapter ? ', software fallback adapter' : ''}; backend ${gpu.backend}; f32 kernels, fma ${fused ? 'native' : 'emulated'}${gpu.features.f16 ? ', shader-f16 available' : ''}${gpu.features.subgroups ? ', subgroups available' : ''}; max binding ${L.maxBinding >> 20} MiB)`,
    memory: () => ({ free: Math.max(0, L.maxBuffer - liveBytes), total: L.maxBuffer }),
    bufferType: () => bt,
    supportsOp,
    prefersOp: () => true,
    holdsWeight: () => true,
    describe(): DeviceDescription {
      return { ops: [...SUPPORTED_OPS], weightTypes: WEIGHT_TYPES.map(ggmlTypeName), status: 'ok' };
    },
    createBackend(): Backend {
      const programs = new WeakMap<readonly number[], Program>();
      const queue: Pending[] = [];
      const stagingPool: GPUBuffer[] = [];
      const program = (ctx: ComputeContext, nodes: readonly number[]): Program => {
        let p = programs.get(nodes);
        if (p && p.placement === ctx.placement) return p;
        if (p) for (const b of p.keep) b.destroy();
        p = compile(ctx, nodes);
        programs.set(nodes, p);
        return p;
      };
      const staging = (size: number): GPUBuffer => {
        const i = stagingPool.findIndex((b) => b.size >= size);
        if (i >= 0) return stagingPool.splice(i, 1)[0]!;
        return dev.createBuffer({ size: Math.max(256, round4(size)), usage: USAGE.MAP_READ | USAGE.COPY_DST });
      };
      const run = (prog: Program): Pending | null => {
        for (const r of prog.ropes) {
          const pos = i32Shadow(r.pos, r.nTok);
          for (let t = 0; t < r.nTok; t++) ropeCacheRow(pos[t]!, r.nDims, r.thetaScale, r.freqScale, r.factors, 1, r.host, t * r.nDims);
          dev.queue.writeBuffer(r.gpu, 0, r.host);
        }
        const enc = dev.createCommandEncoder();
        const pass = enc.beginComputePass();
        for (let i = 0; i < prog.dispatches.length; i++) {
          const d = prog.dispatches[i]!;
          pass.setPipeline(d.pipeline);
          pass.setBindGroup(0, d.bind);
          pass.dispatchWorkgroups(d.x, d.y);
        }
        pass.end();
        // what the host may read next: static ranges, then the KV rows written (positions from the host copy)
        const copies: Pending['copies'] = [];
        const srcs: GPUBuffer[] = [];
        let total = 0;
        for (const r of prog.reads) { copies.push({ shadow: r.shadow, at: r.offset, stagingAt: total, size: r.size }); srcs.push(r.src); total += r.size; }
        for (const k of prog.kvReads) {
          const pos = i32Shadow(k.pos, k.nTok);
          let lo = Infinity, hi = -1;
          for (let i = 0; i < k.nTok; i++) { lo = Math.min(lo, pos[i]!); hi = Math.max(hi, pos[i]!); }
          const at = k.cacheOffset + lo * k.rowBytes, size = round4((hi - lo + 1) * k.rowBytes);
          copies.push({ shadow: k.cache.shadow!, at, stagingAt: total, size });
          srcs.push(k.cache.gpu);
          total += size;
        }
        let pend: Pending | null = null;
        if (copies.length) {
          const st = staging(total);
          copies.forEach((c, i) => enc.copyBufferToBuffer(srcs[i]!, c.at, st, c.stagingAt, c.size));
          dev.queue.submit([enc.finish()]);
          pend = { staging: st, bytes: round4(total), copies, mapped: st.mapAsync(MAP_READ, 0, round4(total)), done: false };
          queue.push(pend);
        } else dev.queue.submit([enc.finish()]);
        return pend;
      };
      /** finishes the readbacks queued up to and including `upTo` (all when null), in submit order */
      const finish = async (upTo: Pending | null): Promise<void> => {
        if (!upTo) { await dev.queue.onSubmittedWorkDone(); if (!queue.length) return; upTo = queue[queue.length - 1]!; }
        while (queue.length && !upTo.done) {
          const p = queue[0]!;
          await p.mapped;
          queue.shift();
          const bytes = new Uint8Array(p.staging.getMappedRange(0, p.bytes));
          for (const c of p.copies) c.shadow.set(bytes.subarray(c.stagingAt, c.stagingAt + c.size), c.at);
          p.staging.unmap();
          p.done = true;
          stagingPool.push(p.staging);
        }
      };
      return {
        device,
        prepare(ctx, nodes) { program(ctx, nodes); },
        submit(ctx, nodes): DeviceEvent {
          const pend = run(program(ctx, nodes));
          return { wait: () => finish(pend) };
        },
        compute(ctx, nodes) { return finish(run(program(ctx, nodes))); },
        release(nodes) {
          const p = programs.get(nodes);
          if (p) { for (const b of p.keep) b.destroy(); programs.delete(nodes); }
        },
      };
    },
    async close() { gpu.destroy(); },
  };
  return device;
}
