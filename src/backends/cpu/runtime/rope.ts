// RoPE: the cos/sin rows of each position (ggml's rope cache: glibc's sinf/cosf, whose exact bits ggml uses)
// are computed by the rope_cache kernel into a table in the wasm memory as positions arrive, one table per
// configuration, its room sized at plan time (reserveRope: the cache's slots); a batch's rows are gathered
// into a contiguous table and the rope kernel rotates every head in place. No JS float arithmetic per token
// (a returned double is boxed, i.e. allocated) and no start-up cost.
import { ropeThetaScale } from '../../rope-cache.js';
import { CpuRuntimeError } from './errors.js';
import { ScratchRegion, type WasmHeap } from './memory.js';
import type { ThreadPool } from './pool.js';
import { KERNEL_INDEX } from './protocol.js';

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

/** The rope rows of one configuration in the wasm memory: positions [0, n) computed, room for cap. */
class RopeRows {
  private ptr = 0;
  private cap = 0;
  private n = 0;
  private readonly thetaScale: number;
  private readonly ff: number;
  constructor(private readonly heap: WasmHeap, private readonly pool: ThreadPool, base: number, private readonly scale: number,
    private readonly mscale: number, readonly nDims: number, ff?: ArrayLike<number>) {
    this.thetaScale = ropeThetaScale(base, nDims);
    this.ff = 0;
    if (ff) {
      this.ff = heap.alloc(nDims * 2, 16);
      const t = heap.f32All();
      for (let j = 0; j < nDims / 2; j++) t[(this.ff >> 2) + j] = ff[j]!;
    }
  }
  /** room for positions 0..maxPos (the computed rows move along) */
  reserve(maxPos: number): void {
    if (maxPos < this.cap) return;
    const bytes = (maxPos + 1) * this.nDims * 4;
    const p = this.heap.alloc(bytes, 64);
    if (this.ptr) {
      this.heap.u8All().copyWithin(p, this.ptr, this.ptr + this.n * this.nDims * 4);
      this.heap.free(this.ptr);
    }
    this.ptr = p;
    this.cap = maxPos + 1;
  }
  /** byte address of position pos's row, computing the rows up to it first (room doubled past the reserve) */
  row(pos: number): number {
    if (pos >= this.n) {
      if (pos >= this.cap) this.reserve(Math.max(pos, 2 * this.cap, 256));
      this.pool.runHere8(KERNEL_INDEX.rope_cache, this.n, pos + 1, this.ptr, this.nDims, this.thetaScale, this.scale, this.ff, this.mscale);
      this.n = pos + 1;
    }
    return this.ptr + pos * this.nDims * 4;
  }
}

export class Rope {
  /** the batch's rows, gathered */
  readonly table: ScratchRegion;
  private readonly caches = new Map<string, RopeRows>();
  // callers bind their RopeArgs once per plan: look those up by identity (no key string per call)
  private readonly byArgs = new WeakMap<RopeArgs, RopeRows>();

  constructor(private readonly heap: WasmHeap, private readonly pool: ThreadPool) {
    this.table = new ScratchRegion(heap);
  }

  reserve(maxTokens: number, maxRopeDims: number): void {
    this.table.grow(maxTokens * maxRopeDims * 4);
  }

  private rows(r: RopeArgs, nDims: number): RopeRows {
    const known = this.byArgs.get(r);
    if (known) return known;
    const ff = r.freqFactors;
    let ffKey = '';
    if (ff) for (let j = 0; j < nDims / 2; j++) ffKey += `${ff[j]},`;
    const key = `${r.freqBase}|${r.freqScale ?? 1}|${r.mscale ?? 1}|${nDims}|${ffKey}`;
    let c = this.caches.get(key);
    // freqScale and mscale as the f32 values ggml holds
    if (!c) this.caches.set(key, (c = new RopeRows(this.heap, this.pool, r.freqBase, Math.fround(r.freqScale ?? 1), Math.fround(r.mscale ?? 1), nDims, ff)));
    this.byArgs.set(r, c);
    return c;
  }

  /** room for r's configuration's rows up to maxPos now (rope() then allocates nothing below it) */
  prepare(r: RopeArgs, maxPos: number): void {
    this.rows(r, r.nDims).reserve(maxPos);
  }

  rope(r: RopeArgs): void {
    const { nTokens, nHead, headDim, nDims } = r;
    if (nDims % 2 || nDims > headDim) throw new CpuRuntimeError('BAD_SHAPE', `rope over ${nDims} of ${headDim} dims`);
    const tab = this.table.grow(nTokens * nDims * 4);
    const rows = this.rows(r, nDims);
    for (let i = 0; i < nTokens; i++) {
      const src = rows.row(r.positions[i]!);
      this.heap.u8All().copyWithin(tab + i * nDims * 4, src, src + nDims * 4);
    }
    const hs = r.headStride ?? headDim * 4;
    const ts = r.tokenStride ?? nHead * hs;
    this.pool.dispatch(KERNEL_INDEX.rope, nTokens * nHead, 1, nTokens * nHead * nDims * 2, r.x, ts, hs, nHead, nDims, tab, r.neox ? 1 : 0);
  }
}
