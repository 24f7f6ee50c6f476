// What the slot scheduler needs from the runtime: several sequences sharing one model, each with its own
// KV cache rows (floor(nCtx / nSeq) positions), and one evaluation per step for all of them. This is the
// contract of Context.decodeSeqs (src/runtime/context.ts, ContextOptions.nSeq); until that lands, a
// temporary adapter runs it over one Context per sequence.
import { Context, type ContextOptions } from '../runtime/context.js';
import type { Model } from '../runtime/model.js';

export interface SeqEntry {
  seq: number;
  tokens: ArrayLike<number>;
  /** which rows of logits the entry wants back */
  logits: 'last' | 'all' | 'none';
}

export interface SeqContext {
  readonly nVocab: number;
  readonly nSeq: number;
  /** KV positions each sequence holds */
  readonly nCtxSeq: number;
  /** tokens in sequence `seq`'s cache */
  seqPast(seq: number): number;
  /** drops sequence `seq`'s cached tokens from position `keep` on */
  truncateSeq(seq: number, keep: number): void;
  /** evaluates every entry; the logits rows of the requested outputs, in entry order */
  decodeSeqs(batch: SeqEntry[]): Promise<Float32Array>;
  close(): void;
}

/** The runtime Context's side of the contract (ContextOptions.nSeq, decodeSeqs), where it exists. */
interface SeqCapable {
  readonly nVocab: number;
  seqPast(seq: number): number;
  truncateSeq(seq: number, keep: number): void;
  decodeSeqs(batch: readonly SeqEntry[]): Promise<Float32Array>;
  close(): void;
}

/** One Context with `nSeq` sequences sharing its KV cache: every step is one graph evaluation. */
export async function createSeqContext(model: Model, opts: ContextOptions & { nSeq: number }): Promise<SeqContext> {
  if (typeof (Context.prototype as unknown as Partial<SeqCapable>).decodeSeqs !== 'function') return perSeqContexts(model, opts);
  const c = (await Context.create(model, opts)) as unknown as SeqCapable;
  return {
    nVocab: c.nVocab, nSeq: opts.nSeq, nCtxSeq: Math.floor(opts.nCtx / opts.nSeq),
    seqPast: (s) => c.seqPast(s),
    truncateSeq: (s, keep) => c.truncateSeq(s, keep),
    decodeSeqs: (b) => c.decodeSeqs(b),
    close: () => c.close(),
  };
}

/** TEMPORARY (until Context.decodeSeqs lands): the contract over one Context per sequence, evaluated one after another. */
export async function perSeqContexts(model: Model, opts: ContextOptions & { nSeq: number }): Promise<SeqContext> {
  const nCtxSeq = Math.floor(opts.nCtx / opts.nSeq);
  const ctxs: Context[] = [];
  for (let s = 0; s < opts.nSeq; s++) ctxs.push(await Context.create(model, { ...opts, nCtx: nCtxSeq }));
  const nVocab = model.hp.nVocab;
  return {
    nVocab, nSeq: opts.nSeq, nCtxSeq,
    seqPast: (s) => ctxs[s]!.nPast,
    truncateSeq: (s, keep) => ctxs[s]!.truncate(keep),
    async decodeSeqs(batch) {
      let rows = 0;
      for (const e of batch) rows += e.logits === 'all' ? e.tokens.length : e.logits === 'last' ? 1 : 0;
      const out = new Float32Array(rows * nVocab);
      let r = 0;
      for (const e of batch) {
        const l = await ctxs[e.seq]!.decode(e.tokens, e.logits === 'all');
        if (e.logits === 'none') continue;
        out.set(l, r * nVocab);
        r += e.logits === 'all' ? e.tokens.length : 1;
      }
      return out;
    },
    close() { for (const c of ctxs) c.close(); },
  };
}
