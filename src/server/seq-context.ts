// What the slot scheduler needs from the runtime: several sequences sharing one model and one KV cache
// (floor(nCtx / nSeq) positions each), and one evaluation per step for all of them: the runtime Context
// with ContextOptions.nSeq and decodeSeqs (src/runtime/context.ts).
import { Context, type ContextOptions, type SeqTokens } from '../runtime/context.js';
import type { Model } from '../runtime/model.js';

export type SeqEntry = SeqTokens;

export interface SeqContext {
  readonly nVocab: number;
  readonly nSeq: number;
  /** KV positions each sequence holds */
  readonly nCtxSeq: number;
  /** tokens in sequence `seq`'s cache */
  seqPast(seq: number): number;
  /** drops sequence `seq`'s cached tokens from position `keep` on (a sliding-window ring may keep fewer: seqPast tells) */
  truncateSeq(seq: number, keep: number): void;
  /** context shift in place: forgets [keep, keep + discard) and moves the later tokens down; false when the model cannot */
  shiftSeq(seq: number, keep: number, discard: number): boolean;
  /** evaluates every entry in one graph evaluation; the logits rows of the requested outputs, in entry order
   * (valid until the next call) */
  decodeSeqs(batch: SeqEntry[]): Promise<Float32Array>;
  close(): void;
}

/** One Context with `nSeq` sequences sharing its KV cache: every step is one graph evaluation. */
export async function createSeqContext(model: Model, opts: ContextOptions & { nSeq: number }): Promise<SeqContext> {
  const c = await Context.create(model, opts);
  return {
    nVocab: c.nVocab, nSeq: c.nSeq, nCtxSeq: c.seqCtx,
    seqPast: (s) => c.seqPast(s),
    truncateSeq: (s, keep) => c.truncateSeq(s, keep),
    shiftSeq: (s, keep, discard) => c.shiftSeq(s, keep, discard),
    decodeSeqs: (b) => c.decodeSeqs(b),
    close: () => c.close(),
  };
}
