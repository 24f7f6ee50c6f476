// Sliding-window layers (gemma2, gemma3, gemma4's SWA layers) attend to the last `window` positions only, so
// their caches need not hold the whole context: each sequence gets a ring of `period` rows, the window plus the
// largest batch a context evaluates at once, padded to 256 as llama.cpp pads its SWA cache
// (llama_kv_cache_iswa: GGML_PAD(min(n_ctx, n_swa + n_ubatch), 256)). A token at position p goes to row
// (p + offset) mod period; the offset is 0 until a context shift moves the sequence's positions down.
//
// The attention kernels read a token's window as the run of rows just before its own (graph.ts). A window that
// wraps around the ring's end would be two runs, so the ring's first `window` rows are mirrored after its last:
// every token is written twice (inp_swa_rows, inp_swa_mirror) and the query reads from the copy whose window is
// one run. That costs `window` rows per sequence over llama.cpp's cell count and buys exactness: the period is
// a multiple of 256, so each row keeps the SIMD lane (row mod 64) and 16-row softmax chunk its position has in
// the full cache, the rows are summed in position order, and a ring computes the full cache's bits (until a
// context shift gives it an offset; then it agrees to float rounding).
//
// What the ring cannot do is go back: once a position has been overwritten, a prefix reaching back to it cannot
// be reused (llama-server re-evaluates the prompt then: "forcing full prompt re-processing due to lack of cache
// data (likely due to SWA)"). truncate() tells the caller how much it can keep.

/** The ring's shape for a context, or undefined when a full cache is no larger (or the model has no window). */
export function swaRingShape(window: number, nBatch: number, seqCtx: number): { window: number; period: number; stride: number } | undefined {
  if (!(window > 0)) return undefined;
  const period = Math.ceil((window + nBatch) / 256) * 256;
  // one sequence's rows; a multiple of 64 so regions start where the kernels' lanes do
  const stride = Math.ceil((period + window) / 64) * 64;
  if (stride >= seqCtx) return undefined;
  return { window, period, stride };
}

export class SwaRing {
  readonly window: number;
  readonly period: number;
  /** rows of one sequence's region: the ring and its mirror, rounded up to 64 */
  readonly stride: number;
  /** rows of the ring caches (every sequence's region) */
  readonly rows: number;
  /** per sequence: the ring offset (row of position p: (p + offset) mod period) */
  private readonly offset: Int32Array;
  /** per sequence: the lowest position the ring still holds under the current offset */
  private readonly low: Int32Array;

  constructor(shape: { window: number; period: number; stride: number }, readonly nSeq: number) {
    this.window = shape.window;
    this.period = shape.period;
    this.stride = shape.stride;
    this.rows = nSeq * shape.stride;
    this.offset = new Int32Array(nSeq);
    this.low = new Int32Array(nSeq);
  }

  /** The row token position p of sequence seq is read from (and written to): the copy whose window is one run. */
  row(seq: number, p: number): number {
    const P = this.period, s = (p + this.offset[seq]!) % P;
    // the window [p - window + 1, p] (clamped at 0) wraps past row 0 when it reaches back further than s
    const back = p < this.window - 1 ? p : this.window - 1;
    return seq * this.stride + (back > s ? s + P : s);
  }

  /** The other copy of `row` (the same row when it has none: a second write of the same values). */
  mirror(row: number): number {
    const base = row - (row % this.stride), r = row - base;
    return base + (r >= this.period ? r - this.period : r < this.window ? r + this.period : r);
  }

  /** After an evaluation: sequence seq's tokens end at `past`; the ring holds the last `period` of them. */
  commit(seq: number, past: number): void {
    const lo = past - this.period;
    if (lo > this.low[seq]!) this.low[seq] = lo;
  }

  /**
   * The tokens sequence seq can keep when it drops those from `keep` on (past: its current length): `keep`
   * when the ring still holds the window the next token needs, else 0 (everything is evaluated again).
   */
  truncate(seq: number, keep: number, past: number): number {
    if (keep >= past) return keep;
    const need = keep - this.window + 1 > 0 ? keep - this.window + 1 : 0;
    // with an offset, positions below window - 1 would read rows before the sequence's first (see row())
    const ok = keep > 0 && need >= this.low[seq]! && (this.offset[seq] === 0 || keep >= this.window - 1);
    if (ok) return keep;
    this.offset[seq] = 0;
    this.low[seq] = 0;
    return 0;
  }

  /**
   * Whether a context shift (positions [keep, keep + discard) dropped, the later ones moved down by discard) can
   * keep this ring as it is: the next token's window must lie within the moved tokens, which the ring holds.
   */
  canShift(seq: number, keep: number, discard: number, past: number): boolean {
    const next = past - discard;
    return next - this.window + 1 >= keep && past - this.window + 1 >= this.low[seq]!;
  }

  /** Applies a shift canShift allowed: the moved tokens keep their rows, under an offset larger by discard. */
  shift(seq: number, keep: number, discard: number): void {
    this.offset[seq] = (this.offset[seq]! + discard) % this.period;
    const lo = this.low[seq]! > keep + discard ? this.low[seq]! : keep + discard;
    this.low[seq] = lo - discard;
  }
}
