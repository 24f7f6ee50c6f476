// The generation loop: evaluate the prompt as one batch, then sample and decode one token at a
// time, streaming text that never splits a UTF-8 sequence.

import type { Tokenizer } from '../tokenizer/index.js';
import { StreamingDetokenizer } from '../tokenizer/index.js';
import type { Context } from './context.js';
import { topProbs, type Sampler } from './sampler.js';
import { GrammarError } from '../grammar/errors.js';

export interface GenerateOptions {
  /** tokens to generate at most */
  nPredict: number;
  sampler: Sampler;
  /** record the top-K next-token probabilities at every step */
  probs?: number;
  /** stop at end-of-generation tokens (default true) */
  stopAtEog?: boolean;
  /** called with each new piece of text as soon as it is complete UTF-8 */
  onText?: (text: string) => void;
  /** return true to stop early (e.g. Ctrl-C) */
  shouldStop?: () => boolean;
}

export interface GenerateResult {
  tokens: number[];
  text: string;
  probs?: { token: number; top: [number, number][] }[];
  timings: { prompt_ms: number; gen_ms: number; pp_tps: number; tg_tps: number; n_prompt: number; n_gen: number };
  /** 'grammar': the constraint's grammar ended (nothing but end-of-generation could follow) */
  stopReason: 'eog' | 'length' | 'stopped' | 'context' | 'grammar';
}

export async function generate(ctx: Context, tok: Tokenizer | null, prompt: number[], o: GenerateOptions): Promise<GenerateResult> {
  const stopAtEog = o.stopAtEog ?? true;
  for (const t of prompt) o.sampler.accept(t);
  const t0 = performance.now();
  let logits = await ctx.decode(prompt);
  const t1 = performance.now();
  const tokens: number[] = [];
  const probs: NonNullable<GenerateResult['probs']> = [];
  const detok = tok ? new StreamingDetokenizer((id) => tok.tokenToPiece(id, { special: true })) : null;
  let text = '';
  let stopReason: GenerateResult['stopReason'] = 'length';
  const one = new Int32Array(1); // the decode step's batch, reused: a step allocates nothing here
  const grammar = o.sampler.constraint;
  // the budget rule (src/grammar/constraint.ts): the grammar must be able to finish in the tokens left
  const budget = (i: number) => Math.min(o.nPredict - i, ctx.nCtx - ctx.nPast + 1);
  if (grammar && grammar.minTokens > budget(0)) {
    throw new GrammarError('GRAMMAR_BUDGET', `the grammar needs at least ${grammar.minTokens} tokens to complete but only ${budget(0)} may be generated (raise -n / the context size)`);
  }
  for (let i = 0; i < o.nPredict; i++) {
    if (o.shouldStop?.()) { stopReason = 'stopped'; break; }
    if (grammar) grammar.remaining = budget(i);
    const id = o.sampler.sample(logits);
    if (o.probs) probs.push({ token: id, top: topProbs(logits, o.probs) });
    o.sampler.accept(id);
    grammar?.accept(id);
    tokens.push(id);
    if (stopAtEog && tok?.isEog(id)) { stopReason = 'eog'; break; }
    if (grammar && tok?.isEog(id)) { stopReason = 'eog'; break; }
    if (detok) {
      const piece = detok.push(id);
      if (piece) { text += piece; o.onText?.(piece); }
    }
    if (grammar?.done) { stopReason = 'grammar'; break; }
    if (i === o.nPredict - 1) break;
    if (ctx.nPast >= ctx.nCtx) { stopReason = 'context'; break; }
    one[0] = id;
    logits = await ctx.decode(one);
  }
  if (detok) {
    const rest = detok.flush();
    if (rest) { text += rest; o.onText?.(rest); }
  }
  const t2 = performance.now();
  const nGen = tokens.length;
  return {
    tokens,
    text,
    probs: o.probs ? probs : undefined,
    timings: {
      prompt_ms: t1 - t0,
      gen_ms: t2 - t1,
      pp_tps: prompt.length / ((t1 - t0) / 1000),
      tg_tps: nGen > 1 ? (nGen - 1) / ((t2 - t1) / 1000) : 0,
      n_prompt: prompt.length,
      n_gen: nGen,
    },
    stopReason,
  };
}
