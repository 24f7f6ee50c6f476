// RoPE: the cos/sin rows of each position are computed once (src/backends/rope-cache.ts, glibc's sinf/cosf
// whose exact bits ggml uses: slow in TS, so cached per configuration and kept), gathered for the batch's
// positions into a table in the memory, and the kernel rotates every head in place.
import { ropeCacheRow, ropeThetaScale } from '../../rope-cache.js';
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

/** cos/sin of every rotated pair for positions 0..n-1 (ggml's rope cache, memoised across calls). */
class RopeRows {
  private table = new Float32Array(0);
  private n = 0;
  private readonly thetaScale: number;
  constructor(base: number, private readonly scale: number, private readonly mscale: number, private readonly nDims: number, private readonly ff?: Float32Array) {
    this.thetaScale = ropeThetaScale(base, nDims);
  }
  /** the table, holding at least positions 0..pos (grown by doubling: a handful of allocations per context) */
  ensure(pos: number): Float32Array {
    if (pos < this.n) return this.table;
    const n = Math.max(pos + 1, 2 * this.n, 256);
    const t = new Float32Array(n * this.nDims);
    t.set(this.table);
    for (let p = this.n; p < n; p++) ropeCacheRow(p, this.nDims, this.thetaScale, Math.fround(this.scale), this.ff, this.mscale, t, p * this.nDims);
    this.table = t;
    this.n = n;
    return t;
  }
}

export class Rope {
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
    if (!c) this.caches.set(key, (c = new RopeRows(r.freqBase, r.freqScale ?? 1, r.mscale ?? 1, nDims, ff ? Float32Array.from({ length: nDims / 2 }, (_, j) => ff[j]!) : undefined)));
    this.byArgs.set(r, c);
    return c;
  }

  /** the rows of r's configuration computed for positions up to maxPos now (rope() then allocates nothing) */
  prepare(r: RopeArgs, maxPos: number): void {
    this.rows(r, r.nDims).ensure(maxPos);
  }

  rope(r: RopeArgs): void {
    const { nTokens, nHead, headDim, nDims } = r;
    if (nDims % 2 || nDims > headDim) throw new CpuRuntimeError('BAD_SHAPE', `rope over ${nDims} of ${headDim} dims`);
    const tab = this.table.grow(nTokens * nDims * 4);
    const t = this.heap.f32All();
    const tb = tab >> 2;
    const rows = this.rows(r, nDims);
    for (let i = 0; i < nTokens; i++) {
      const pos = r.positions[i]!;
      const src = rows.ensure(pos);
      const o = tb + i * nDims;
      const so = pos * nDims;
      for (let j = 0; j < nDims; j++) t[o + j] = src[so + j]!;
    }
    const hs = r.headStride ?? headDim * 4;
    const ts = r.tokenStride ?? nHead * hs;
    this.pool.dispatch(KERNEL_INDEX.rope, nTokens * nHead, 1, nTokens * nHead * nDims * 2, r.x, ts, hs, nHead, nDims, tab, r.neox ? 1 : 0);
  }
}
