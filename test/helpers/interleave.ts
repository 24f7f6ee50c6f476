// Several sequences through one Context's decodeSeqs, interleaved as a continuous-batching server would run
// them: each call carries the next prompt chunk of every sequence still prefilling and one teacher-forced
// token of every sequence decoding (llama.cpp's own greedy tokens, as test/helpers/parity.ts does), so a
// single evaluation mixes prefill chunks and decode tokens of different sequences at different positions.

import type { Context, SeqTokens } from '../../src/runtime/context.js';

export interface SeqSchedule {
  prompt: number[];
  /** the tokens fed after the prompt, one per step (llama.cpp's greedy continuation) */
  continuation: number[];
  /** distributions to produce after the prompt (step 0 is the prompt's last token's) */
  steps: number;
  /** prompt tokens per call */
  chunk: number;
  /** the call the sequence starts in */
  start: number;
  /** the prompt's every logits row ('all'), else only the last ('last', 'none' for earlier chunks) */
  all: boolean;
}

/** One distribution a sequence produced: after prompt[0..index] ('prompt', all-rows prompts) or step `index`. */
export type Emit = (seq: number, kind: 'prompt' | 'step', index: number, logits: Float32Array) => void;

/**
 * Runs the schedules to the end (sequence i is context sequence i, from its current seqPast). `emit` sees
 * each output row once, before the next call reuses the array.
 */
export async function interleave(ctx: Context, plans: SeqSchedule[], emit: Emit, before?: (call: number) => void): Promise<number> {
  const nv = ctx.nVocab;
  const st = plans.map(() => ({ off: 0, step: 0 }));
  let call = 0;
  for (;; call++) {
    before?.(call);
    const batch: SeqTokens[] = [];
    const tags: { s: number; rows: number; promptFrom: number; last: boolean }[] = [];
    plans.forEach((p, s) => {
      const x = st[s]!;
      if (call < p.start || x.step >= p.steps) return;
      if (x.off < p.prompt.length) {
        const n = Math.min(p.chunk, p.prompt.length - x.off);
        const last = x.off + n === p.prompt.length;
        batch.push({ seq: s, tokens: p.prompt.slice(x.off, x.off + n), logits: p.all ? 'all' : last ? 'last' : 'none' });
        tags.push({ s, rows: p.all ? n : last ? 1 : 0, promptFrom: p.all ? x.off : -1, last });
        x.off += n;
      } else {
        batch.push({ seq: s, tokens: [p.continuation[x.step - 1]!], logits: 'last' });
        tags.push({ s, rows: 1, promptFrom: -1, last: true });
      }
    });
    if (!batch.length) return call;
    const out = await ctx.decodeSeqs(batch);
    let row = 0;
    for (const t of tags) {
      for (let r = 0; r < t.rows; r++, row++) {
        const l = out.subarray(row * nv, (row + 1) * nv);
        if (t.promptFrom >= 0) emit(t.s, 'prompt', t.promptFrom + r, l);
        if (t.last && r === t.rows - 1) emit(t.s, 'step', st[t.s]!.step++, l);
      }
    }
    if (row * nv !== out.length) throw new Error(`decodeSeqs returned ${out.length / nv} rows for ${row} requested`);
  }
}
