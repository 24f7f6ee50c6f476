// The CPU runtime: one shared WebAssembly.Memory holding weights and activations, the SIMD kernels
// instantiated on the main thread and on every pool worker, a bump allocator over the memory, and
// row-parallel ops. A backend calls it per op with tensor pointers; nothing here allocates per call
// (scratch buffers grow once to the largest shape seen, or are reserved up front with `reserve`).
import { GgmlType, ggmlTypeInfo, ggmlTypeName } from '../../gguf/ggml-types.js';
import { CTL, CTL_ARGS_BYTE_OFFSET, CTL_BYTES, KERNEL_INDEX, KERNEL_NAMES, MAX_ARGS, kernelExports, sliceEnd, sliceStart, type KernelExports, type KernelFn, type KernelName } from './ops.js';
import { dequantizer } from '../../quant/index.js';
import { cosf, sinf } from '../reference/libm.js';
import { compileKernels, relaxedSimdAvailable, type KernelVariant } from './wasm.js';
import type { WorkerInit } from './worker-core.js';
import { availableCores, defaultSpawner, type SpawnWorker, type WorkerHandle } from './workers.js';

export class CpuRuntimeError extends Error {
  constructor(readonly code: 'OUT_OF_MEMORY' | 'KERNEL_FAILED' | 'UNSUPPORTED_TYPE' | 'BAD_SHAPE' | 'CLOSED', message: string) {
    super(message);
    this.name = 'CpuRuntimeError';
  }
}

export interface CpuRuntimeOptions {
  /** threads taking part in each op, the main thread included; default: available cores */
  threads?: number;
  /** kernel wasm bytes or module (default: the embedded build) */
  wasm?: BufferSource | WebAssembly.Module;
  /** largest memory the runtime may grow to, bytes (default and maximum 4 GiB, wasm32's limit) */
  maxMemoryBytes?: number;
  /** initial memory, bytes */
  initialMemoryBytes?: number;
  /** spin iterations before a waiting thread blocks in Atomics.wait (default 2000, ~10-40 us; lower it on an
   *  oversubscribed machine, where spinning steals the core a descheduled peer needs) */
  spin?: number;
  /** ops with less work than this (about multiply-adds) run on the calling thread alone (default 32768) */
  parallelMinWork?: number;
  /** how to start a worker (default: worker_threads in Node, module Workers elsewhere) */
  spawnWorker?: SpawnWorker;
  /**
   * Float order of the matmuls. 'exact' (default): the weight types whose llama.cpp x86 order is known
   * reproduce it bit for bit. 'fast': free-order kernels (several rows and tokens per pass, plain f32
   * multiply-adds) for Q8_0, Q4_0 (4-row layout) and the Q4_K GEMV; equal to 'exact' to float rounding.
   */
  numerics?: 'exact' | 'fast';
  /**
   * Use the relaxed-SIMD build of the kernels when the engine supports it and its start-up self-test
   * passes (default true; Node 20 needs --experimental-wasm-relaxed-simd, which the CLI sets). Same
   * results either way: the relaxed dot products only ever see exact operands.
   */
  relaxedSimd?: boolean;
}

const PAGE = 65536;
const WASM32_MAX_PAGES = 65536;
/** the first 64 KiB stay unused: pointer 0 means "none" to kernels */
const HEAP_BASE = PAGE;
/** ops smaller than this many multiply-adds run on the calling thread alone */
const PARALLEL_MIN_WORK = 1 << 15;
/** query tokens per attention work item (must match ATT_TILE in kernels/kernels.ts) */
const ATT_TILE = 4;

/**
 * CPU-only weight layouts produced by `repackWeights` (ids outside ggml's range). Pass the returned id as
 * the weight type to matmul.
 */
export const CpuLayout = {
  /** Q4_0 regrouped by 4 blocks: [4 x f16 d][4 x 16 B quants]; same size as Q4_0, aligned SIMD loads */
  Q4_0x4: 0x1002,
  /** Q4_0 with 4 rows interleaved per block: [4 x f16 d][4 x 16 B quants]; rows % 4 == 0; same size as Q4_0 */
  Q4_0r4: 0x1003,
  /** Q8_0 with 4 rows interleaved per block: [4 x f16 d][4 x 32 B quants]; rows % 4 == 0; same size as Q8_0 (fast numerics) */
  Q8_0r4: 0x1004,
} as const;

/** Activation type the kernels take for a weight type (as ggml's vec_dot_type; F16 -> f32 rounded through f16). */
export function activationTypeFor(wtype: number): number {
  switch (wtype) {
    case GgmlType.Q4_0: case GgmlType.Q5_0: case GgmlType.Q8_0: case GgmlType.IQ4_NL: case CpuLayout.Q4_0x4: case CpuLayout.Q4_0r4: case CpuLayout.Q8_0r4: return GgmlType.Q8_0;
    case GgmlType.Q4_1: case GgmlType.Q5_1: return GgmlType.Q8_1;
    case GgmlType.Q2_K: case GgmlType.Q3_K: case GgmlType.Q4_K: case GgmlType.Q5_K: case GgmlType.Q6_K: case GgmlType.IQ4_XS: return GgmlType.Q8_K;
    case GgmlType.F16: return GgmlType.F16;
    case GgmlType.BF16: return GgmlType.BF16;
    case GgmlType.F32: return GgmlType.F32;
    default: throw new CpuRuntimeError('UNSUPPORTED_TYPE', `cpu matmul does not support weight type ${ggmlTypeName(wtype)}`);
  }
}

/** Bytes of one row of `cols` activations in activation type `vtype` (F16 means f32 rounded through f16). */
export function activationRowBytes(vtype: number, cols: number): number {
  switch (vtype) {
    case GgmlType.Q8_0: return (cols / 32) * 34;
    case GgmlType.Q8_1: return (cols / 32) * 36;
    case GgmlType.Q8_K: return (cols / 256) * 292;
    case GgmlType.F16: case GgmlType.BF16: case GgmlType.F32: return cols * 4;
    default: throw new CpuRuntimeError('UNSUPPORTED_TYPE', `no activation layout for ${ggmlTypeName(vtype)}`);
  }
}

/** aux: the kernel takes an activation side table (Q8_0: f32 d + 8*sum per block; Q8_1: f32 d and s) */
interface WeightKernel { name: KernelName; block: number; bytes: number; aux?: boolean; rowAlign?: number; fast?: KernelName }
const WEIGHT_KERNELS: Record<number, WeightKernel> = {
  [GgmlType.Q4_0]: { name: 'mm_q4_0', block: 32, bytes: 18, aux: true },
  [CpuLayout.Q4_0x4]: { name: 'mm_q4_0x4', block: 32, bytes: 18, aux: true },
  [CpuLayout.Q4_0r4]: { name: 'mm_q4_0r4', block: 32, bytes: 18, aux: true, rowAlign: 4, fast: 'mmf_q4_0r4' },
  [GgmlType.Q4_1]: { name: 'mm_q4_1', block: 32, bytes: 20, aux: true },
  [GgmlType.Q5_0]: { name: 'mm_q5_0', block: 32, bytes: 22, aux: true },
  [GgmlType.Q5_1]: { name: 'mm_q5_1', block: 32, bytes: 24, aux: true },
  [GgmlType.Q8_0]: { name: 'mm_q8_0', block: 32, bytes: 34, aux: true, fast: 'mmf_q8_0' },
  // a fast-numerics layout: its one kernel is free-order
  [CpuLayout.Q8_0r4]: { name: 'mmf_q8_0r4', block: 32, bytes: 34, aux: true, rowAlign: 4 },
  [GgmlType.Q2_K]: { name: 'mm_q2_K', block: 256, bytes: 84 },
  [GgmlType.Q3_K]: { name: 'mm_q3_K', block: 256, bytes: 110 },
  [GgmlType.Q4_K]: { name: 'mm_q4_K', block: 256, bytes: 144, aux: true, fast: 'mmf_q4_K' },
  [GgmlType.Q5_K]: { name: 'mm_q5_K', block: 256, bytes: 176 },
  [GgmlType.Q6_K]: { name: 'mm_q6_K', block: 256, bytes: 210, aux: true },
  [GgmlType.F16]: { name: 'mm_f16', block: 1, bytes: 2 },
  [GgmlType.BF16]: { name: 'mm_bf16', block: 1, bytes: 2 },
  [GgmlType.IQ4_NL]: { name: 'mm_iq4_nl', block: 32, bytes: 18, aux: true },
  [GgmlType.IQ4_XS]: { name: 'mm_iq4_xs', block: 256, bytes: 136 },
  [GgmlType.F32]: { name: 'mm_f32', block: 1, bytes: 4 },
};
export const MATMUL_TYPES: readonly number[] = Object.keys(WEIGHT_KERNELS).map(Number);

/** Bytes of one weight row of `cols` values. */
export function weightRowBytes(wtype: number, cols: number): number {
  const k = WEIGHT_KERNELS[wtype];
  if (!k) throw new CpuRuntimeError('UNSUPPORTED_TYPE', `cpu matmul does not support weight type ${ggmlTypeName(wtype)}`);
  if (cols % k.block !== 0) throw new CpuRuntimeError('BAD_SHAPE', `row of ${cols} values is not a multiple of ${ggmlTypeName(wtype)}'s block of ${k.block}`);
  return (cols / k.block) * k.bytes;
}

/**
 * Activation rows that llama.cpp's repacked Q4_K path (weights with rows % 8 == 0) computes with its
 * GEMM kernel (groups of 4 rows, own Q8_K tie rule) rather than the GEMV; 0 for every other type.
 */
export function q4KGemmRows(wtype: number, rows: number, nTokens: number): number {
  return wtype === GgmlType.Q4_K && rows % 8 === 0 ? nTokens - (nTokens % 4) : 0;
}

function attnScratchBytes(nTokens: number, nKvHead: number, headDim: number, gqa: number, hsplit: number): number {
  const items = Math.ceil(nTokens / ATT_TILE) * nKvHead * hsplit;
  return items * (5 * headDim + 8 * ATT_TILE * Math.ceil(gqa / hsplit)) * 4;
}

/** attn_kv_f32's output: K and V of every kv head widened to f32, positions rounded up to 16 */
function attnKvBytes(nKvHead: number, headDim: number, maxPos: number): number {
  return nKvHead * alignUp(maxPos + 1, 16) * headDim * 8;
}

/** attn_ggml's scratch per thread: q (headDim), 64 V lane rows (64*headDim), scores (positions + a chunk of 16) */
export function ggmlAttnScratchBytes(headDim: number, maxPos: number): number {
  return alignUp((65 * headDim + maxPos + 1 + 32) * 4, 64);
}

function rowBytesOf(type: number, cols: number): number {
  const t = ggmlTypeInfo(type);
  if (!t) throw new CpuRuntimeError('UNSUPPORTED_TYPE', `unknown ggml type ${type}`);
  if (cols % t.blockSize) throw new CpuRuntimeError('BAD_SHAPE', `row of ${cols} values is not a multiple of ${t.name}'s block of ${t.blockSize}`);
  return (cols / t.blockSize) * t.typeSize;
}

export interface AttentionArgs {
  /** f32 queries, token t head h at q + t*qStride + h*headDim*4 */
  q: number;
  /** f16 K and V caches, position p kv-head g at k + p*kvStride + g*headDim*2 */
  k: number;
  v: number;
  /** f32 output, token t head h at out + t*outStride + h*headDim*4 */
  out: number;
  nTokens: number;
  nHead: number;
  nKvHead: number;
  headDim: number;
  /** query token t attends to kv positions [0, kvBase + t + 1) */
  kvBase: number;
  /** multiplies q.k (usually 1/sqrt(headDim)) */
  scale: number;
  qStride?: number;
  kvStride?: number;
  outStride?: number;
  /**
   * Optional mask instead of the causal rule: query token t sees kv positions [0, nKv) with mask row
   * t (nKv values at mask + t*maskStride, f32 or f16 per maskF16; -inf hides a position) added to its scores
   */
  mask?: number;
  maskStride?: number;
  maskF16?: boolean;
  /** kv positions covered by the mask (required with mask) */
  nKv?: number;
}

/** Attention with ggml's non-flash numerics (see kernels/kernels.ts attn_ggml), f16 caches. */
export interface GgmlAttentionArgs {
  /** f32 queries, token t head h at q + t*nHead*headDim*4 + h*headDim*4; output likewise */
  q: number;
  k: number;
  v: number;
  out: number;
  nTokens: number;
  nHead: number;
  nKvHead: number;
  headDim: number;
  scale: number;
  /** i32 position of each query token (in the memory); token t sees cache slots [window start, pos[t]] */
  positions: number;
  /** the largest position (sizes the scratch) */
  maxPos: number;
  /** sliding window (0: none) */
  window: number;
}

export interface RopeArgs {
  /** f32 rows, token t head h at x + t*tokenStride + h*headStride, rotated in place */
  x: number;
  nTokens: number;
  nHead: number;
  headDim: number;
  /** rotated dimensions (<= headDim) */
  nDims: number;
  /** position of each token */
  positions: ArrayLike<number>;
  freqBase: number;
  freqScale?: number;
  /** NeoX style (rotate x[i] with x[i + nDims/2]) instead of adjacent pairs */
  neox: boolean;
  /** per-pair frequency divisors (rope_freqs), nDims/2 values */
  freqFactors?: ArrayLike<number>;
  /** attention factor multiplying cos and sin (default 1) */
  mscale?: number;
  tokenStride?: number;
  headStride?: number;
}

/**
 * A fixed region of the wasm memory planned at context creation (the activation arena): bump-allocate
 * tensors in it, `reset()` between graph evaluations; nothing is allocated per token.
 */
export interface CpuArena {
  readonly base: number;
  readonly size: number;
  /** bytes in use */
  readonly used: number;
  alloc(bytes: number, align?: number): number;
  reset(): void;
}

export interface CpuRuntime {
  readonly threads: number;
  /** the kernel build in use: 'relaxed' (relaxed-SIMD dot products) or 'simd128' */
  readonly simd: KernelVariant;
  /** free-order matmul kernels where they exist (CpuRuntimeOptions.numerics 'fast') */
  readonly fastNumerics: boolean;
  readonly memory: WebAssembly.Memory;
  /** the main thread's kernel instance (call directly for single-threaded work) */
  readonly kernels: KernelExports;
  /** bump-allocates `bytes` (aligned to `align`, default 64) and returns the pointer; grows the memory */
  alloc(bytes: number, align?: number): number;
  /** reserves a region of `bytes` for activations and returns its sub-allocator */
  createArena(bytes: number): CpuArena;
  /** current allocation top; `release(mark())` frees everything allocated after the mark */
  mark(): number;
  release(mark: number): void;
  /** bytes in use (from the start of the memory) */
  used(): number;
  /** the most bytes the memory may grow to (at most 4 GiB, wasm32's limit) */
  readonly maxBytes: number;
  /** reserve the internal scratch (quantized activations, rope table, attention) for the largest shapes up front */
  reserve(maxTokens: number, maxCols: number, maxRopeDims?: number, attention?: { nHead: number; nKvHead: number; headDim: number }): void;
  /** views on the current memory buffer (valid until the memory grows) */
  f32(ptr: number, length: number): Float32Array;
  u8(ptr: number, length: number): Uint8Array;
  u16(ptr: number, length: number): Uint16Array;

  /** run kernel `name` over [0, n) split in slices of multiples of `align` across the threads */
  run(name: KernelName, n: number, align: number, work: number, ...args: number[]): void;

  /** quantize nRows rows of `cols` f32 (rows xStride bytes apart) to activation type vtype (Q8_0, Q8_1, Q8_K; F16 / BF16 = f32 rounded through f16 / bf16) */
  quantize(vtype: number, x: number, cols: number, nRows: number, y: number, xStride?: number): void;
  /**
   * y[t][r] = dot(weight row r, activation row t), activations already in activationTypeFor(wtype) (rows
   * activationRowBytes apart); output rows yStride bytes apart (default rows*4)
   */
  matmulQ(wtype: number, w: number, rows: number, cols: number, a: number, nTokens: number, y: number, yStride?: number): void;
  /**
   * Rewrites weights in place into the fastest CPU layout for their type (no copy, same size) and returns
   * the weight type id to use from then on (a CpuLayout id, or `wtype` itself when nothing applies).
   */
  repackWeights(wtype: number, w: number, rows: number, cols: number): number;
  /** Q4_0 -> CpuLayout.Q4_0r4 or Q8_0 -> CpuLayout.Q8_0r4 (4 rows interleaved per block; rows % 4 == 0), in place; returns the layout id */
  repackRows4(w: number, rows: number, cols: number, wtype?: number): number;
  /**
   * y = W . x for the activations the previous matmul() call quantized (same activation type, columns,
   * tokens and Q4_K GEMM rows; nothing else may have called matmul in between): no quantization and no
   * side table again, e.g. for the K and V projections after Q. Throws when the activations differ.
   */
  matmulShared(wtype: number, w: number, rows: number, cols: number, nTokens: number, y: number): void;
  /** as matmulQ from f32 activations xStride bytes apart (default cols*4), quantized first into the runtime's scratch as ggml does */
  matmul(wtype: number, w: number, rows: number, cols: number, x: number, nTokens: number, y: number, xStride?: number, yStride?: number): void;
  rmsNorm(x: number, y: number, n: number, nRows: number, eps: number, weight?: number): void;
  /** layer norm (ggml_norm) of nRows rows of n, then * weight and + bias when given */
  layerNorm(x: number, y: number, n: number, nRows: number, eps: number, weight?: number, bias?: number): void;
  /** y[r] = x[r] + bias for nRows rows of n (the bias row broadcast) */
  addRow(x: number, bias: number, y: number, n: number, nRows: number): void;
  /** y[r] = x[r] * w for nRows rows of n (the weight row broadcast) */
  mulRow(x: number, w: number, y: number, n: number, nRows: number): void;
  softmax(x: number, y: number, n: number, nRows: number, scale?: number, mask?: number, maskStride?: number): void;
  rope(args: RopeArgs): void;
  silu(x: number, y: number, n: number): void;
  siluMul(g: number, u: number, y: number, n: number): void;
  gelu(x: number, y: number, n: number): void;
  add(a: number, b: number, y: number, n: number): void;
  mul(a: number, b: number, y: number, n: number): void;
  scale(x: number, y: number, n: number, s: number): void;
  f32ToF16(x: number, y: number, n: number): void;
  f16ToF32(x: number, y: number, n: number): void;
  attention(args: AttentionArgs): void;
  /** attention as llama.cpp's CPU backend computes it without flash attention, bit for bit */
  attentionGgml(args: GgmlAttentionArgs): void;
  /** reserves attentionGgml's scratch for positions up to maxPos, so later calls allocate nothing */
  /** reserves attentionGgml's scratch for positions up to maxPos (and, given nKvHead, for batches), so later calls allocate nothing */
  reserveAttentionGgml(headDim: number, maxPos: number, nKvHead?: number): void;
  /** out[i] = row ids[i] of a (rows x cols) table of type wtype (any ggml type src/quant dequantizes, or a CpuLayout), as f32 */
  getRows(wtype: number, table: number, cols: number, ids: ArrayLike<number>, out: number): void;
  /** copies `bytes` bytes (regions may overlap) */
  copy(src: number, dst: number, bytes: number): void;
  close(): Promise<void>;
}

function alignUp(x: number, a: number): number {
  return Math.ceil(x / a) * a;
}

function canBlock(): boolean {
  try {
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 1, 0);
    return true;
  } catch {
    return false;
  }
}

interface ScratchRegion { ptr: number; bytes: number }

/** Forgets a region that lies at or above a released mark; true when it did. */
function dropRegion(r: ScratchRegion, mark: number): boolean {
  if (r.ptr === 0 || r.ptr < mark) return false;
  r.ptr = 0;
  r.bytes = 0;
  return true;
}

/** cos/sin of every rotated pair for positions 0..n-1 (ggml's rope cache, memoised across calls). */
class RopeRows {
  private table = new Float32Array(0);
  private n = 0;
  constructor(private readonly base: number, private readonly scale: number, private readonly mscale: number, private readonly nDims: number, private readonly ff?: Float32Array) {}
  /** the table, holding at least positions 0..pos (grown by doubling: a handful of allocations per context) */
  ensure(pos: number): Float32Array {
    if (pos < this.n) return this.table;
    const n = Math.max(pos + 1, 2 * this.n, 256);
    const t = new Float32Array(n * this.nDims);
    t.set(this.table);
    const thetaScale = Math.fround(Math.pow(this.base, -2 / this.nDims));
    const fs = Math.fround(this.scale), ms = Math.fround(this.mscale), ff = this.ff;
    for (let p = this.n; p < n; p++) {
      let theta = Math.fround(p);
      const o = p * this.nDims;
      for (let j = 0; j < this.nDims / 2; j++) {
        const th = Math.fround(fs * (ff ? Math.fround(theta / ff[j]!) : theta));
        // glibc's cosf/sinf as ggml's rope cache calls them (not correctly rounded: the bits matter)
        t[o + 2 * j] = cosf(th) * ms;
        t[o + 2 * j + 1] = sinf(th) * ms;
        theta = Math.fround(theta * thetaScale);
      }
    }
    this.table = t;
    this.n = n;
    return t;
  }
}

export async function createCpuRuntime(opts: CpuRuntimeOptions = {}): Promise<CpuRuntime> {
  const threads = Math.max(1, Math.floor(opts.threads ?? (await availableCores())));
  let variant: KernelVariant = opts.wasm === undefined && opts.relaxedSimd !== false && relaxedSimdAvailable() ? 'relaxed' : 'simd128';
  let module = opts.wasm instanceof WebAssembly.Module ? opts.wasm : await compileKernels(opts.wasm, variant);
  const maxBytes = Math.min(opts.maxMemoryBytes ?? WASM32_MAX_PAGES * PAGE, WASM32_MAX_PAGES * PAGE);
  const maxPages = Math.floor(maxBytes / PAGE);
  const initialPages = Math.min(maxPages, Math.max(2, Math.ceil((opts.initialMemoryBytes ?? 0) / PAGE)));
  const memory = new WebAssembly.Memory({ initial: initialPages, maximum: maxPages, shared: true });
  let instance = await WebAssembly.instantiate(module, { env: { memory } });
  if (variant === 'relaxed' && !relaxedSelfTest(instance, memory)) {
    // e.g. V8 11.3's baseline compiler gets the relaxed dot product wrong until tier-up
    variant = 'simd128';
    module = await compileKernels(undefined, variant);
    instance = await WebAssembly.instantiate(module, { env: { memory } });
  }
  const kernels = kernelExports(instance.exports);

  const ctlBuf = new SharedArrayBuffer(CTL_BYTES);
  const ctl = new Int32Array(ctlBuf, 0, CTL_ARGS_BYTE_OFFSET / 4);
  const args = new Float64Array(ctlBuf, CTL_ARGS_BYTE_OFFSET, MAX_ARGS);
  ctl[CTL.SPIN] = opts.spin ?? 2000;
  const workers: WorkerHandle[] = [];
  if (threads > 1) {
    const spawn = opts.spawnWorker ?? (await defaultSpawner());
    for (let tid = 1; tid < threads; tid++) {
      const init: WorkerInit = { module, memory, ctl: ctlBuf, tid, threads };
      workers.push(spawn(init));
    }
    try {
      await Promise.all(workers.map((w) => w.ready));
    } catch (e) {
      await Promise.all(workers.map((w) => w.terminate()));
      throw e;
    }
  }
  return new Runtime(threads, memory, maxPages, kernels, ctl, args, workers, opts.parallelMinWork ?? PARALLEL_MIN_WORK, opts.numerics === 'fast', variant);
}

/** Runs the relaxed build's simd_selftest on fixed data in the unused first page and checks the integers. */
function relaxedSelfTest(instance: WebAssembly.Instance, memory: WebAssembly.Memory): boolean {
  const test = instance.exports.simd_selftest as ((p: number) => number) | undefined;
  if (!test) return false;
  const p = 1024;
  const a = new Int8Array(memory.buffer, p, 16), b = new Uint8Array(memory.buffer, p + 16, 16), c = new Int32Array(memory.buffer, p + 32, 4);
  for (let i = 0; i < 16; i++) { a[i] = i % 2 ? -127 + 13 * i : 127 - 11 * i; b[i] = (i * 37) % 128; }
  c.set([5, -7, 1 << 20, -3]);
  let want = 0;
  for (let l = 0; l < 4; l++) {
    let s = c[l]!;
    for (let i = 4 * l; i < 4 * l + 4; i++) s += a[i]! * b[i]!;
    want += (2 * l + 1) * s;
  }
  // twice: an engine may compile the first call with one tier and later calls with another
  const ok = test(p) === want && test(p) === want;
  new Uint8Array(memory.buffer, p, 48).fill(0);
  return ok;
}

class Runtime implements CpuRuntime {
  private top = HEAP_BASE;
  private buf: ArrayBuffer | SharedArrayBuffer;
  private readonly fns: KernelFn[];
  private readonly blocking = canBlock();
  private closed = false;
  // Scratch regions in the wasm memory, grown (by doubling) only when a larger shape arrives:
  // quantized activations, their side table, the rope cos/sin rows, the attention scratch, a batch's widened K/V.
  private readonly scratchR: ScratchRegion = { ptr: 0, bytes: 0 };
  private readonly auxR: ScratchRegion = { ptr: 0, bytes: 0 };
  private readonly ropeR: ScratchRegion = { ptr: 0, bytes: 0 };
  private readonly attnR: ScratchRegion = { ptr: 0, bytes: 0 };
  private readonly attnKvR: ScratchRegion = { ptr: 0, bytes: 0 };
  private rowTmp: Uint8Array | null = null;

  constructor(
    readonly threads: number,
    readonly memory: WebAssembly.Memory,
    private readonly maxPages: number,
    readonly kernels: KernelExports,
    private readonly ctl: Int32Array,
    private readonly args: Float64Array,
    private readonly workers: WorkerHandle[],
    private readonly minWork: number,
    /** free-order matmul kernels where they exist (CpuRuntimeOptions.numerics 'fast') */
    readonly fastNumerics: boolean,
    /** which kernel build runs (see wasm.ts) */
    readonly simd: KernelVariant,
  ) {
    this.buf = memory.buffer;
    this.fns = KERNEL_NAMES.map((n) => kernels[n]);
  }

  alloc(bytes: number, align = 64): number {
    if (!(bytes >= 0) || !Number.isFinite(bytes)) throw new CpuRuntimeError('BAD_SHAPE', `cannot allocate ${bytes} bytes`);
    const p = alignUp(this.top, align);
    const end = p + bytes;
    const have = this.memory.buffer.byteLength;
    if (end > have) {
      const limit = this.maxPages * PAGE;
      if (end > limit) {
        throw new CpuRuntimeError('OUT_OF_MEMORY',
          `cpu memory: allocating ${bytes} bytes would need ${end} bytes of WebAssembly memory (${this.top} in use), ` +
          `more than the limit of ${limit} bytes (wasm32 addresses at most 4 GiB)`);
      }
      const pages = Math.ceil((end - have) / PAGE);
      try {
        this.memory.grow(pages);
      } catch (e) {
        throw new CpuRuntimeError('OUT_OF_MEMORY', `cpu memory: cannot grow WebAssembly memory from ${have} to ${have + pages * PAGE} bytes for an allocation of ${bytes} bytes: ${(e as Error).message}`);
      }
    }
    this.top = end;
    return p;
  }
  createArena(bytes: number): CpuArena {
    const base = this.alloc(bytes, 64);
    let top = base;
    return {
      base,
      size: bytes,
      get used() { return top - base; },
      alloc(n: number, align = 64): number {
        const p = alignUp(top, align);
        if (p + n > base + bytes) {
          throw new CpuRuntimeError('OUT_OF_MEMORY', `cpu arena: allocating ${n} bytes needs ${p + n - base} of the arena's ${bytes} bytes`);
        }
        top = p + n;
        return p;
      },
      reset(): void { top = base; },
    };
  }
  mark(): number {
    return this.top;
  }
  release(mark: number): void {
    if (mark < HEAP_BASE || mark > this.top) throw new CpuRuntimeError('BAD_SHAPE', `bad mark ${mark}`);
    this.top = mark;
    if (dropRegion(this.scratchR, mark)) this.lastVt = -1;
    dropRegion(this.ropeR, mark);
    if (dropRegion(this.auxR, mark)) this.lastAuxVt = -1;
    dropRegion(this.attnR, mark);
    dropRegion(this.attnKvR, mark);
    if (this.params >= mark) this.params = 0;
  }
  get maxBytes(): number { return this.maxPages * PAGE; }
  used(): number {
    return this.top;
  }
  private heap32: Float32Array | null = null;
  private heap8: Uint8Array | null = null;
  /** a Uint8Array over the whole memory, rebuilt only when the memory grew */
  private heapU8(): Uint8Array {
    const b = this.buffer();
    return (this.heap8 ??= new Uint8Array(b));
  }
  private heapi32: Int32Array | null = null;
  private params = 0;
  /** a small parameter block for kernels with many arguments (written before each dispatch) */
  private ensureParams(): number {
    if (!this.params) this.params = this.alloc(256, 64);
    return this.params;
  }
  private heapI32(): Int32Array {
    const b = this.buffer();
    return (this.heapi32 ??= new Int32Array(b));
  }
  private buffer(): ArrayBuffer | SharedArrayBuffer {
    if (this.buf.byteLength !== this.memory.buffer.byteLength) { this.buf = this.memory.buffer; this.heap32 = null; this.heapi32 = null; this.heap8 = null; }
    return this.buf;
  }
  /** a Float32Array over the whole memory, rebuilt only when the memory grew */
  private heapF32(): Float32Array {
    const b = this.buffer();
    return (this.heap32 ??= new Float32Array(b));
  }
  f32(ptr: number, length: number): Float32Array {
    return new Float32Array(this.buffer(), ptr, length);
  }
  u8(ptr: number, length: number): Uint8Array {
    return new Uint8Array(this.buffer(), ptr, length);
  }
  u16(ptr: number, length: number): Uint16Array {
    return new Uint16Array(this.buffer(), ptr, length);
  }

  /** the region, grown to at least `bytes` (new space from the bump allocator, doubling) */
  private grow(r: ScratchRegion, bytes: number): number {
    if (bytes > r.bytes) {
      const size = Math.max(bytes, r.bytes * 2);
      r.ptr = this.alloc(size, 64);
      r.bytes = size;
    }
    return r.ptr;
  }
  private ensureScratch(bytes: number): number { return this.grow(this.scratchR, bytes); }
  private ensureAux(bytes: number): number { return this.grow(this.auxR, bytes); }
  private ensureAttnScratch(bytes: number): number { return this.grow(this.attnR, bytes); }
  private ensureRopeTable(floats: number): number { return this.grow(this.ropeR, floats * 4); }

  reserve(maxTokens: number, maxCols: number, maxRopeDims = 0, attention?: { nHead: number; nKvHead: number; headDim: number }): void {
    if (attention) {
      this.ensureParams();
      const { nHead, nKvHead, headDim } = attention;
      const gqa = nHead / nKvHead;
      let most = 0;
      for (const n of [1, maxTokens]) {
        const groups = Math.ceil(n / ATT_TILE) * nKvHead;
        most = Math.max(most, attnScratchBytes(n, nKvHead, headDim, gqa, Math.min(gqa, Math.ceil(this.threads / groups))));
      }
      this.ensureAttnScratch(most);
    }
    this.ensureScratch(maxTokens * activationRowBytes(GgmlType.Q8_1, alignUp(maxCols, 256)) * 1.2);
    this.ensureAux(maxTokens * alignUp(maxCols, 256) * 2 * 1.4);
    if (maxRopeDims) this.ensureRopeTable(maxTokens * maxRopeDims);
  }

  /**
   * Runs kernel `op` over [0, n) on all threads (slices of multiples of align), or on the calling thread
   * alone when `work` (about the number of multiply-adds) is too small to pay for a fork/join.
   */
  private dispatch(op: number, n: number, align: number, work: number,
    a0 = 0, a1 = 0, a2 = 0, a3 = 0, a4 = 0, a5 = 0, a6 = 0, a7 = 0, a8 = 0, a9 = 0, a10 = 0, a11 = 0, a12 = 0, a13 = 0): void {
    if (this.closed) throw new CpuRuntimeError('CLOSED', 'cpu runtime is closed');
    if (n <= 0) return;
    const fn = this.fns[op]!;
    const T = this.threads;
    if (T === 1 || work < this.minWork || n <= align) {
      fn(0, n, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13);
      return;
    }
    const ctl = this.ctl, args = this.args;
    args[0] = a0; args[1] = a1; args[2] = a2; args[3] = a3; args[4] = a4; args[5] = a5;
    args[6] = a6; args[7] = a7; args[8] = a8; args[9] = a9; args[10] = a10; args[11] = a11; args[12] = a12; args[13] = a13;
    ctl[CTL.OP] = op;
    ctl[CTL.N] = n;
    ctl[CTL.ALIGN] = align;
    ctl[CTL.ACTIVE] = T;
    Atomics.store(ctl, CTL.DONE, 0);
    Atomics.add(ctl, CTL.GEN, 1);
    Atomics.notify(ctl, CTL.GEN);
    const r0 = sliceStart(n, T, align, 0), r1 = sliceEnd(n, T, align, 0);
    let err: unknown = null;
    try {
      if (r0 < r1) fn(r0, r1, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13);
    } catch (e) {
      err = e;
    }
    const want = T - 1;
    let d = Atomics.load(ctl, CTL.DONE);
    if (d !== want) {
      const spin = ctl[CTL.SPIN]!;
      for (let i = 0; i < spin && d !== want; i++) d = Atomics.load(ctl, CTL.DONE);
      while (d !== want) {
        if (this.blocking) Atomics.wait(ctl, CTL.DONE, d, 100);
        d = Atomics.load(ctl, CTL.DONE);
      }
    }
    if (err || ctl[CTL.ERR]) {
      ctl[CTL.ERR] = 0;
      throw new CpuRuntimeError('KERNEL_FAILED', `kernel ${KERNEL_NAMES[op]} failed${err ? ': ' + (err as Error).message : ' in a worker'}`);
    }
  }

  run(name: KernelName, n: number, align: number, work: number, ...a: number[]): void {
    this.dispatch(KERNEL_INDEX[name], n, align, work, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12], a[13]);
  }

  quantize(vtype: number, x: number, cols: number, nRows: number, y: number, xStride = cols * 4, tieRows = 0): void {
    const ys = activationRowBytes(vtype, cols);
    const work = cols * nRows * 4;
    switch (vtype) {
      case GgmlType.Q8_0:
        if (cols % 32) throw new CpuRuntimeError('BAD_SHAPE', `Q8_0 rows need a multiple of 32 values, got ${cols}`);
        return this.dispatch(KERNEL_INDEX.quantize_q8_0, nRows, 1, work, x, xStride, y, ys, cols);
      case GgmlType.Q8_1:
        if (cols % 32) throw new CpuRuntimeError('BAD_SHAPE', `Q8_1 rows need a multiple of 32 values, got ${cols}`);
        return this.dispatch(KERNEL_INDEX.quantize_q8_1, nRows, 1, work, x, xStride, y, ys, cols);
      case GgmlType.Q8_K:
        if (cols % 256) throw new CpuRuntimeError('BAD_SHAPE', `Q8_K rows need a multiple of 256 values, got ${cols}`);
        return this.dispatch(KERNEL_INDEX.quantize_q8_K, nRows, 1, work, x, xStride, y, ys, cols, tieRows);
      case GgmlType.F16:
        if (xStride === cols * 4) return this.dispatch(KERNEL_INDEX.round_f16, cols * nRows, 16, work, x, y);
        for (let r = 0; r < nRows; r++) this.dispatch(KERNEL_INDEX.round_f16, cols, 16, cols * 4, x + r * xStride, y + r * ys);
        return;
      case GgmlType.BF16:
        if (xStride === cols * 4) return this.dispatch(KERNEL_INDEX.round_bf16, cols * nRows, 16, work, x, y);
        for (let r = 0; r < nRows; r++) this.dispatch(KERNEL_INDEX.round_bf16, cols, 16, cols * 4, x + r * xStride, y + r * ys);
        return;
      default:
        throw new CpuRuntimeError('UNSUPPORTED_TYPE', `cannot quantize activations to ${ggmlTypeName(vtype)}`);
    }
  }

  matmulQ(wtype: number, w: number, rows: number, cols: number, a: number, nTokens: number, y: number, yStride = rows * 4, aStride = -1, nGemm = q4KGemmRows(wtype, rows, nTokens)): void {
    this.mm(wtype, w, rows, cols, a, nTokens, y, yStride, aStride, nGemm, false);
  }

  // what the activation scratch and side table hold since the last matmul() (for matmulShared)
  private lastVt = -1;
  private lastCols = 0;
  private lastTok = 0;
  private lastGemm = 0;
  private lastAuxVt = -1;

  private mm(wtype: number, w: number, rows: number, cols: number, a: number, nTokens: number, y: number, yStride: number, aStride: number, nGemm: number, scratch: boolean): void {
    const k = WEIGHT_KERNELS[wtype];
    if (!k) throw new CpuRuntimeError('UNSUPPORTED_TYPE', `cpu matmul does not support weight type ${ggmlTypeName(wtype)}`);
    const ws = weightRowBytes(wtype, cols);
    const vt = activationTypeFor(wtype);
    const as = aStride >= 0 ? aStride : activationRowBytes(vt, cols);
    const nb = cols / k.block;
    let ax = 0, axs = 0;
    if (k.aux) {
      // per activation row: 84 B per 32-block (Q8_0/Q8_1 tables), 512 B per 256-block (Q8_K widened quants)
      axs = vt === GgmlType.Q8_K ? nb * 512 : nb * 84;
      ax = this.ensureAux(nTokens * axs);
      // a side table built from the scratch by an earlier matmul of the same activations is still valid
      if (!scratch || this.lastAuxVt !== vt) {
        const auxKernel = vt === GgmlType.Q8_1 ? KERNEL_INDEX.q8_1_aux : vt === GgmlType.Q8_K ? KERNEL_INDEX.q8_K_aux : KERNEL_INDEX.q8_0_aux;
        this.dispatch(auxKernel, nTokens, 1, nTokens * cols, a, as, ax, axs, nb);
        this.lastAuxVt = scratch ? vt : -1;
      }
    }
    this.dispatch(KERNEL_INDEX[this.fastNumerics && k.fast ? k.fast : k.name], rows, k.rowAlign ?? 1, rows * cols * nTokens, w, ws, a, as, nTokens, y, yStride, nb, ax, axs, nGemm);
  }

  matmulShared(wtype: number, w: number, rows: number, cols: number, nTokens: number, y: number): void {
    const vt = activationTypeFor(wtype), nGemm = q4KGemmRows(wtype, rows, nTokens);
    if (vt === GgmlType.F32 || vt !== this.lastVt || cols !== this.lastCols || nTokens !== this.lastTok || nGemm !== this.lastGemm) {
      throw new CpuRuntimeError('BAD_SHAPE', `matmulShared: the last matmul quantized other activations (type ${this.lastVt}, ${this.lastCols} x ${this.lastTok})`);
    }
    this.mm(wtype, w, rows, cols, this.scratchR.ptr, nTokens, y, rows * 4, -1, nGemm, true);
  }

  repackRows4(w: number, rows: number, cols: number, wtype: number = GgmlType.Q4_0): number {
    if (wtype !== GgmlType.Q4_0 && wtype !== GgmlType.Q8_0) throw new CpuRuntimeError('UNSUPPORTED_TYPE', `no 4-row layout for ${ggmlTypeName(wtype)}`);
    const ws = weightRowBytes(wtype, cols);
    const layout = wtype === GgmlType.Q4_0 ? CpuLayout.Q4_0r4 : CpuLayout.Q8_0r4;
    if (rows % 4) throw new CpuRuntimeError('BAD_SHAPE', `${layout === CpuLayout.Q4_0r4 ? 'Q4_0r4' : 'Q8_0r4'} needs a multiple of 4 rows, got ${rows}`);
    const mark = this.mark();
    const tmp = this.alloc(4 * ws, 16);
    try {
      // one thread: the kernel copies each group through tmp
      this.fns[KERNEL_INDEX.repack_r4]!(0, rows / 4, w, ws, cols / 32, tmp, wtype === GgmlType.Q4_0 ? 18 : 34);
    } finally {
      this.release(mark);
    }
    return layout;
  }

  repackWeights(wtype: number, w: number, rows: number, cols: number): number {
    const ws = weightRowBytes(wtype, cols);
    if (wtype === GgmlType.Q4_0 && (cols / 32) % 4 === 0) {
      this.dispatch(KERNEL_INDEX.repack_q4_0x4, rows, 1, rows * cols, w, ws, cols / 32);
      return CpuLayout.Q4_0x4;
    }
    return wtype;
  }

  matmul(wtype: number, w: number, rows: number, cols: number, x: number, nTokens: number, y: number, xStride = cols * 4, yStride = rows * 4): void {
    const vtype = activationTypeFor(wtype);
    if (vtype === GgmlType.F32) return this.matmulQ(wtype, w, rows, cols, x, nTokens, y, yStride, xStride);
    weightRowBytes(wtype, cols);
    const a = this.ensureScratch(activationRowBytes(vtype, cols) * nTokens);
    const nGemm = q4KGemmRows(wtype, rows, nTokens);
    this.lastVt = -1;
    this.quantize(vtype, x, cols, nTokens, a, xStride, nGemm);
    this.lastVt = vtype; this.lastCols = cols; this.lastTok = nTokens; this.lastGemm = nGemm; this.lastAuxVt = -1;
    this.mm(wtype, w, rows, cols, a, nTokens, y, yStride, -1, nGemm, true);
  }

  rmsNorm(x: number, y: number, n: number, nRows: number, eps: number, weight = 0): void {
    this.dispatch(KERNEL_INDEX.rms_norm, nRows, 1, n * nRows * 4, x, n * 4, y, n * 4, n, eps, weight);
  }
  layerNorm(x: number, y: number, n: number, nRows: number, eps: number, weight = 0, bias = 0): void {
    this.dispatch(KERNEL_INDEX.layer_norm, nRows, 1, n * nRows * 6, x, n * 4, y, n * 4, n, eps, weight, bias);
  }
  addRow(x: number, bias: number, y: number, n: number, nRows: number): void {
    this.dispatch(KERNEL_INDEX.add_row, nRows, 1, n * nRows, x, n * 4, bias, y, n * 4, n);
  }
  mulRow(x: number, w: number, y: number, n: number, nRows: number): void {
    this.dispatch(KERNEL_INDEX.mul_row, nRows, 1, n * nRows, x, n * 4, w, y, n * 4, n);
  }
  softmax(x: number, y: number, n: number, nRows: number, scale = 1, mask = 0, maskStride = 0): void {
    this.dispatch(KERNEL_INDEX.softmax, nRows, 1, n * nRows * 16, x, n * 4, y, n * 4, n, scale, mask, maskStride);
  }
  /**
   * cos/sin rows per position for one RoPE configuration, computed once per position and kept: every
   * layer (and Q and K) rotates by the same angles, and glibc's sinf/cosf (whose exact bits ggml uses)
   * are slow in TS, allocating for large arguments.
   */
  private ropeCaches = new Map<string, RopeRows>();
  // callers bind their RopeArgs once per plan: look those up by identity (no key string per call)
  private ropeByArgs = new WeakMap<RopeArgs, RopeRows>();
  private ropeRows(r: RopeArgs, nDims: number): RopeRows {
    const known = this.ropeByArgs.get(r);
    if (known) return known;
    const ff = r.freqFactors;
    let ffKey = '';
    if (ff) for (let j = 0; j < nDims / 2; j++) ffKey += `${ff[j]},`;
    const key = `${r.freqBase}|${r.freqScale ?? 1}|${r.mscale ?? 1}|${nDims}|${ffKey}`;
    let c = this.ropeCaches.get(key);
    if (!c) this.ropeCaches.set(key, (c = new RopeRows(r.freqBase, r.freqScale ?? 1, r.mscale ?? 1, nDims, ff ? Float32Array.from({ length: nDims / 2 }, (_, j) => ff[j]!) : undefined)));
    this.ropeByArgs.set(r, c);
    return c;
  }
  rope(r: RopeArgs): void {
    const { nTokens, nHead, headDim, nDims } = r;
    if (nDims % 2 || nDims > headDim) throw new CpuRuntimeError('BAD_SHAPE', `rope over ${nDims} of ${headDim} dims`);
    const tab = this.ensureRopeTable(nTokens * nDims);
    const t = this.heapF32();
    const tb = tab >> 2;
    const rows = this.ropeRows(r, nDims);
    for (let i = 0; i < nTokens; i++) {
      const pos = r.positions[i]!;
      const src = rows.ensure(pos);
      const o = tb + i * nDims;
      const so = pos * nDims;
      for (let j = 0; j < nDims; j++) t[o + j] = src[so + j]!;
    }
    const hs = r.headStride ?? headDim * 4;
    const ts = r.tokenStride ?? nHead * hs;
    this.dispatch(KERNEL_INDEX.rope, nTokens * nHead, 1, nTokens * nHead * nDims * 2, r.x, ts, hs, nHead, nDims, tab, r.neox ? 1 : 0);
  }
  silu(x: number, y: number, n: number): void {
    this.dispatch(KERNEL_INDEX.silu, n, 16, n * 8, x, y);
  }
  siluMul(g: number, u: number, y: number, n: number): void {
    this.dispatch(KERNEL_INDEX.silu_mul, n, 16, n * 8, g, u, y);
  }
  gelu(x: number, y: number, n: number): void {
    this.dispatch(KERNEL_INDEX.gelu, n, 16, n * 16, x, y);
  }
  add(a: number, b: number, y: number, n: number): void {
    this.dispatch(KERNEL_INDEX.add, n, 16, n, a, b, y);
  }
  mul(a: number, b: number, y: number, n: number): void {
    this.dispatch(KERNEL_INDEX.mul, n, 16, n, a, b, y);
  }
  scale(x: number, y: number, n: number, s: number): void {
    this.dispatch(KERNEL_INDEX.scale, n, 16, n, x, y, s);
  }
  f32ToF16(x: number, y: number, n: number): void {
    this.dispatch(KERNEL_INDEX.cvt_f32_f16, n, 16, n * 4, x, y);
  }
  f16ToF32(x: number, y: number, n: number): void {
    this.dispatch(KERNEL_INDEX.cvt_f16_f32, n, 16, n * 4, x, y);
  }
  attention(p: AttentionArgs): void {
    const { nTokens, nHead, nKvHead, headDim } = p;
    if (nHead % nKvHead) throw new CpuRuntimeError('BAD_SHAPE', `${nHead} heads do not share ${nKvHead} kv heads evenly`);
    const qs = p.qStride ?? nHead * headDim * 4;
    const kvs = p.kvStride ?? nKvHead * headDim * 2;
    const os = p.outStride ?? nHead * headDim * 4;
    const work = nTokens * nHead * headDim * (p.mask ? (p.nKv ?? 0) : p.kvBase + nTokens) * 2;
    const gqa = nHead / nKvHead;
    // work items: tiles of ATT_TILE query tokens x kv heads (see kernels/kernels.ts attn_f16), the heads of
    // a kv head split in parts when there are fewer items than threads
    const groups = Math.ceil(nTokens / ATT_TILE) * nKvHead;
    const hsplit = Math.min(gqa, Math.ceil(this.threads / groups));
    const items = groups * hsplit;
    const scr = this.ensureAttnScratch(attnScratchBytes(nTokens, nKvHead, headDim, gqa, hsplit));
    const pp = this.ensureParams();
    const i32 = this.heapI32(), f32 = this.heapF32(), b = pp >> 2;
    i32[b] = p.q; i32[b + 1] = qs; i32[b + 2] = p.k; i32[b + 3] = p.v; i32[b + 4] = kvs; i32[b + 5] = p.out; i32[b + 6] = os;
    i32[b + 7] = nKvHead; i32[b + 8] = headDim; i32[b + 9] = gqa | (hsplit << 16); i32[b + 10] = p.kvBase; f32[b + 11] = p.scale;
    i32[b + 12] = scr; i32[b + 13] = nTokens; i32[b + 14] = p.mask ?? 0; i32[b + 15] = p.maskStride ?? (p.nKv ?? 0) * (p.maskF16 ? 2 : 4);
    i32[b + 16] = p.nKv ?? 0; i32[b + 17] = p.maskF16 ? 1 : 0;
    if (p.mask && !(p.nKv! > 0)) throw new CpuRuntimeError('BAD_SHAPE', 'attention with a mask needs nKv');
    this.dispatch(KERNEL_INDEX.attn_f16, items, 1, work, pp);
  }

  reserveAttentionGgml(headDim: number, maxPos: number, nKvHead = 0): void {
    this.ensureParams();
    this.ensureAttnScratch(ggmlAttnScratchBytes(headDim, maxPos) * this.threads);
    if (nKvHead) this.grow(this.attnKvR, attnKvBytes(nKvHead, headDim, maxPos));
  }
  attentionGgml(p: GgmlAttentionArgs): void {
    const { nTokens, nHead, nKvHead, headDim } = p;
    if (nHead % nKvHead) throw new CpuRuntimeError('BAD_SHAPE', `${nHead} heads do not share ${nKvHead} kv heads evenly`);
    const items = nTokens * nHead;
    const work = items * headDim * (p.maxPos + 1) * 4;
    const threads = work < this.minWork ? 1 : this.threads;
    const slice = Math.ceil(items / threads);
    const perThread = ggmlAttnScratchBytes(headDim, p.maxPos);
    const scr = this.ensureAttnScratch(perThread * this.threads);
    const pp = this.ensureParams();
    const i32 = this.heapI32(), f32 = this.heapF32(), b = pp >> 2;
    i32[b] = p.q; i32[b + 1] = nHead * headDim * 4; i32[b + 2] = p.k; i32[b + 3] = p.v; i32[b + 4] = nKvHead * headDim * 2;
    i32[b + 5] = p.out; i32[b + 6] = nHead * headDim * 4; i32[b + 7] = nHead; i32[b + 8] = nHead / nKvHead; i32[b + 9] = headDim;
    f32[b + 10] = p.scale; i32[b + 11] = p.window; i32[b + 12] = p.positions; i32[b + 13] = scr; i32[b + 14] = perThread;
    i32[b + 15] = slice; i32[b + 16] = nTokens >= 2 ? 1 : 0;
    if (nTokens >= 2) {
      // widen K (rows) and V (transposed) to f32 once for all query tokens and heads
      const p16 = alignUp(p.maxPos + 1, 16);
      const kv = this.grow(this.attnKvR, attnKvBytes(nKvHead, headDim, p.maxPos));
      const q = pp + 128, c = q >> 2;
      i32[c] = p.k; i32[c + 1] = p.v; i32[c + 2] = nKvHead * headDim * 2; i32[c + 3] = headDim; i32[c + 4] = p.maxPos;
      i32[c + 5] = kv; i32[c + 6] = kv + nKvHead * p16 * headDim * 4; i32[c + 7] = p16;
      this.dispatch(KERNEL_INDEX.attn_kv_f32, nKvHead * (p16 / 16), 1, nKvHead * p16 * headDim * 8, q);
      i32[b + 17] = kv; i32[b + 18] = kv + nKvHead * p16 * headDim * 4; i32[b + 19] = p16;
    }
    this.dispatch(KERNEL_INDEX.attn_ggml, items, 1, work, pp);
  }

  getRows(wtype: number, table: number, cols: number, ids: ArrayLike<number>, out: number): void {
    const repacked = wtype === CpuLayout.Q4_0x4 || wtype === CpuLayout.Q4_0r4 || wtype === CpuLayout.Q8_0r4;
    const rb = repacked ? weightRowBytes(wtype, cols) : rowBytesOf(wtype, cols);
    const base = !repacked ? wtype : wtype === CpuLayout.Q8_0r4 ? GgmlType.Q8_0 : GgmlType.Q4_0;
    const deq = dequantizer(base);
    const u8 = this.heapU8();
    const f32 = this.heapF32();
    if (out % 4) throw new CpuRuntimeError('BAD_SHAPE', `getRows output ${out} is not 4-byte aligned`);
    for (let i = 0; i < ids.length; i++) {
      let src = u8, so = table + ids[i]! * rb;
      if (wtype === CpuLayout.Q4_0x4) {
        // undo the 4-block grouping of this row into a reusable buffer
        if (!this.rowTmp || this.rowTmp.length < rb) this.rowTmp = new Uint8Array(rb);
        const t = this.rowTmp;
        for (let g = 0; g < rb; g += 72) {
          for (let k = 0; k < 4; k++) {
            t[g + k * 18] = u8[so + g + 2 * k]!;
            t[g + k * 18 + 1] = u8[so + g + 2 * k + 1]!;
            t.set(u8.subarray(so + g + 8 + 16 * k, so + g + 24 + 16 * k), g + k * 18 + 2);
          }
        }
        src = t; so = 0;
      } else if (wtype === CpuLayout.Q4_0r4 || wtype === CpuLayout.Q8_0r4) {
        // gather this row's blocks out of its 4-row group
        if (!this.rowTmp || this.rowTmp.length < rb) this.rowTmp = new Uint8Array(rb);
        const bs = wtype === CpuLayout.Q4_0r4 ? 18 : 34, qb = bs - 2;
        const t = this.rowTmp, r = ids[i]!, g = table + (r - (r & 3)) * rb, j = r & 3;
        for (let b = 0; b < rb / bs; b++) {
          const o = g + b * 4 * bs;
          t[b * bs] = u8[o + 2 * j]!;
          t[b * bs + 1] = u8[o + 2 * j + 1]!;
          t.set(u8.subarray(o + 8 + qb * j, o + 8 + qb * (j + 1)), b * bs + 2);
        }
        src = t; so = 0;
      }
      deq(src, so, f32, out / 4 + i * cols, cols);
    }
  }
  copy(src: number, dst: number, bytes: number): void {
    this.heapU8().copyWithin(dst, src, src + bytes);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    Atomics.store(this.ctl, CTL.STOP, 1);
    Atomics.add(this.ctl, CTL.GEN, 1);
    Atomics.notify(this.ctl, CTL.GEN);
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}
