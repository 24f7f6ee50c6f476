// The `cpu` device: weights, KV cache and activations live in one shared WebAssembly.Memory; hot
// ops run as WASM SIMD128 kernels split across worker threads (src/backends/cpu/runtime.ts).
// Ops without a fast kernel yet (or with numerics the kernels don't reproduce, e.g. gemma's
// f16-table GELU) run the reference kernels directly on views of the same memory, so the device
// supports every op and nothing is copied.

import type { Backend, BufferType, BufferUsage, ComputeContext, Device, DeviceBuffer, Placement } from '../backend.js';
import type { Graph, TensorDesc } from '../../graph/graph.js';
import { nElements } from '../../graph/graph.js';
import { GgmlType, ggmlTypeName } from '../../gguf/ggml-types.js';
import { computeNode } from '../reference/device.js';
import { activationTypeFor, createCpuRuntime, CpuLayout, CpuRuntimeError, MATMUL_TYPES, q4KGemmRows, type CpuRuntime, type CpuRuntimeOptions, type GgmlAttentionArgs, type RopeArgs } from './runtime.js';

export interface CpuBuffer extends DeviceBuffer {
  /** byte address of the buffer in the wasm memory */
  readonly ptr: number;
}

const gib = (n: number) => `${(n / 2 ** 30).toFixed(2)} GiB (${n} bytes)`;

function cpuBufferType(rt: CpuRuntime): BufferType {
  const type: BufferType = {
    name: 'cpu-wasm',
    alignment: 64,
    allocate(size: number, usage: BufferUsage): CpuBuffer {
      // wasm32 addresses at most 4 GiB: say so in terms of the model rather than of the allocator
      if (rt.used() + size > rt.maxBytes) {
        throw new CpuRuntimeError('OUT_OF_MEMORY', `cpu device: ${usage} need ${gib(size)} but the WebAssembly memory holds at most ` +
          `${gib(rt.maxBytes)} (wasm32's limit is 4 GiB) and ${gib(rt.used())} are in use; use a smaller quantization or another device`);
      }
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

/**
 * Does the WASM kernel reproduce ggml's float order (src/backends/reference/matmul.ts) for this
 * weight type and weight row count? Otherwise the reference kernel runs on the same memory.
 */
function exactMatmul(wt: number, rows: number): boolean {
  switch (wt) {
    case GgmlType.F32: case GgmlType.F16: case GgmlType.Q8_0: case GgmlType.Q6_K: return true;
    // repacked by llama.cpp (GEMV/GEMM orders) only with rows % 8 == 0; otherwise the AVX2 vec_dot
    case GgmlType.Q4_0: case GgmlType.Q4_K: case CpuLayout.Q4_0x4: case CpuLayout.Q4_0r4: return rows % 8 === 0;
    default: return false;
  }
}

/**
 * Weight types whose reference kernel reproduces llama.cpp's x86 float order (checked bit for bit
 * against llama.cpp on the parity fixtures). For every other type the reference uses ggml's generic
 * formulas, which match llama.cpp only to float rounding anyway, so the 'exact' device runs the fast
 * WASM kernels for them: falling back to plain TS there would cost ~10x speed for no fidelity.
 */
export const LLAMA_EXACT_MATMUL_TYPES: ReadonlySet<number> = new Set([GgmlType.F32, GgmlType.F16, GgmlType.Q8_0, GgmlType.Q6_K, GgmlType.Q4_0, GgmlType.Q4_K]);

export interface CpuDeviceOptions extends CpuRuntimeOptions {
  /**
   * 'fast' (default): free-order kernels for Q8_0, Q4_0 (4-row layout for any rows % 4 == 0) and the Q4_K
   * GEMV, several rows per pass and plain f32 multiply-adds; every parity fixture passes under the
   * reference's rule and tolerances (test/parity/cpu.test.ts). 'exact': matmuls with the weight types
   * whose llama.cpp order is known (LLAMA_EXACT_MATMUL_TYPES) reproduce the reference backend bit for bit
   * (Q4_0/Q4_K with rows % 8 != 0 run the reference kernel). Either way the other types use their WASM
   * kernels (agreeing with the reference's generic formulas to float rounding).
   */
  numerics?: 'exact' | 'fast';
}

// GGUF_EDGE_PROFILE (Node): per-node timings, printed at exit; browsers have no process and never profile
const profileEnabled = () => !!(globalThis as { process?: { env: Record<string, string | undefined> } }).process?.env.GGUF_EDGE_PROFILE;
const profileTable = new Map<string, { ms: number; calls: number }>();
let profileHooked = false;
function hookProfileReport(): void {
  const proc = (globalThis as { process?: { on(e: string, f: () => void): void; stderr: { write(s: string): void } } }).process;
  if (profileHooked || !proc) return;
  profileHooked = true;
  proc.on('exit', () => {
    const rows = [...profileTable.entries()].sort((a, b) => b[1].ms - a[1].ms);
    const total = rows.reduce((s, [, e]) => s + e.ms, 0);
    proc.stderr.write(`cpu profile: ${total.toFixed(1)} ms in nodes\n`);
    for (const [k, e] of rows) proc.stderr.write(`${e.ms.toFixed(1).padStart(10)} ms ${(100 * e.ms / total).toFixed(1).padStart(5)}% ${String(e.calls).padStart(7)}x  ${k}\n`);
  });
}

export async function createCpuDevice(opts: CpuDeviceOptions = {}): Promise<Device & { runtime: CpuRuntime; close(): Promise<void> }> {
  const fastNumerics = opts.numerics !== 'exact';
  const rt = await createCpuRuntime({ ...opts, numerics: fastNumerics ? 'fast' : 'exact' });
  const profile = profileEnabled();
  if (profile) hookProfileReport();
  const bt = cpuBufferType(rt);
  const ptrOf = (p: Placement) => (p.buffer as CpuBuffer).ptr + p.offset;
  const i32 = (p: Placement, n: number) => new Int32Array(rt.memory.buffer, ptrOf(p), n);

  /** A mul_mat node the WASM kernels compute (shape and types), or null when the reference must. */
  function wasmMatmul(g: Graph, t: TensorDesc): { wt: number; rows: number; cols: number; nTok: number; share: number } | null {
    const w = g.tensors[t.src[0]!]!, x = g.tensors[t.src[1]!]!, wt = typeId(w);
    const rows = w.shape[1] ?? 1, cols = w.shape[0]!, nTok = x.shape[1] ?? 1;
    if (!matmulTypes.has(wt) || (!fastNumerics && LLAMA_EXACT_MATMUL_TYPES.has(wt) && !exactMatmul(wt, rows))) return null;
    // matmuls with the same input, activation type and Q4_K GEMM rows can share one quantization
    const vt = activationTypeFor(wt);
    const share = vt === F32 ? -1 : ((x.id * 64 + vt) * 8192 + q4KGemmRows(wt, rows, nTok));
    return { wt, rows, cols, nTok, share };
  }

  /**
   * The work of one node, bound once per plan (pointers, shapes and argument objects computed here, the
   * runtime's scratch reserved for the shape), so computing a node allocates nothing. null: no WASM
   * kernel reproduces the reference for this node; the reference kernel runs on the same memory.
   * `shared`: the previous WASM matmul of this program quantized the same activations, and no other
   * matmul runs in between (nothing else writes the runtime's activation scratch).
   */
  function compile(g: Graph, t: TensorDesc, at: (id: number) => Placement, shared: boolean, fuse: Map<number, number>): (() => void) | null {
    const src = (i: number) => g.tensors[t.src[i]!]!;
    const p = (i: number) => ptrOf(at(t.src[i]!));
    const y = ptrOf(at(t.id));
    const n = nElements(t);
    switch (t.op) {
      case 'mul_mat': {
        const mm = wasmMatmul(g, t);
        if (!mm) return null;
        const { wt, rows, cols, nTok } = mm;
        rt.reserve(nTok, cols);
        const wp = p(0), xp = p(1);
        if (shared) return () => rt.matmulShared(wt, wp, rows, cols, nTok, y);
        return () => rt.matmul(wt, wp, rows, cols, xp, nTok, y);
      }
      case 'get_rows': {
        const w = src(0), ids = src(1), wt = typeId(w), cols = w.shape[0]!;
        const wp = p(0), idv = i32(at(ids.id), ids.shape[0]!);
        return () => rt.getRows(wt, wp, cols, idv, y);
      }
      case 'rms_norm': {
        const rowLen = t.params.rowLen as number, eps = t.params.eps as number, xp = p(0);
        // fused with the mul by its weight that follows (same f32 operations: (x*scale)*w)
        const mulId = fuse.get(t.id);
        if (mulId !== undefined) {
          const m = g.tensors[mulId]!, yy = ptrOf(at(mulId)), wp = ptrOf(at(m.src[1]!));
          return () => rt.rmsNorm(xp, yy, rowLen, n / rowLen, eps, wp);
        }
        return () => rt.rmsNorm(xp, y, rowLen, n / rowLen, eps);
      }
      case 'add': case 'mul': {
        if (t.op === 'mul' && fuse.has(-t.id - 1)) return () => {}; // done by the rms_norm before it
        const nb = nElements(src(1)), a = p(0), b = p(1);
        if (nb === n) return t.op === 'add' ? () => rt.add(a, b, y, n) : () => rt.mul(a, b, y, n);
        if (t.op === 'add') return () => rt.addRow(a, b, y, nb, n / nb);
        return () => rt.mulRow(a, b, y, nb, n / nb);
      }
      case 'scale': {
        const s = t.params.scale as number, xp = p(0);
        return () => rt.scale(xp, y, n, s);
      }
      case 'swiglu': {
        const a = p(0), b = p(1);
        return () => rt.siluMul(a, b, y, n);
      }
      case 'view_cols': {
        const w = t.shape[0]!, srcW = src(0).shape[0]!, off = t.params.offset as number, xp = p(0), rows = n / w;
        return () => { for (let r = 0; r < rows; r++) rt.copy(xp + 4 * (r * srcW + off), y + 4 * r * w, 4 * w); };
      }
      case 'kv_store': {
        const cache = src(0), x = src(1);
        const row = x.shape[0]!, nTok = x.shape[1]!, f16 = cache.dtype === 'f16';
        const pos = i32(at(t.src[2]!), nTok), xp = p(1), cp = p(0);
        return () => {
          for (let i = 0; i < nTok; i++) {
            if (f16) rt.f32ToF16(xp + 4 * i * row, cp + 2 * pos[i]! * row, row);
            else rt.copy(xp + 4 * i * row, cp + 4 * pos[i]! * row, 4 * row);
          }
        };
      }
      case 'rope': {
        const pp = t.params;
        const nTok = t.shape[1]!, rowLen = t.shape[0]!, headDim = pp.headDim as number, nDims = pp.nDims as number, xp = p(0);
        rt.reserve(nTok, 0, nDims);
        const args: RopeArgs = {
          x: y, nTokens: nTok, nHead: rowLen / headDim, headDim, nDims,
          positions: i32(at(t.src[1]!), nTok), freqBase: pp.freqBase as number, freqScale: pp.freqScale as number, neox: !!pp.neox,
          freqFactors: t.src.length > 2 ? rt.f32(p(2), nDims / 2) : undefined,
        };
        return () => { rt.copy(xp, y, 4 * n); rt.rope(args); };
      }
      case 'attention': {
        const pp = t.params;
        const kc = src(1);
        const hd = pp.headDimK as number;
        if (kc.dtype !== 'f16' || (pp.softcap as number) > 0 || hd !== pp.headDimV || hd % 16) return null;
        const nTok = t.shape[1]!;
        const pos = i32(at(t.src[3]!), nTok);
        rt.reserveAttentionGgml(hd, kc.shape[1]! - 1, nTok >= 2 ? pp.nHeadKv as number : 0); // the cache's slots bound the positions
        const args: GgmlAttentionArgs = {
          q: p(0), k: p(1), v: p(2), out: y, nTokens: nTok, nHead: pp.nHead as number, nKvHead: pp.nHeadKv as number,
          headDim: hd, scale: pp.scale as number, positions: p(3), maxPos: 0, window: pp.window as number,
        };
        return () => {
          let maxPos = 0;
          for (let i = 0; i < nTok; i++) if (pos[i]! > maxPos) maxPos = pos[i]!;
          args.maxPos = maxPos;
          rt.attentionGgml(args);
        };
      }
      default:
        return null;
    }
  }

  /**
   * rms_norm nodes immediately followed (in `nodes`) by a mul with a weight of one row length that is
   * the norm's only reader: rms id -> mul id, and -(mul id)-1 -> rms id.
   */
  function rmsMulFusions(g: Graph, nodes: readonly number[], at: (id: number) => Placement): Map<number, number> {
    const readers = new Map<number, number>();
    for (const id of g.nodes) for (const s of g.tensors[id]!.src) readers.set(s, (readers.get(s) ?? 0) + 1);
    const fuse = new Map<number, number>();
    for (let i = 0; i + 1 < nodes.length; i++) {
      const t = g.tensors[nodes[i]!]!, m = g.tensors[nodes[i + 1]!]!;
      if (t.op !== 'rms_norm' || m.op !== 'mul' || m.src[0] !== t.id || readers.get(t.id) !== 1 || t.id === g.output) continue;
      const w = g.tensors[m.src[1]!]!;
      if (w.role !== 'weight' || typeId(w) !== F32 || nElements(w) !== t.params.rowLen) continue;
      // the arena may give the mul's result the bytes of the norm's input (dead after the norm): fusing
      // then works in place, but not over a partial overlap (a row written before it is read)
      const x = ptrOf(at(t.src[0]!)), y = ptrOf(at(m.id)), bytes = 4 * nElements(t);
      if (x !== y && x < y + bytes && y < x + bytes) continue;
      fuse.set(t.id, m.id);
      fuse.set(-m.id - 1, t.id);
    }
    return fuse;
  }

  /**
   * GGUF_EDGE_PROFILE=1: time every node by op (mul_mat by weight type and shape) and print the table
   * to stderr at exit. Off by default: the wrappers cost a clock read per node.
   */
  const profileKey = (g: Graph, t: TensorDesc) => {
    if (t.op !== 'mul_mat') return t.op;
    const w = g.tensors[t.src[0]!]!;
    const layout = Object.entries(CpuLayout).find(([, id]) => id === typeId(w))?.[0];
    return `mul_mat ${layout ?? ggmlTypeName(typeId(w))} ${w.shape[1]}x${w.shape[0]} n=${g.tensors[t.src[1]!]!.shape[1] ?? 1}`;
  };
  function profiled(key: string, fn: () => void): () => void {
    return () => {
      const t0 = performance.now();
      fn();
      const e = profileTable.get(key) ?? { ms: 0, calls: 0 };
      e.ms += performance.now() - t0; e.calls++;
      profileTable.set(key, e);
    };
  }

  /** Compiled node runners per split (its node list and placement are fixed for the plan's lifetime). */
  interface Program { placement: (id: number) => Placement; bytes: number; run: (() => void)[] }
  const programs = new WeakMap<readonly number[], Program>();
  function program(ctx: ComputeContext, nodes: readonly number[]): Program {
    let prog = programs.get(nodes);
    // views made at compile time are over memory.buffer as it was: recompile when the memory grew
    if (prog && prog.placement === ctx.placement && prog.bytes === rt.memory.buffer.byteLength) return prog;
    const g = ctx.graph, at = ctx.placement;
    const fuse = rmsMulFusions(g, nodes, at);
    let lastShare = -1;
    const run = nodes.map((id) => {
      const t = g.tensors[id]!;
      let shared = false;
      if (t.op === 'mul_mat') {
        const mm = wasmMatmul(g, t);
        if (mm) { shared = mm.share >= 0 && mm.share === lastShare; lastShare = mm.share; }
      }
      const fn = compile(g, t, at, shared, fuse) ?? (() => computeNode(g, t, at));
      return profile ? profiled(profileKey(g, t), fn) : fn;
    });
    prog = { placement: at, bytes: rt.memory.buffer.byteLength, run };
    programs.set(nodes, prog);
    return prog;
  }

  const device: Device & { runtime: CpuRuntime; close(): Promise<void> } = {
    name: 'cpu',
    kind: 'cpu',
    description: `WebAssembly ${rt.simd === 'relaxed' ? 'relaxed SIMD' : 'SIMD128'} kernels on ${rt.threads} thread${rt.threads === 1 ? '' : 's'}, ${fastNumerics ? 'fast' : 'exact'} numerics`,
    runtime: rt,
    memory: () => ({ free: 4 * 1024 ** 3 - rt.used(), total: 4 * 1024 ** 3 }),
    bufferType: () => bt,
    supportsOp: () => true,
    prefersOp: () => true,
    createBackend(): Backend {
      return {
        device,
        compute(ctx: ComputeContext, nodes: readonly number[]) {
          const run = program(ctx, nodes).run;
          for (let i = 0; i < run.length; i++) run[i]!();
        },
      };
    },
    close: () => rt.close(),
    /**
     * Q4_0 weights llama.cpp would repack (rows % 8 == 0; fast numerics: rows % 4 == 0) are interleaved
     * 4 rows per block in place (Q4_0r4: 4 rows' fused multiply-add chains side by side; same arithmetic,
     * so the same bits); with fast numerics Q8_0 weights likewise (Q8_0r4, free-order kernel only).
     */
    prepareWeight(placement: Placement, type: number, dims: readonly number[]): number {
      const cols = dims[0]!, rows = dims.slice(1).reduce((a, b) => a * b, 1);
      if (!(placement.buffer as Partial<CpuBuffer>).ptr) return type;
      if (type === GgmlType.Q4_0 && rows % (fastNumerics ? 4 : 8) === 0) return rt.repackRows4(ptrOf(placement), rows, cols, type);
      // Q8_0r4 has only a free-order kernel
      if (type === GgmlType.Q8_0 && fastNumerics && rows % 4 === 0) return rt.repackRows4(ptrOf(placement), rows, cols, type);
      return type;
    },
  };
  return device;
}
