// Attention marshalling: attn_ggml's (and, for a batch, attn_kv_f32's) parameter block written at the
// offsets kernels/abi.ts defines (one source, copied into kernel-abi.gen.ts by the build), and the scratch
// sized for the positions. Nothing allocates per call once reserve() saw the largest position.
import * as abi from '../kernel-abi.gen.js';
import { CpuRuntimeError } from './errors.js';
import { alignUp, ScratchRegion, type WasmHeap } from './memory.js';
import type { ThreadPool } from './pool.js';
import { KERNEL_INDEX } from './protocol.js';

/** Attention with ggml's non-flash numerics (see kernels/attention.ts attn_ggml), f16 caches. */
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
  /** scores become tanh(s / softcap) * softcap before the scale (gemma2); 0 or absent: none */
  softcap?: number;
  /** several sequences in one cache (graph.ts seqStride): positions are cache rows, a token sees rows from r - r % seqStride */
  seqStride?: number;
  /** the tinyBLAS (batch) dot order; default: nTokens >= 2 */
  batch?: boolean;
  /** batch: the first cache row any of these tokens sees (K/V are widened from it; a multiple of 16) */
  kvBase?: number;
  /** batch: K/V rows [kvBase, maxPos] were widened by the previous call: reuse them */
  reuseKv?: boolean;
  /** the (query token, cache row) pairs, whose work decides threading (default: every token over maxPos - kvBase + 1 rows) */
  pairs?: number;
}

/** attn_kv_f32's output: K and V of every kv head widened to f32, positions rounded up to 16 */
function attnKvBytes(nKvHead: number, headDim: number, maxPos: number): number {
  return nKvHead * alignUp(maxPos + 1, 16) * headDim * 8;
}

/** heads attn_ggml's decode serves per pass over the cache (kernels/abi.ts DEC_DIMS query dims at most) */
export function decodeHeads(headDim: number, nHead: number): number {
  return Math.max(1, Math.min(nHead, Math.floor(abi.DEC_DIMS / headDim)));
}

/** one-token decode: chunks per thread of attn_ggml's heads (claimed by whichever thread is free). One: each
 *  chunk is one pass over the K and V rows, and halving the chunks (wider spans of each row per pass) read the
 *  cache faster than the balance two per thread bought (qwen3-0.6b tg @ d4096 7.4 -> 9.2 t/s, d512 25.6 -> 31.0,
 *  d0 43.6 -> 44.2 on 2 threads; BENCHMARKS.md) */
const DECODE_CHUNKS_PER_THREAD = 1;
/** one-token decode: query heads per chunk (even, so GQA pairs stay together) */
export function decodeChunkHeads(nHead: number, threads: number): number {
  const c = Math.ceil(nHead / (threads * DECODE_CHUNKS_PER_THREAD));
  return Math.min(nHead, c + (c & 1));
}

/**
 * attn_ggml's scratch per thread. Decode (kernels/attention.ts attn_ggml_decode, dims = heads x headDim): the
 * rounded queries, the paired heads' queries in lane order, 64 lane sums, 64 V lane accumulators per dim, a superblock of f16 V spans (DEC_SB x dims),
 * one score row per head (positions + a chunk of 16 + the row maximum, 64-byte rows). A batch: q0, q1 and two
 * score rows (attn_ggml_batch), or q, 64 x headDim and one score row (the generic loop).
 */
export function ggmlAttnScratchBytes(headDim: number, maxPos: number, heads = decodeHeads(headDim, 1 << 30)): number {
  const row = alignUp((maxPos + 1 + 32 + 1) * 4, 64), dims = heads * headDim;
  const decode = (dims * 67 + 64) * 4 + abi.DEC_SB * dims * 2 + heads * row;
  // batch (attn_ggml_batch): q0, q1, 512 B of tile chains, two score rows
  const batch = Math.max((65 * headDim + maxPos + 1 + 32) * 4, 2 * headDim * 4 + 512 + 2 * row);
  return alignUp(Math.max(decode, batch), 64);
}

/** one-token decode over at least this many cache rows runs split over the rows (kernels/attention.ts attn_dec_*):
 *  four dispatches instead of one, repaid from here on by every thread streaming whole rows (qwen3-0.6b on 2
 *  threads against the split by heads: tg @ d64 0.88x, d100 1.03x, d200 1.03x, d512 1.17x, d1024 1.23x, d4096 1.47x) */
export const DEC_ROWS_MIN = 128;
/** the cache rows one decode token sees (its window's at most) */
function decodeRowsSeen(p: GgmlAttentionArgs): number {
  const rows = p.pairs ?? p.maxPos + 1;
  return p.window > 0 ? Math.min(rows, p.window) : rows;
}
/** attn_dec_scores' items per thread */
const DEC_ROW_ITEMS_PER_THREAD = 2;

/** the row-split decode's layout: per-item slot bytes, score row bytes, and each region's size */
export interface DecRowsLayout { items: number; slot: number; scLen: number; accBytes: number; mxBytes: number; total: number }
/** fills `L` for these shapes (in place: decode calls it per token and must not allocate) */
export function decRowsLayout(headDim: number, maxPos: number, nHead: number, nKvHead: number, threads: number,
  L: DecRowsLayout = { items: 0, slot: 0, scLen: 0, accBytes: 0, mxBytes: 0, total: 0 }): DecRowsLayout {
  L.items = Math.max(4, threads * DEC_ROW_ITEMS_PER_THREAD + 1);
  L.slot = alignUp(Math.max(2 * nHead * headDim * 4 + 256 + nHead * 4, 16 * (abi.DEC_SB / 64) * nKvHead * headDim * 2), 64);
  L.scLen = alignUp((maxPos + 1 + 32 + 1) * 4, 64);
  L.accBytes = nHead * headDim * 4 * 65; L.mxBytes = alignUp(L.items * nHead * 4, 64);
  L.total = L.items * L.slot + nHead * L.scLen + L.mxBytes + L.accBytes;
  return L;
}

/** attn_flash's scratch per thread: two heads' rounded queries and f16-exact accumulators (headDim f32 each), vs and ms of FLASH_CH rows per head, 128 bytes of dot sums */
export function flashAttnScratchBytes(headDim: number): number {
  return alignUp(4 * headDim * 4 + 16 * abi.FLASH_CH + 128, 64);
}

/** attn_flash_q8's scratch per thread: the q8_0 query head and a q4_0 K row unpacked (each rounded to 16 bytes), the f32 accumulator */
export function flashQ8ScratchBytes(headDim: number): number {
  return alignUp(2 * alignUp((headDim / 32) * 34, 16) + headDim * 4, 64);
}

export class Attention {
  private readonly scratch: ScratchRegion;
  private readonly kv: ScratchRegion;
  private readonly params: ScratchRegion;
  /** the row-split decode's layout, refilled per call (no allocation) */
  private readonly rowsLayout: DecRowsLayout = { items: 0, slot: 0, scLen: 0, accBytes: 0, mxBytes: 0, total: 0 };

  constructor(private readonly heap: WasmHeap, private readonly pool: ThreadPool, private readonly threads: number, private readonly minWork: number) {
    this.scratch = new ScratchRegion(heap);
    this.kv = new ScratchRegion(heap);
    this.params = new ScratchRegion(heap);
  }

  dropAbove(mark: number): void {
    this.scratch.dropAbove(mark);
    this.kv.dropAbove(mark);
    this.params.dropAbove(mark);
  }

  /** reserves the scratch for positions up to maxPos (and, given nKvHead, for batches; given nHead, for that many heads) */
  reserve(headDim: number, maxPos: number, nKvHead = 0, nHead = 1 << 30): void {
    this.params.grow(abi.PARAM_BLOCK_BYTES);
    this.scratch.grow(Math.max(ggmlAttnScratchBytes(headDim, maxPos, decodeHeads(headDim, nHead)) * this.threads, this.decodeScratch(headDim, maxPos, nHead),
      this.threads > 1 && nHead <= (1 << 20) && maxPos + 1 >= DEC_ROWS_MIN ? decRowsLayout(headDim, maxPos, nHead, nKvHead || nHead, this.threads).total : 0));
    if (nKvHead) this.kv.grow(attnKvBytes(nKvHead, headDim, maxPos));
  }

  /** reserves attentionFlash's scratch for this head size */
  reserveFlash(headDim: number): void {
    this.params.grow(abi.PARAM_BLOCK_BYTES);
    this.scratch.grow(flashAttnScratchBytes(headDim) * this.threads);
  }

  /**
   * Attention with llama.cpp's flash-attention numerics (kernels/attention.ts attn_flash): no score matrix, the
   * same arithmetic for a batch, a decode step or several sequences (seqStride: positions are cache rows).
   * `maxPos` bounds the rows any token sees (it decides threading only).
   */
  attentionFlash(p: GgmlAttentionArgs): void {
    const { nTokens, nHead, nKvHead, headDim } = p;
    if (nHead % nKvHead) throw new CpuRuntimeError('BAD_SHAPE', `${nHead} heads do not share ${nKvHead} kv heads evenly`);
    const items = nTokens * nHead;
    const work = (p.pairs ?? nTokens * (p.maxPos + 1)) * nHead * headDim * 4;
    const threads = work < this.minWork ? 1 : this.threads;
    const slice = Math.ceil(items / threads);
    const perThread = flashAttnScratchBytes(headDim);
    const scr = this.scratch.grow(perThread * this.threads);
    const pp = this.writeParams(p, nKvHead * headDim * 2, scr, perThread, slice, false, 0, false);
    this.pool.dispatchChunked(KERNEL_INDEX.attn_flash, items, slice, work, pp);
  }

  /** reserves attentionFlashQ8's scratch for this head size */
  reserveFlashQ8(headDim: number): void {
    this.params.grow(abi.PARAM_BLOCK_BYTES);
    this.scratch.grow(flashQ8ScratchBytes(headDim) * this.threads);
  }

  /**
   * Flash attention over q8_0 (q4: q4_0) K and V caches (kernels/attention-kvq.ts attn_flash_q8): llama.cpp's
   * numerics for a quantized KV cache, the same arithmetic for every token (batch, decode step, several sequences).
   */
  attentionFlashQ8(p: GgmlAttentionArgs, q4 = false): void {
    const { nTokens, nHead, nKvHead, headDim } = p;
    if (nHead % nKvHead) throw new CpuRuntimeError('BAD_SHAPE', `${nHead} heads do not share ${nKvHead} kv heads evenly`);
    if (headDim % 32) throw new CpuRuntimeError('BAD_SHAPE', `q8_0 heads of ${headDim} values are not whole 32-value blocks`);
    const items = nTokens * nHead;
    const work = (p.pairs ?? nTokens * (p.maxPos + 1)) * nHead * headDim * 4;
    const threads = work < this.minWork ? 1 : this.threads;
    const slice = Math.ceil(items / threads);
    const perThread = flashQ8ScratchBytes(headDim);
    const scr = this.scratch.grow(perThread * this.threads);
    const pp = this.writeParams(p, nKvHead * (headDim / 32) * (q4 ? 18 : 34), scr, perThread, slice, false, 0, q4);
    this.pool.dispatchChunked(KERNEL_INDEX.attn_flash_q8, items, slice, work, pp);
  }

  /** one-token decode on several threads: chunks of decodeChunkHeads heads, each its own scratch */
  private decodeScratch(headDim: number, maxPos: number, nHead: number): number {
    if (this.threads === 1 || nHead > (1 << 20)) return 0;
    const ch = decodeChunkHeads(nHead, this.threads);
    return ggmlAttnScratchBytes(headDim, maxPos, Math.min(ch, decodeHeads(headDim, nHead))) * Math.ceil(nHead / ch);
  }

  attentionGgml(p: GgmlAttentionArgs): void {
    const { nTokens, nHead, nKvHead, headDim } = p;
    if (nHead % nKvHead) throw new CpuRuntimeError('BAD_SHAPE', `${nHead} heads do not share ${nKvHead} kv heads evenly`);
    const items = nTokens * nHead;
    const batch = p.batch ?? nTokens >= 2, kvBase = batch ? p.kvBase ?? 0 : 0;
    const work = (p.pairs ?? nTokens * (p.maxPos - kvBase + 1)) * nHead * headDim * 4;
    const threads = work < this.minWork ? 1 : this.threads;
    // one token on several threads: chunks of a few heads (each chunk's slot of the scratch is r0 / slice);
    // else one slice per thread
    const fine = threads > 1 && nTokens === 1 && !batch;
    if (fine && decodeRowsSeen(p) >= DEC_ROWS_MIN && headDim % 16 === 0) { this.decodeRows(p); return; }
    const slice = fine ? decodeChunkHeads(nHead, threads) : Math.ceil(items / threads);
    const heads = fine ? Math.min(slice, decodeHeads(headDim, nHead)) : decodeHeads(headDim, nHead);
    const perThread = ggmlAttnScratchBytes(headDim, p.maxPos, heads);
    const scr = this.scratch.grow(perThread * (fine ? Math.ceil(items / slice) : this.threads));
    const pp = this.writeParams(p, nKvHead * headDim * 2, scr, perThread, slice, batch, kvBase, false);
    this.heap.i32All()[(pp + abi.AG_DEC_HEADS) >> 2] = heads;
    if (batch) {
      // widen K (rows) and V (transposed) to f32 once for all query tokens and heads: rows [kvBase, maxPos]
      const span = p.maxPos - kvBase;
      const p16 = alignUp(span + 1, 16);
      const kv = this.kv.grow(attnKvBytes(nKvHead, headDim, span));
      const vt = kv + nKvHead * p16 * headDim * 4;
      const i32 = this.heap.i32All(), b = pp >> 2;
      if (!p.reuseKv) {
        const q = pp + abi.AKV_BLOCK, c = q >> 2, rowBytes = nKvHead * headDim * 2;
        i32[c + (abi.AKV_K >> 2)] = p.k + kvBase * rowBytes; i32[c + (abi.AKV_V >> 2)] = p.v + kvBase * rowBytes; i32[c + (abi.AKV_KV_STRIDE >> 2)] = rowBytes;
        i32[c + (abi.AKV_HEAD_DIM >> 2)] = headDim; i32[c + (abi.AKV_MAX_POS >> 2)] = span;
        i32[c + (abi.AKV_KF >> 2)] = kv; i32[c + (abi.AKV_VT >> 2)] = vt; i32[c + (abi.AKV_P16 >> 2)] = p16;
        this.pool.dispatch(KERNEL_INDEX.attn_kv_f32, nKvHead * (p16 / 16), 1, nKvHead * p16 * headDim * 8, q);
      }
      i32[b + (abi.AG_KF >> 2)] = kv; i32[b + (abi.AG_VT >> 2)] = vt; i32[b + (abi.AG_P16 >> 2)] = p16;
    }
    this.pool.dispatchChunked(KERNEL_INDEX.attn_ggml, items, slice, work, pp);
  }

  /** one token over a deep cache: attn_dec_scores / _softmax / _v / _out, each thread streaming whole cache rows */
  private decodeRows(p: GgmlAttentionArgs): void {
    const { nHead, nKvHead, headDim } = p;
    const L = decRowsLayout(headDim, p.maxPos, nHead, nKvHead, this.threads, this.rowsLayout);
    const rows = decodeRowsSeen(p);
    const blk = Math.max(64, alignUp(Math.ceil(rows / (this.threads * DEC_ROW_ITEMS_PER_THREAD)), 16));
    const nS = Math.ceil(rows / blk);
    const base = this.scratch.grow(L.total);
    const sc = base + L.items * L.slot, mx = sc + nHead * L.scLen, acc = mx + L.mxBytes;
    const pp = this.writeParams(p, nKvHead * headDim * 2, base, L.slot, 1, false, 0, false);
    const i32 = this.heap.i32All(), b = pp >> 2;
    i32[b + (abi.AG_DR_BLOCK >> 2)] = blk; i32[b + (abi.AG_DR_SC >> 2)] = sc; i32[b + (abi.AG_DR_SCLEN >> 2)] = L.scLen;
    i32[b + (abi.AG_DR_MX >> 2)] = mx; i32[b + (abi.AG_DR_ACC >> 2)] = acc; i32[b + (abi.AG_DR_ITEMS >> 2)] = nS;
    const work = rows * nHead * headDim * 4;
    this.pool.dispatchChunked(KERNEL_INDEX.attn_dec_scores, nS, 1, work, pp);
    this.pool.dispatchChunked(KERNEL_INDEX.attn_dec_softmax, nHead, 1, work, pp);
    this.pool.dispatchChunked(KERNEL_INDEX.attn_dec_v, 4, 1, work, pp);
    this.pool.dispatchChunked(KERNEL_INDEX.attn_dec_out, nHead, 1, work, pp);
  }

  /** the kernels' parameter block (kernels/abi.ts AG_*), written once per call into the reserved region */
  private writeParams(p: GgmlAttentionArgs, kvStride: number, scr: number, perThread: number, slice: number, batch: boolean, kvBase: number, q4: boolean): number {
    const { nHead, nKvHead, headDim } = p;
    const pp = this.params.grow(abi.PARAM_BLOCK_BYTES);
    const i32 = this.heap.i32All(), f32 = this.heap.f32All(), b = pp >> 2;
    i32[b + (abi.AG_Q >> 2)] = p.q; i32[b + (abi.AG_Q_STRIDE >> 2)] = nHead * headDim * 4;
    i32[b + (abi.AG_K >> 2)] = p.k; i32[b + (abi.AG_V >> 2)] = p.v; i32[b + (abi.AG_KV_STRIDE >> 2)] = kvStride;
    i32[b + (abi.AG_OUT >> 2)] = p.out; i32[b + (abi.AG_OUT_STRIDE >> 2)] = nHead * headDim * 4;
    i32[b + (abi.AG_N_HEAD >> 2)] = nHead; i32[b + (abi.AG_GQA >> 2)] = nHead / nKvHead; i32[b + (abi.AG_HEAD_DIM >> 2)] = headDim;
    f32[b + (abi.AG_SCALE >> 2)] = p.scale; i32[b + (abi.AG_WINDOW >> 2)] = p.window; i32[b + (abi.AG_POSITIONS >> 2)] = p.positions;
    i32[b + (abi.AG_SCRATCH >> 2)] = scr; i32[b + (abi.AG_SCRATCH_BYTES >> 2)] = perThread;
    i32[b + (abi.AG_SLICE >> 2)] = slice; i32[b + (abi.AG_BATCH >> 2)] = batch ? 1 : 0;
    f32[b + (abi.AG_SOFTCAP >> 2)] = p.softcap ?? 0;
    i32[b + (abi.AG_SEQ_STRIDE >> 2)] = p.seqStride ?? 0; i32[b + (abi.AG_KV_BASE >> 2)] = kvBase; i32[b + (abi.AG_KV_Q4 >> 2)] = q4 ? 1 : 0;
    i32[b + (abi.AG_N_TOKENS >> 2)] = p.nTokens;
    return pp;
  }
}
