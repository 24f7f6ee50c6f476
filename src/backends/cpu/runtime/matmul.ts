// Matmuls: the activations quantized as ggml's from_float does (into a scratch that grows once to the
// largest batch), the kernel's side table built, and the weight type's kernel dispatched over weight rows.
// Every mm_* kernel takes the same arguments (kernels/mm/): (r0, r1, w, ws, a, as, nTok, y, ys, nb, ax, axs,
// nGemm): weight rows [r0, r1) ws bytes apart, activation rows as bytes apart, output rows ys bytes apart,
// nb blocks per row, the side table ax (axs bytes per row), the activation rows Q4_K computes as a GEMM.
import { GgmlType, ggmlTypeName } from '../../../gguf/ggml-types.js';
import { q4KGemmRows } from '../../ggml-routing.js';
import { CpuRuntimeError } from './errors.js';
import { activationRowBytes, activationTypeFor, weightKernel, weightRowBytes } from './layouts.js';
import { alignUp, ScratchRegion, type WasmHeap } from './memory.js';
import type { ThreadPool } from './pool.js';
import { KERNEL_INDEX, type KernelName } from './protocol.js';
import { MMX_IQ4_NL, MMX_IQ4_XS, MMX_Q2_K, MMX_Q3_K, MMX_Q4_0, MMX_Q4_0R4, MMX_Q4_0R4_FAST, MMX_Q4_1, MMX_Q4_K, MMX_Q4_K_FAST, MMX_Q5_0, MMX_Q5_1, MMX_Q5_K, MMX_Q6_K, MMX_Q8_0, MMX_Q8_0_FAST, MMX_Q8_0R4_FAST, MMX_SLOT_BYTES } from '../kernel-abi.gen.js';

/** the kernels mm_experts runs (kernels/mm/experts.ts), by the name matmul dispatches */
const EXPERT_KINDS: Partial<Record<KernelName, number>> = {
  mm_q4_0: MMX_Q4_0, mm_q4_0r4: MMX_Q4_0R4, mmf_q4_0r4: MMX_Q4_0R4_FAST, mm_q4_1: MMX_Q4_1, mm_q5_0: MMX_Q5_0, mm_q5_1: MMX_Q5_1,
  mm_q8_0: MMX_Q8_0, mmf_q8_0: MMX_Q8_0_FAST, mmf_q8_0r4: MMX_Q8_0R4_FAST, mm_q2_K: MMX_Q2_K, mm_q3_K: MMX_Q3_K, mm_q4_K: MMX_Q4_K,
  mmf_q4_K: MMX_Q4_K_FAST, mm_q5_K: MMX_Q5_K, mm_q6_K: MMX_Q6_K, mm_iq4_nl: MMX_IQ4_NL, mm_iq4_xs: MMX_IQ4_XS,
};

/** one-token matmuls: weights per chunk at most about this many */
const ONE_TOKEN_CHUNK_WORK = 1 << 20;

export class Matmuls {
  /** quantized activations */
  readonly scratch: ScratchRegion;
  /** the kernels' activation side table */
  readonly aux: ScratchRegion;
  /** matmulExperts' slot table */
  readonly slots: ScratchRegion;
  // what the activation scratch and side table hold since the last matmul() (for matmulShared)
  private lastVt = -1;
  private lastCols = 0;
  private lastTok = 0;
  private lastGemm = 0;
  private lastAuxVt = -1;
  /** the relaxed build's Q4_K GEMM table (q8_K_x4: 4 tokens' Q8_K rows interleaved) */
  readonly x4: ScratchRegion;
  /** groups of 4 tokens the x4 table holds for the scratch's activations (0: none) */
  private lastX4 = 0;

  constructor(private readonly heap: WasmHeap, private readonly pool: ThreadPool, private readonly fastNumerics: boolean, private readonly relaxed = false) {
    this.scratch = new ScratchRegion(heap);
    this.aux = new ScratchRegion(heap);
    this.x4 = new ScratchRegion(heap);
    this.slots = new ScratchRegion(heap);
  }

  /** sizes the scratch for batches of up to maxTokens rows of up to maxCols */
  reserve(maxTokens: number, maxCols: number): void {
    this.growScratch(maxTokens * activationRowBytes(GgmlType.Q8_1, alignUp(maxCols, 256)) * 1.2);
    this.growAux(maxTokens * alignUp(maxCols, 256) * 3 * 1.1);
    if (this.relaxed) this.x4.grow(Math.ceil(maxTokens / 4) * (alignUp(maxCols, 256) / 256) * 1104);
  }
  private growScratch(bytes: number): number {
    const before = this.scratch.ptr;
    const p = this.scratch.grow(bytes);
    if (p !== before) { this.lastVt = -1; this.lastX4 = 0; }
    return p;
  }
  private growAux(bytes: number): number {
    const before = this.aux.ptr;
    const p = this.aux.grow(bytes);
    if (p !== before) this.lastAuxVt = -1;
    return p;
  }
  /** a release(mark) freed the scratch regions at or above mark */
  dropAbove(mark: number): void {
    if (this.scratch.dropAbove(mark)) this.lastVt = -1;
    if (this.aux.dropAbove(mark)) this.lastAuxVt = -1;
    if (this.x4.dropAbove(mark)) this.lastX4 = 0;
    this.slots.dropAbove(mark);
  }

  quantize(vtype: number, x: number, cols: number, nRows: number, y: number, xStride = cols * 4, tieRows = 0): void {
    const ys = activationRowBytes(vtype, cols);
    const work = cols * nRows * 4;
    const pool = this.pool;
    switch (vtype) {
      case GgmlType.Q8_0:
        if (cols % 32) throw new CpuRuntimeError('BAD_SHAPE', `Q8_0 rows need a multiple of 32 values, got ${cols}`);
        return pool.dispatch(KERNEL_INDEX.quantize_q8_0, nRows, 1, work, x, xStride, y, ys, cols);
      case GgmlType.Q8_1:
        if (cols % 32) throw new CpuRuntimeError('BAD_SHAPE', `Q8_1 rows need a multiple of 32 values, got ${cols}`);
        return pool.dispatch(KERNEL_INDEX.quantize_q8_1, nRows, 1, work, x, xStride, y, ys, cols);
      case GgmlType.Q8_K:
        if (cols % 256) throw new CpuRuntimeError('BAD_SHAPE', `Q8_K rows need a multiple of 256 values, got ${cols}`);
        return pool.dispatch(KERNEL_INDEX.quantize_q8_K, nRows, 1, work, x, xStride, y, ys, cols, tieRows);
      case GgmlType.F16:
        if (xStride === cols * 4) return pool.dispatch(KERNEL_INDEX.round_f16, cols * nRows, 16, work, x, y);
        for (let r = 0; r < nRows; r++) pool.dispatch(KERNEL_INDEX.round_f16, cols, 16, cols * 4, x + r * xStride, y + r * ys);
        return;
      case GgmlType.BF16:
        if (xStride === cols * 4) return pool.dispatch(KERNEL_INDEX.round_bf16, cols * nRows, 16, work, x, y);
        for (let r = 0; r < nRows; r++) pool.dispatch(KERNEL_INDEX.round_bf16, cols, 16, cols * 4, x + r * xStride, y + r * ys);
        return;
      default:
        throw new CpuRuntimeError('UNSUPPORTED_TYPE', `cannot quantize activations to ${ggmlTypeName(vtype)}`);
    }
  }

  matmulQ(wtype: number, w: number, rows: number, cols: number, a: number, nTokens: number, y: number, yStride = rows * 4, aStride = -1, nGemm = q4KGemmRows(wtype, rows, nTokens)): void {
    this.mm(wtype, w, rows, cols, a, nTokens, y, yStride, aStride, nGemm, false);
  }

  private mm(wtype: number, w: number, rows: number, cols: number, a: number, nTokens: number, y: number, yStride: number, aStride: number, nGemm: number, scratch: boolean): void {
    const k = weightKernel(wtype);
    const ws = weightRowBytes(wtype, cols);
    const vt = activationTypeFor(wtype);
    const as = aStride >= 0 ? aStride : activationRowBytes(vt, cols);
    const nb = cols / k.block;
    let ax = 0, axs = 0;
    if (this.relaxed && wtype === GgmlType.Q4_K) {
      // relaxed build: the 8-token GEMM (tokens below nGemm & ~7) reads the interleaved table, nothing else
      // reads a side table
      const g4 = (nGemm & ~7) >> 2;
      if (g4 > 0) {
        axs = nb * 1104;
        const before = this.x4.ptr;
        ax = this.x4.grow(g4 * axs);
        if (!scratch || ax !== before || this.lastX4 !== g4) {
          this.pool.dispatch(KERNEL_INDEX.q8_K_x4, g4, 1, g4 * 4 * cols, a, as, ax, nb);
          this.lastX4 = scratch ? g4 : 0;
        }
      }
    } else if (k.aux) {
      // per activation row: 84 B per 32-block (Q8_0/Q8_1 tables), 768 B per 256-block (Q8_K: widened quants,
      // then Q3_K's -4 * 4-value sums)
      axs = vt === GgmlType.Q8_K ? nb * 768 : nb * 84;
      ax = this.growAux(nTokens * axs);
      // a side table built from the scratch by an earlier matmul of the same activations is still valid
      if (!scratch || this.lastAuxVt !== vt) {
        const auxKernel = vt === GgmlType.Q8_1 ? KERNEL_INDEX.q8_1_aux : vt === GgmlType.Q8_K ? KERNEL_INDEX.q8_K_aux : KERNEL_INDEX.q8_0_aux;
        this.pool.dispatch(auxKernel, nTokens, 1, nTokens * cols, a, as, ax, axs, nb);
        this.lastAuxVt = scratch ? vt : -1;
      }
    }
    // rows are independent of the range a call gets: chunks of whole row tiles (ROW_TILE 8) and rowAlign
    // one token: chunks of at most ~2^20 weights (the output head's ~1000 rows, 0.1 ms; the layers keep the
    // pool's 8 per thread); batches keep those, whose GEMMs block their tokens over a chunk's rows
    this.pool.dispatchChunkedMin(nTokens === 1 ? Math.ceil((rows * cols) / ONE_TOKEN_CHUNK_WORK) : 0, KERNEL_INDEX[this.fastNumerics && k.fast ? k.fast : k.name], rows, chunkRows(k.rowAlign), rows * cols * nTokens, w, ws, a, as, nTokens, y, yStride, nb, ax, axs, nGemm);
  }

  matmulShared(wtype: number, w: number, rows: number, cols: number, nTokens: number, y: number, single = nTokens): void {
    const vt = activationTypeFor(wtype), nGemm = q4KGemmRows(wtype, rows, Math.min(single, nTokens));
    if (vt === GgmlType.F32 || vt !== this.lastVt || cols !== this.lastCols || nTokens !== this.lastTok || nGemm !== this.lastGemm) {
      throw new CpuRuntimeError('BAD_SHAPE', `matmulShared: the last matmul quantized other activations (type ${this.lastVt}, ${this.lastCols} x ${this.lastTok})`);
    }
    this.mm(wtype, w, rows, cols, this.scratch.ptr, nTokens, y, rows * 4, -1, nGemm, true);
  }

  /**
   * as matmul, every activation row in the float order llama.cpp's one-token kernel gives it (mul_mat_id's
   * contract): float weights one row at a time (tinyBLAS never runs), Q4_K without the GEMM rows.
   */
  matmulRows(wtype: number, w: number, rows: number, cols: number, x: number, nTokens: number, y: number): void {
    const vtype = activationTypeFor(wtype);
    if (vtype === GgmlType.F32 || vtype === GgmlType.F16 || vtype === GgmlType.BF16 || nTokens === 1) {
      for (let t = 0; t < nTokens; t++) this.matmul(wtype, w, rows, cols, x + t * cols * 4, 1, y + t * rows * 4);
      return;
    }
    weightRowBytes(wtype, cols);
    const a = this.growScratch(activationRowBytes(vtype, cols) * nTokens);
    this.lastVt = -1;
    this.quantize(vtype, x, cols, nTokens, a, cols * 4, 0);
    this.lastVt = vtype; this.lastCols = cols; this.lastTok = nTokens; this.lastGemm = 0; this.lastAuxVt = -1; this.lastX4 = 0;
    this.mm(wtype, w, rows, cols, a, nTokens, y, rows * 4, -1, 0, true);
  }

  /** true when matmulExperts computes this weight type (a quantized one whose kernel mm_experts runs) */
  expertsKernel(wtype: number): boolean {
    const k = weightKernel(wtype);
    return EXPERT_KINDS[this.fastNumerics && k.fast ? k.fast : k.name] !== undefined;
  }
  /** sizes the slot table for up to nSlots slots, so that matmulExperts allocates nothing below it */
  reserveExperts(nSlots: number): void { this.slots.grow(nSlots * MMX_SLOT_BYTES); }

  /**
   * mul_mat_id's experts, all in one dispatch: slot s computes slotN[s] output rows from slotY[s] (byte
   * pointer, rows * 4 bytes apart) = the matrix at byte pointer slotW[s] (rows x cols of wtype) . the slotN[s]
   * f32 activation rows from row slotX[s] of the nX rows at x (cols * 4 bytes apart). The nX rows are
   * quantized once; every slot runs the matmul kernel as matmulRows(..., slotN[s]) would (same bits; one row:
   * the one-token path). Only for weight types expertsKernel accepts.
   */
  matmulExperts(wtype: number, rows: number, cols: number, x: number, nX: number, slotW: Int32Array, slotX: Int32Array, slotY: Int32Array, slotN: Int32Array, nSlots: number): void {
    const k = weightKernel(wtype), name = this.fastNumerics && k.fast ? k.fast : k.name, kind = EXPERT_KINDS[name];
    if (kind === undefined) throw new CpuRuntimeError('UNSUPPORTED_TYPE', `matmulExperts: no expert kernel for ${ggmlTypeName(wtype)}`);
    const ws = weightRowBytes(wtype, cols), vt = activationTypeFor(wtype), as = activationRowBytes(vt, cols), nb = cols / k.block;
    const a = this.growScratch(as * nX);
    this.lastVt = -1;
    this.quantize(vt, x, cols, nX, a, cols * 4, 0);
    this.lastVt = vt; this.lastCols = cols; this.lastTok = nX; this.lastGemm = 0; this.lastAuxVt = -1; this.lastX4 = 0;
    let ax = 0, axs = 0;
    if (k.aux) {
      axs = vt === GgmlType.Q8_K ? nb * 768 : nb * 84;
      ax = this.growAux(nX * axs);
      const auxKernel = vt === GgmlType.Q8_1 ? KERNEL_INDEX.q8_1_aux : vt === GgmlType.Q8_K ? KERNEL_INDEX.q8_K_aux : KERNEL_INDEX.q8_0_aux;
      this.pool.dispatch(auxKernel, nX, 1, nX * cols, a, as, ax, axs, nb);
      this.lastAuxVt = vt;
    }
    const tbl = this.slots.grow(nSlots * MMX_SLOT_BYTES), t = this.heap.i32All();
    let work = 0;
    for (let s = 0, o = tbl >> 2; s < nSlots; s++, o += MMX_SLOT_BYTES >> 2) {
      const xi = slotX[s]!;
      t[o] = slotW[s]!; t[o + 1] = a + xi * as; t[o + 2] = ax + xi * axs; t[o + 3] = slotY[s]!; t[o + 4] = slotN[s]!;
      work += slotN[s]!;
    }
    this.pool.dispatchChunked(KERNEL_INDEX.mm_experts, nSlots * rows, chunkRows(k.rowAlign), rows * cols * work, kind, tbl, rows, ws, nb, as, axs);
  }

  matmul(wtype: number, w: number, rows: number, cols: number, x: number, nTokens: number, y: number, xStride = cols * 4, yStride = rows * 4, single = nTokens): void {
    const vtype = activationTypeFor(wtype);
    if (vtype === GgmlType.F32) return this.matmulQ(wtype, w, rows, cols, x, nTokens, y, yStride, xStride);
    weightRowBytes(wtype, cols);
    const a = this.growScratch(activationRowBytes(vtype, cols) * nTokens);
    const nGemm = q4KGemmRows(wtype, rows, Math.min(single, nTokens));
    this.lastVt = -1;
    this.quantize(vtype, x, cols, nTokens, a, xStride, nGemm);
    this.lastVt = vtype; this.lastCols = cols; this.lastTok = nTokens; this.lastGemm = nGemm; this.lastAuxVt = -1; this.lastX4 = 0;
    this.mm(wtype, w, rows, cols, a, nTokens, y, yStride, -1, nGemm, true);
  }
}

/** a matmul chunk's rows: a multiple of the kernels' row tile (kernels/mm/tile.ts ROW_TILE = 8: the same tiles
 *  as one thread's pass over all rows) and of the weight layout's rows per item */
function chunkRows(rowAlign: number): number {
  return (rowAlign * 8) / Math.min(rowAlign & -rowAlign, 8); // lcm(rowAlign, 8): 8 is a power of two
}
