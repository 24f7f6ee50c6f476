// The `cpu` device: weights, KV cache and activations live in one shared WebAssembly.Memory; hot
// ops run as WASM SIMD128 kernels split across worker threads (src/backends/cpu/runtime.ts).
// Ops without a fast kernel yet (or with numerics the kernels don't reproduce, e.g. gemma's
// f16-table GELU) run the reference kernels directly on views of the same memory, so the device
// supports every op and nothing is copied.

import type { Backend, BufferType, BufferUsage, ComputeContext, Device, DeviceBuffer, Placement } from '../backend.js';
import type { Graph, TensorDesc } from '../../graph/graph.js';
import { nElements } from '../../graph/graph.js';
import { GgmlType } from '../../gguf/ggml-types.js';
import { computeNode } from '../reference/device.js';
import { createCpuRuntime, MATMUL_TYPES, type CpuRuntime, type CpuRuntimeOptions } from './runtime.js';

export interface CpuBuffer extends DeviceBuffer {
  /** byte address of the buffer in the wasm memory */
  readonly ptr: number;
}

function cpuBufferType(rt: CpuRuntime): BufferType {
  const type: BufferType = {
    name: 'cpu-wasm',
    alignment: 64,
    allocate(size: number, usage: BufferUsage): CpuBuffer {
      const ptr = rt.alloc(Math.max(size, 1), 64);
      const view = (off: number, len: number) => new Uint8Array(rt.memory.buffer, ptr + off, len);
      return {
        ptr, size, usage, type,
        set(offset, bytes) { view(offset, bytes.length).set(bytes); },
        get(offset, length, dest) {
          const v = view(offset, length);
          if (!dest) return v.slice();
          dest.set(v);
          return dest;
        },
        clear(value = 0) { view(0, size).fill(value); },
        copyTo(dst, srcOffset, dstOffset, length) {
          const d = dst as Partial<CpuBuffer>;
          if (d.ptr !== undefined && dst.type === type) rt.copy(ptr + srcOffset, d.ptr + dstOffset, length);
          else dst.set(dstOffset, view(srcOffset, length));
        },
        hostView: view,
        // the runtime's allocator is a bump allocator: memory comes back when the device closes
        free() {},
      };
    },
  };
  return type;
}

const F32 = GgmlType.F32;
const typeId = (t: TensorDesc) => (typeof t.dtype === 'number' ? t.dtype : t.dtype === 'f16' ? GgmlType.F16 : F32);
const matmulTypes = new Set(MATMUL_TYPES);
const EXACT_ROPE = true;
const EXACT_ATTENTION = true;

/**
 * Does the WASM kernel reproduce ggml's float order (src/backends/reference/matmul.ts) for this
 * weight type, weight row count and batch? Otherwise the reference kernel runs on the same memory.
 */
function exactMatmul(wt: number, rows: number, nTok: number): boolean {
  void nTok;
  switch (wt) {
    case GgmlType.F32: case GgmlType.F16: case GgmlType.Q8_0: case GgmlType.Q6_K: return true;
    // repacked by llama.cpp (GEMV/GEMM orders) only with rows % 8 == 0; otherwise the AVX2 vec_dot
    case GgmlType.Q4_0: case GgmlType.Q4_K: return rows % 8 === 0;
    default: return false;
  }
}

export interface CpuDeviceOptions extends CpuRuntimeOptions {
  /**
   * 'exact' (default): every op reproduces the reference backend bit for bit; weight types whose WASM
   * kernels do not follow ggml's float order yet (Q4_1, Q5_*, Q2_K, Q3_K, Q5_K, IQ4_*, BF16, and Q4_0/Q4_K
   * with rows % 8 != 0) run the reference kernel. 'fast': those use their WASM kernels anyway
   * (results agree to float rounding, not bitwise).
   */
  numerics?: 'exact' | 'fast';
}

export async function createCpuDevice(opts: CpuDeviceOptions = {}): Promise<Device & { runtime: CpuRuntime; close(): Promise<void> }> {
  const rt = await createCpuRuntime(opts);
  const fastNumerics = opts.numerics === 'fast';
  const bt = cpuBufferType(rt);
  const ptrOf = (p: Placement) => (p.buffer as CpuBuffer).ptr + p.offset;
  const i32 = (p: Placement, n: number) => new Int32Array(rt.memory.buffer, ptrOf(p), n);

  function fast(g: Graph, t: TensorDesc, at: (id: number) => Placement): boolean {
    const src = (i: number) => g.tensors[t.src[i]!]!;
    const p = (i: number) => ptrOf(at(t.src[i]!));
    const y = ptrOf(at(t.id));
    const n = nElements(t);
    switch (t.op) {
      case 'mul_mat': {
        const w = src(0), x = src(1), wt = typeId(w);
        if (!matmulTypes.has(wt) || (!fastNumerics && !exactMatmul(wt, w.shape[1] ?? 1, x.shape[1] ?? 1))) return false;
        rt.matmul(wt, p(0), w.shape[1] ?? 1, w.shape[0]!, p(1), x.shape[1] ?? 1, y);
        return true;
      }
      case 'get_rows': {
        const w = src(0), ids = src(1);
        rt.getRows(typeId(w), p(0), w.shape[0]!, i32(at(ids.id), ids.shape[0]!), y);
        return true;
      }
      case 'rms_norm': {
        const rowLen = t.params.rowLen as number;
        rt.rmsNorm(p(0), y, rowLen, n / rowLen, t.params.eps as number);
        return true;
      }
      case 'add': case 'mul': {
        const nb = nElements(src(1));
        if (nb === n) (t.op === 'add' ? rt.add : rt.mul).call(rt, p(0), p(1), y, n);
        else if (t.op === 'add') rt.addRow(p(0), p(1), y, nb, n / nb);
        else for (let r = 0; r < n; r += nb) rt.mul(p(0) + 4 * r, p(1), y + 4 * r, nb);
        return true;
      }
      case 'scale': rt.scale(p(0), y, n, t.params.scale as number); return true;
      case 'swiglu': rt.siluMul(p(0), p(1), y, n); return true;
      case 'view_cols': {
        const w = t.shape[0]!, srcW = src(0).shape[0]!, off = t.params.offset as number;
        for (let r = 0; r < n / w; r++) rt.copy(p(0) + 4 * (r * srcW + off), y + 4 * r * w, 4 * w);
        return true;
      }
      case 'kv_store': {
        const cache = src(0), x = src(1);
        const row = x.shape[0]!, nTok = x.shape[1]!;
        const pos = i32(at(t.src[2]!), nTok);
        for (let i = 0; i < nTok; i++) {
          if (cache.dtype === 'f16') rt.f32ToF16(p(1) + 4 * i * row, p(0) + 2 * pos[i]! * row, row);
          else rt.copy(p(1) + 4 * i * row, p(0) + 4 * pos[i]! * row, 4 * row);
        }
        return true;
      }
      case 'rope': {
        if (!EXACT_ROPE) return false;
        const pp = t.params;
        const nTok = t.shape[1]!, rowLen = t.shape[0]!;
        rt.copy(p(0), y, 4 * n);
        rt.rope({
          x: y, nTokens: nTok, nHead: rowLen / (pp.headDim as number), headDim: pp.headDim as number, nDims: pp.nDims as number,
          positions: i32(at(t.src[1]!), nTok), freqBase: pp.freqBase as number, freqScale: pp.freqScale as number, neox: !!pp.neox,
          freqFactors: t.src.length > 2 ? rt.f32(p(2), (pp.nDims as number) / 2) : undefined,
        });
        return true;
      }
      case 'attention': {
        const pp = t.params;
        const kc = src(1);
        const hd = pp.headDimK as number;
        if (!EXACT_ATTENTION || kc.dtype !== 'f16' || (pp.softcap as number) > 0 || hd !== pp.headDimV || hd % 16) return false;
        const nTok = t.shape[1]!;
        const pos = i32(at(t.src[3]!), nTok);
        let maxPos = 0;
        for (let i = 0; i < nTok; i++) if (pos[i]! > maxPos) maxPos = pos[i]!;
        rt.attentionGgml({
          q: p(0), k: p(1), v: p(2), out: y, nTokens: nTok, nHead: pp.nHead as number, nKvHead: pp.nHeadKv as number,
          headDim: hd, scale: pp.scale as number, positions: p(3), maxPos, window: pp.window as number,
        });
        return true;
      }
      default:
        return false;
    }
  }

  const device: Device & { runtime: CpuRuntime; close(): Promise<void> } = {
    name: 'cpu',
    kind: 'cpu',
    description: `WebAssembly SIMD128 kernels on ${rt.threads} thread${rt.threads === 1 ? '' : 's'}`,
    runtime: rt,
    memory: () => ({ free: 4 * 1024 ** 3 - rt.used(), total: 4 * 1024 ** 3 }),
    bufferType: () => bt,
    supportsOp: () => true,
    prefersOp: () => true,
    createBackend(): Backend {
      return {
        device,
        compute(ctx: ComputeContext, nodes: readonly number[]) {
          const g = ctx.graph;
          for (const id of nodes) {
            const t = g.tensors[id]!;
            if (!fast(g, t, ctx.placement)) computeNode(g, t, ctx.placement);
          }
        },
      };
    },
    close: () => rt.close(),
  };
  return device;
}
