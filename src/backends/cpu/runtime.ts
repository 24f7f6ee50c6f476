// The CPU runtime: one shared WebAssembly.Memory holding weights and activations, the SIMD kernels
// instantiated on the main thread and on every pool worker, and row-parallel ops. A backend calls it per op
// with tensor pointers; nothing here allocates per call (scratch buffers grow once to the largest shape seen,
// or are reserved up front with `reserve`). This file is the API; each concern has its module in runtime/:
// memory.ts (allocator, views, scratch regions), pool.ts (thread pool) + protocol.ts (its control block and
// the kernel table), layouts.ts (weight kernels, row geometry, repacking), matmul.ts (activation quantization,
// matmul dispatch), rope.ts (RoPE tables), attention.ts (attention parameter blocks).
import { KERNEL_INDEX, kernelExports, type KernelExports, type KernelName } from './runtime/protocol.js';
import { compileKernels, relaxedSimdAvailable, type KernelVariant } from './wasm.js';
import { availableCores, canShareMemory, type SpawnWorker } from './workers.js';
import { CpuRuntimeError } from './runtime/errors.js';
import { HEAP_BASE, PAGE, ScratchRegion, WASM32_MAX_PAGES, WasmHeap, type CpuArena } from './runtime/memory.js';
import { ThreadPool } from './runtime/pool.js';
import { Layouts } from './runtime/layouts.js';
import { Matmuls } from './runtime/matmul.js';
import { Rope, type RopeArgs } from './runtime/rope.js';
import { Attention, type GgmlAttentionArgs } from './runtime/attention.js';

export { CpuRuntimeError } from './runtime/errors.js';
export type { CpuArena } from './runtime/memory.js';
export type { RopeArgs } from './runtime/rope.js';
export type { GgmlAttentionArgs } from './runtime/attention.js';
export { ggmlAttnScratchBytes } from './runtime/attention.js';
export { CpuLayout, activationTypeFor, activationRowBytes, weightRowBytes, MATMUL_TYPES } from './runtime/layouts.js';
export { q4KGemmRows } from '../ggml-routing.js';

export interface CpuRuntimeOptions {
  /** threads taking part in each op, the main thread included; default: available cores */
  threads?: number;
  /** kernel wasm bytes or module (default: the embedded build) */
  wasm?: BufferSource | WebAssembly.Module;
  /** largest memory the runtime may grow to, bytes (default and maximum 4 GiB, wasm32's limit) */
  maxMemoryBytes?: number;
  /** initial memory, bytes */
  initialMemoryBytes?: number;
  /** spin iterations before a waiting thread blocks in Atomics.wait (default 2000, ~27 us on the AMD EPYC VM;
   *  lower it on an oversubscribed machine, where spinning steals the core a descheduled peer needs; in Node
   *  GGUF_EDGE_SPIN=N sets it when no option does) */
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
   * Use the relaxed-SIMD build of the kernels when the engine supports it and its start-up self-tests
   * pass (default true; Node 20 needs --experimental-wasm-relaxed-simd, which the CLI sets). Same
   * results either way: the relaxed dot products only ever see exact operands, and relaxed_madd is
   * used as fmaf only once it is proven fused.
   */
  relaxedSimd?: boolean;
}

/** ops smaller than this many multiply-adds run on the calling thread alone */
const PARALLEL_MIN_WORK = 1 << 15;

export interface CpuRuntime {
  readonly threads: number;
  /** the kernel build in use: 'relaxed' (relaxed-SIMD dot products) or 'simd128' */
  readonly simd: KernelVariant;
  /** free-order matmul kernels where they exist (CpuRuntimeOptions.numerics 'fast') */
  readonly fastNumerics: boolean;
  readonly memory: WebAssembly.Memory;
  /** the main thread's kernel instance (call directly for single-threaded work) */
  readonly kernels: KernelExports;
  /** allocates `bytes` (aligned to `align`, default 64; first fit over freed ranges, else grows the memory) */
  alloc(bytes: number, align?: number): number;
  /** returns an allocation from alloc() (or an arena's base) for reuse */
  free(ptr: number): void;
  /** reserves a region of `bytes` for activations and returns its sub-allocator */
  createArena(bytes: number): CpuArena;
  /** current allocation top; `release(mark())` frees everything allocated after the mark */
  mark(): number;
  release(mark: number): void;
  /** end of the highest live allocation: the part of the memory in use */
  used(): number;
  /** bytes held by live allocations */
  liveBytes(): number;
  /** the most bytes the memory may grow to (at most 4 GiB, wasm32's limit) */
  readonly maxBytes: number;
  /** reserve the internal scratch (quantized activations, rope table, attention) for the largest shapes up front */
  reserve(maxTokens: number, maxCols: number, maxRopeDims?: number): void;
  /** sizes the rope rows of `args`' configuration for positions up to maxPos now, so rope() never allocates below it */
  reserveRope(args: RopeArgs, maxPos: number): void;
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
  /** aStride: activation row bytes (default activationRowBytes); nGemm: Q4_K rows in the GEMM order (default the multiple of 4 below nTokens; 0 = all one-token order) */
  matmulQ(wtype: number, w: number, rows: number, cols: number, a: number, nTokens: number, y: number, yStride?: number, aStride?: number, nGemm?: number): void;
  /** Q4_0 -> CpuLayout.Q4_0r4 or Q8_0 -> CpuLayout.Q8_0r4 (4 rows interleaved per block; rows % 4 == 0), in place; returns the layout id */
  repackRows4(w: number, rows: number, cols: number, wtype?: number): number;
  /**
   * y = W . x for the activations the previous matmul() call quantized (same activation type, columns,
   * tokens and Q4_K GEMM rows; nothing else may have called matmul in between): no quantization and no
   * side table again, e.g. for the K and V projections after Q. Throws when the activations differ.
   */
  matmulShared(wtype: number, w: number, rows: number, cols: number, nTokens: number, y: number, single?: number): void;
  /**
   * as matmulQ from f32 activations xStride bytes apart (default cols*4), quantized first into the runtime's scratch as ggml does.
   * `single` (default nTokens): activation rows from it on take the one-token kernel order (Q4_K: GEMV, not GEMM; graph.ts inp_batch_rows).
   */
  matmul(wtype: number, w: number, rows: number, cols: number, x: number, nTokens: number, y: number, xStride?: number, yStride?: number, single?: number): void;
  /** as matmul, each row in the float order of llama.cpp's one-token kernel (mul_mat_id: no tinyBLAS, no Q4_K GEMM) */
  matmulRows(wtype: number, w: number, rows: number, cols: number, x: number, nTokens: number, y: number): void;
  /** true when matmulExperts computes weights of this type (the quantized ones) */
  expertsKernel(wtype: number): boolean;
  /** sizes matmulExperts' slot table for up to nSlots slots (so that it allocates nothing below that) */
  reserveExperts(nSlots: number): void;
  /**
   * mul_mat_id's experts in one dispatch over all their rows: slotN[s] output rows from slotY[s] (rows * 4 bytes
   * apart) = the rows x cols matrix at slotW[s] . slotN[s] activation rows from row slotX[s] of the nX f32 rows
   * at x (byte pointers), in matmulRows' order and bits; the nX rows are quantized once
   */
  matmulExperts(wtype: number, rows: number, cols: number, x: number, nX: number, slotW: Int32Array, slotX: Int32Array, slotY: Int32Array, slotN: Int32Array, nSlots: number): void;
  /** a scratch region of at least `bytes` for gathering rows (mul_mat_id); grows once to the largest plan, so calls with a reserved size allocate nothing */
  gatherScratch(bytes: number): number;
  rmsNorm(x: number, y: number, n: number, nRows: number, eps: number, weight?: number): void;
  /** y[r] = x[r] + bias for nRows rows of n (the bias row broadcast) */
  addRow(x: number, bias: number, y: number, n: number, nRows: number): void;
  /** y[r] = x[r] * w for nRows rows of n (the weight row broadcast) */
  mulRow(x: number, w: number, y: number, n: number, nRows: number): void;
  rope(args: RopeArgs): void;
  siluMul(g: number, u: number, y: number, n: number): void;
  /** moe_sum: out[:, t] = sum over the k slots of y[:, i, t] * w[i, t] (n-wide rows, nTok tokens; f32 products and adds in slot order) */
  moeSum(y: number, w: number, out: number, n: number, k: number, nTok: number): void;
  add(a: number, b: number, y: number, n: number): void;
  mul(a: number, b: number, y: number, n: number): void;
  scale(x: number, y: number, n: number, s: number): void;
  /** y = tanh(x / cap) * cap in f32 with glibc's tanhf (ggml's softcap: scale, tanh, scale) */
  softcap(x: number, y: number, n: number, cap: number): void;
  /** y = silu(x) per row of rowLen (ggml's 16-lane v_expf, each row's tail with glibc expf) */
  siluRows(x: number, y: number, rowLen: number, nRows: number): void;
  /** y = 1 / (1 + expf(-x)), glibc expf */
  sigmoid(x: number, y: number, n: number): void;
  /** y = x > 20 ? x : logf(1 + expf(x)), glibc expf/logf */
  softplus(x: number, y: number, n: number): void;
  /** the fused gated delta rule over nHeadV heads of S x S state (kernels/recurrent.ts), heads across threads */
  gatedDeltaNet(state: number, q: number, k: number, v: number, g: number, beta: number, y: number, nTok: number, S: number, nHeadK: number, nHeadV: number): void;
  /** y = x / max(sqrt(sum x^2), eps) per row of rowLen (ggml's l2_norm: the squares summed in double), rows across threads */
  l2Norm(x: number, y: number, rowLen: number, nRows: number, eps: number): void;
  /** the causal depthwise conv of width `kernel` over nTok tokens of `channels` (kernels/recurrent.ts ssm_conv_f32), channels across threads; updates the state */
  ssmConv(state: number, x: number, w: number, y: number, nTok: number, channels: number, kernel: number): void;
  f32ToF16(x: number, y: number, n: number): void;
  /** attention as llama.cpp's CPU backend computes it without flash attention, bit for bit */
  attentionGgml(args: GgmlAttentionArgs): void;
  /** attention as llama.cpp's CPU backend computes it with flash attention (f16 caches), bit for bit */
  attentionFlash(args: GgmlAttentionArgs): void;
  /** reserves attentionFlash's scratch for a head size */
  reserveAttentionFlash(headDim: number): void;
  /** flash attention over q8_0 (q4: q4_0) K and V caches (kernels/attention-kvq.ts attn_flash_q8) */
  attentionFlashQ8(args: GgmlAttentionArgs, q4?: boolean): void;
  reserveAttentionFlashQ8(headDim: number): void;
  /** reserves attentionGgml's scratch for positions up to maxPos (and, given nKvHead, for batches), so later calls allocate nothing */
  /** nHead: the query heads (bounds the decode scratch; default: the most one pass serves) */
  reserveAttentionGgml(headDim: number, maxPos: number, nKvHead?: number, nHead?: number): void;
  /** out[i] = row ids[i] of a (rows x cols) table of type wtype (any ggml type src/quant dequantizes, or a CpuLayout), as f32 */
  getRows(wtype: number, table: number, cols: number, ids: ArrayLike<number>, out: number): void;
  /** copies `bytes` bytes (regions may overlap) */
  copy(src: number, dst: number, bytes: number): void;
  close(): Promise<void>;
}

export async function createCpuRuntime(opts: CpuRuntimeOptions = {}): Promise<CpuRuntime> {
  // a page without cross-origin isolation cannot share the memory with workers: one thread, not a failure
  const threads = canShareMemory() ? Math.max(1, Math.floor(opts.threads ?? (await availableCores()))) : 1;
  let variant: KernelVariant = opts.wasm === undefined && opts.relaxedSimd !== false && relaxedSimdAvailable() ? 'relaxed' : 'simd128';
  let module = opts.wasm instanceof WebAssembly.Module ? opts.wasm : await compileKernels(opts.wasm, variant);
  const maxBytes = Math.min(opts.maxMemoryBytes ?? WASM32_MAX_PAGES * PAGE, WASM32_MAX_PAGES * PAGE);
  const maxPages = Math.floor(maxBytes / PAGE);
  const initialPages = Math.min(maxPages, Math.max(2, Math.ceil((opts.initialMemoryBytes ?? 0) / PAGE)));
  const memory = new WebAssembly.Memory({ initial: initialPages, maximum: maxPages, shared: true });
  let instance = await WebAssembly.instantiate(module, { env: { memory } });
  if (variant === 'relaxed' && !(relaxedSelfTest(instance, memory) && fusedMaddTest(instance, memory))) {
    // e.g. V8 11.3's baseline compiler gets the relaxed dot product wrong until tier-up; an engine may lower
    // relaxed_madd unfused, and the relaxed kernels use it as fmaf
    variant = 'simd128';
    module = await compileKernels(undefined, variant);
    instance = await WebAssembly.instantiate(module, { env: { memory } });
  }
  const kernels = kernelExports(instance.exports);

  const minWork = opts.parallelMinWork ?? PARALLEL_MIN_WORK;
  // GGUF_EDGE_SPIN (Node): the spin without an option, to measure it end to end (bench, compare, serve)
  const spinVar = (globalThis as { process?: { env: Record<string, string | undefined> } }).process?.env.GGUF_EDGE_SPIN, envSpin = spinVar ? Number(spinVar) : NaN;
  const pool = await ThreadPool.start(module, memory, kernels, threads, { spin: opts.spin ?? (envSpin >= 0 ? envSpin : undefined), minWork, spawnWorker: opts.spawnWorker });
  return new Runtime(threads, new WasmHeap(memory, maxPages), pool, kernels, minWork, opts.numerics === 'fast', variant);
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

/**
 * Runs the relaxed build's fma_selftest: f32x4.relaxed_madd must be one fused multiply-add (C's fmaf) on 4
 * lanes whose unfused result is 0: (1+2^-12)^2 - (1+2^-11) = 2^-24, its negation, a subnormal result 2^-149
 * (also 0 under flush-to-zero) and 3*fl(1/3) - 1 = 2^-25.
 */
export function fusedMaddTest(instance: WebAssembly.Instance, memory: WebAssembly.Memory): boolean {
  const test = instance.exports.fma_selftest as ((p: number) => void) | undefined;
  if (!test) return false;
  const p = 1024, v = new Float32Array(memory.buffer, p, 16);
  const e = 1 + 2 ** -12, f = 1 + 2 ** -11;
  const want = [2 ** -24, -(2 ** -24), 2 ** -149, 2 ** -25];
  let ok = true;
  for (let k = 0; k < 2; k++) {
    v.set([e, e, e * 2 ** -62, 3, e, -e, e * 2 ** -63, Math.fround(1 / 3), -f, f, -f * 2 ** -125, -1, 0, 0, 0, 0]);
    test(p);
    for (let l = 0; l < 4; l++) ok &&= Object.is(v[12 + l], want[l]);
  }
  v.fill(0);
  return ok;
}


/** The CpuRuntime API over the concern modules (runtime/). */
class Runtime implements CpuRuntime {
  readonly memory: WebAssembly.Memory;
  private readonly layouts: Layouts;
  private readonly mm: Matmuls;
  private readonly ropes: Rope;
  private readonly attn: Attention;
  private readonly gather: ScratchRegion;

  constructor(
    readonly threads: number,
    private readonly heap: WasmHeap,
    private readonly pool: ThreadPool,
    readonly kernels: KernelExports,
    minWork: number,
    /** free-order matmul kernels where they exist (CpuRuntimeOptions.numerics 'fast') */
    readonly fastNumerics: boolean,
    /** which kernel build runs (see wasm.ts) */
    readonly simd: KernelVariant,
  ) {
    this.memory = heap.memory;
    this.layouts = new Layouts(heap, pool);
    this.mm = new Matmuls(heap, pool, fastNumerics, simd === 'relaxed');
    this.ropes = new Rope(heap, pool);
    this.attn = new Attention(heap, pool, threads, minWork);
    this.gather = new ScratchRegion(heap);
  }

  // memory
  alloc(bytes: number, align = 64): number { return this.heap.alloc(bytes, align); }
  free(ptr: number): void { this.heap.free(ptr); }
  createArena(bytes: number): CpuArena { return this.heap.createArena(bytes); }
  mark(): number { return this.heap.mark(); }
  release(mark: number): void {
    if (mark < HEAP_BASE || mark > this.heap.used()) throw new CpuRuntimeError('BAD_SHAPE', `bad mark ${mark}`);
    // the scratch regions above the mark go with it
    this.mm.dropAbove(mark);
    this.ropes.table.dropAbove(mark);
    this.attn.dropAbove(mark);
    this.gather.dropAbove(mark);
    this.heap.release(mark);
  }
  get maxBytes(): number { return this.heap.maxBytes; }
  used(): number { return this.heap.used(); }
  liveBytes(): number { return this.heap.liveBytes(); }
  f32(ptr: number, length: number): Float32Array { return new Float32Array(this.heap.buffer(), ptr, length); }
  u8(ptr: number, length: number): Uint8Array { return new Uint8Array(this.heap.buffer(), ptr, length); }
  u16(ptr: number, length: number): Uint16Array { return new Uint16Array(this.heap.buffer(), ptr, length); }

  reserve(maxTokens: number, maxCols: number, maxRopeDims = 0): void {
    this.mm.reserve(maxTokens, maxCols);
    if (maxRopeDims) this.ropes.reserve(maxTokens, maxRopeDims);
  }
  reserveRope(args: RopeArgs, maxPos: number): void { this.ropes.prepare(args, maxPos); }

  run(name: KernelName, n: number, align: number, work: number, ...a: number[]): void {
    this.pool.dispatch(KERNEL_INDEX[name], n, align, work, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12], a[13]);
  }

  // matmuls and weight layouts
  quantize(vtype: number, x: number, cols: number, nRows: number, y: number, xStride = cols * 4, tieRows = 0): void {
    this.mm.quantize(vtype, x, cols, nRows, y, xStride, tieRows);
  }
  matmulQ(wtype: number, w: number, rows: number, cols: number, a: number, nTokens: number, y: number, yStride?: number, aStride?: number, nGemm?: number): void {
    this.mm.matmulQ(wtype, w, rows, cols, a, nTokens, y, yStride, aStride, nGemm);
  }
  matmulShared(wtype: number, w: number, rows: number, cols: number, nTokens: number, y: number, single?: number): void {
    this.mm.matmulShared(wtype, w, rows, cols, nTokens, y, single);
  }
  matmulRows(wtype: number, w: number, rows: number, cols: number, x: number, nTokens: number, y: number): void {
    this.mm.matmulRows(wtype, w, rows, cols, x, nTokens, y);
  }
  gatherScratch(bytes: number): number { return this.gather.grow(bytes); }
  expertsKernel(wtype: number): boolean { return this.mm.expertsKernel(wtype); }
  reserveExperts(nSlots: number): void { this.mm.reserveExperts(nSlots); }
  matmulExperts(wtype: number, rows: number, cols: number, x: number, nX: number, slotW: Int32Array, slotX: Int32Array, slotY: Int32Array, slotN: Int32Array, nSlots: number): void {
    this.mm.matmulExperts(wtype, rows, cols, x, nX, slotW, slotX, slotY, slotN, nSlots);
  }
  matmul(wtype: number, w: number, rows: number, cols: number, x: number, nTokens: number, y: number, xStride?: number, yStride?: number, single?: number): void {
    this.mm.matmul(wtype, w, rows, cols, x, nTokens, y, xStride, yStride, single);
  }
  repackRows4(w: number, rows: number, cols: number, wtype?: number): number { return this.layouts.repackRows4(w, rows, cols, wtype); }
  getRows(wtype: number, table: number, cols: number, ids: ArrayLike<number>, out: number): void { this.layouts.getRows(wtype, table, cols, ids, out); }

  // row and element ops
  rmsNorm(x: number, y: number, n: number, nRows: number, eps: number, weight = 0): void {
    this.pool.dispatch(KERNEL_INDEX.rms_norm, nRows, 1, n * nRows * 4, x, n * 4, y, n * 4, n, eps, weight);
  }
  addRow(x: number, bias: number, y: number, n: number, nRows: number): void {
    this.pool.dispatch(KERNEL_INDEX.add_row, nRows, 1, n * nRows, x, n * 4, bias, y, n * 4, n);
  }
  mulRow(x: number, w: number, y: number, n: number, nRows: number): void {
    this.pool.dispatch(KERNEL_INDEX.mul_row, nRows, 1, n * nRows, x, n * 4, w, y, n * 4, n);
  }
  // chunked (element-independent, chunks of multiples of 16 keep silu4's groups): the caller never waits for a
  // late worker's half of a decode step's SwiGLU
  moeSum(y: number, w: number, out: number, n: number, k: number, nTok: number): void { this.pool.dispatch(KERNEL_INDEX.moe_sum, nTok, 1, nTok * k * n, y, w, out, n, k); }
  siluMul(g: number, u: number, y: number, n: number): void { this.pool.dispatchChunked(KERNEL_INDEX.silu_mul, n, 16, n * 8, g, u, y); }
  add(a: number, b: number, y: number, n: number): void { this.pool.dispatch(KERNEL_INDEX.add, n, 16, n, a, b, y); }
  mul(a: number, b: number, y: number, n: number): void { this.pool.dispatch(KERNEL_INDEX.mul, n, 16, n, a, b, y); }
  scale(x: number, y: number, n: number, s: number): void { this.pool.dispatch(KERNEL_INDEX.scale, n, 16, n, x, y, s); }
  softcap(x: number, y: number, n: number, cap: number): void { this.pool.dispatch(KERNEL_INDEX.softcap, n, 16, n * 24, x, y, cap); }
  siluRows(x: number, y: number, rowLen: number, nRows: number): void { this.pool.dispatch(KERNEL_INDEX.silu_rows, nRows, 1, nRows * rowLen * 24, x, y, rowLen); }
  sigmoid(x: number, y: number, n: number): void { this.pool.dispatch(KERNEL_INDEX.sigmoid_f32, n, 16, n * 24, x, y); }
  softplus(x: number, y: number, n: number): void { this.pool.dispatch(KERNEL_INDEX.softplus_f32, n, 16, n * 48, x, y); }
  gatedDeltaNet(state: number, q: number, k: number, v: number, g: number, beta: number, y: number, nTok: number, S: number, nHeadK: number, nHeadV: number): void {
    this.pool.dispatch(KERNEL_INDEX.gated_delta_net, nHeadV, 1, nHeadV * nTok * S * S * 4, state, q, k, v, g, beta, y, nTok, S, nHeadK, nHeadV);
  }
  l2Norm(x: number, y: number, rowLen: number, nRows: number, eps: number): void { this.pool.dispatch(KERNEL_INDEX.l2_norm_rows, nRows, 1, nRows * rowLen * 2, x, y, rowLen, eps); }
  ssmConv(state: number, x: number, w: number, y: number, nTok: number, channels: number, kernel: number): void {
    this.pool.dispatch(KERNEL_INDEX.ssm_conv_f32, channels, 4, channels * nTok * kernel, state, x, w, y, nTok, channels, kernel);
  }
  f32ToF16(x: number, y: number, n: number): void { this.pool.dispatch(KERNEL_INDEX.cvt_f32_f16, n, 16, n * 4, x, y); }
  copy(src: number, dst: number, bytes: number): void { this.heap.u8All().copyWithin(dst, src, src + bytes); }

  // rope and attention
  rope(r: RopeArgs): void { this.ropes.rope(r); }
  reserveAttentionGgml(headDim: number, maxPos: number, nKvHead = 0, nHead?: number): void { this.attn.reserve(headDim, maxPos, nKvHead, nHead); }
  attentionGgml(p: GgmlAttentionArgs): void { this.attn.attentionGgml(p); }
  attentionFlash(p: GgmlAttentionArgs): void { this.attn.attentionFlash(p); }
  reserveAttentionFlash(headDim: number): void { this.attn.reserveFlash(headDim); }
  attentionFlashQ8(p: GgmlAttentionArgs, q4 = false): void { this.attn.attentionFlashQ8(p, q4); }
  reserveAttentionFlashQ8(headDim: number): void { this.attn.reserveFlashQ8(headDim); }

  async close(): Promise<void> { await this.pool.close(); }
}
