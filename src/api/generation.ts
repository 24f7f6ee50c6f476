// The generation loop every front end shares (Context.generate, ChatSession, the CLI's run and chat): reuse
// the cached prefix of the prompt, evaluate the rest as one batch, then sample and evaluate one token at a
// time, streaming text that never splits a UTF-8 sequence and never runs past a stop string. It drives an
// Engine (evaluate / sample / truncate), so the same loop runs on the real runtime and on a scripted engine.
import type { Tokenizer } from '../tokenizer/index.js';
import { StreamingDetokenizer } from '../tokenizer/index.js';
import { topProbs } from '../runtime/sampler.js';
import { StopMatcher } from './stop.js';
import { UsageError } from './errors.js';
import { GrammarError, type TokenConstraint } from '../grammar/index.js';

/** What the loop needs from a generation runtime (a KV cache plus a sampler). */
export interface Engine {
  readonly nCtx: number;
  /** appends tokens to the cache and computes the next-token distribution (the sampler's history is untouched) */
  evaluate(tokens: number[]): Promise<void>;
  /** the sampler's penalty history becomes exactly `tokens` (its random state goes on) */
  setHistory(tokens: number[]): void;
  /** picks the next token from the last distribution and records it in the sampler's penalty history */
  sample(): number;
  /**
   * keeps the first `keep` cached tokens, or fewer: returns how many it kept (a model with recurrent layers
   * cannot roll its state back, so anything short of the whole cache clears it)
   */
  truncate(keep: number): number;
  /**
   * optional context shift in place: forget the cached tokens at [keep, keep + discard) and move the later ones
   * down (their keys re-rotated), no evaluation; false when the engine cannot (the loop then evaluates again)
   */
  shift?(keep: number, discard: number): boolean;
  /** forgets everything (cache and sampler history) */
  reset(): void;
  /** the last distribution's logits (for `probs`) */
  logits?(): Float32Array;
}

/** One sampled token and the text it completed (empty while a UTF-8 sequence or a possible stop string is pending). */
export interface TokenEvent {
  token: number;
  text: string;
}

/** 'stop': an end-of-generation token or a stop string; 'length': maxTokens; 'abort': the signal (or a
 * consumer leaving the loop early); 'context': the context is full (and context shift is off). */
export type FinishReason = 'stop' | 'length' | 'abort' | 'context';

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

/** llama.cpp server's timing fields: prompt_n is the prompt tokens evaluated (after cache reuse). */
export interface Timings {
  prompt_n: number;
  prompt_ms: number;
  prompt_per_second: number;
  predicted_n: number;
  predicted_ms: number;
  predicted_per_second: number;
}

export interface GenerateResult {
  /** the generated text (without a stop string or anything after it) */
  text: string;
  /** every sampled token, a final end-of-generation token included */
  tokens: number[];
  finishReason: FinishReason;
  /** why a 'stop' stopped ('grammar': the grammar or JSON schema's document is complete) */
  stoppedBy?: 'eog' | 'stop-string' | 'grammar';
  /** the stop string that matched */
  stopString?: string;
  usage: Usage;
  timings: Timings;
  /** top-K next-token probabilities [token, p] at every step (with the `probs` option) */
  probs?: { token: number; top: [number, number][] }[];
}

export interface LoopOptions {
  /** tokens to sample at most (Infinity: until a stop or the context is full) */
  maxTokens: number;
  stop: readonly string[];
  ignoreEos: boolean;
  /** render special tokens' text in the output */
  special: boolean;
  /** when the context fills: keep the first `keep` cached tokens, drop the older half of the rest */
  contextShift?: { keep: number; notice?: (msg: string) => void };
  shouldStop: () => boolean;
  probs?: number;
  /** the grammar the engine's sampler is constrained by: the loop gives it the token budget, advances it
   * over each sampled token, and stops when its document is complete (src/grammar/constraint.ts) */
  constraint?: TokenConstraint | null;
}

// setImmediate in Node; a MessageChannel hop elsewhere (setTimeout would be clamped to 4 ms in browsers).
// Yielding to the event loop between tokens lets an AbortSignal (a timer, a closed socket, Ctrl-C) fire.
export const yieldToEventLoop: () => Promise<void> = (() => {
  const g = globalThis as { setImmediate?: (f: () => void) => void; MessageChannel?: typeof MessageChannel };
  if (typeof g.setImmediate === 'function') { const si = g.setImmediate; return () => new Promise<void>((r) => si(r)); }
  if (typeof g.MessageChannel === 'function') {
    const ch = new g.MessageChannel();
    const waiting: (() => void)[] = [];
    ch.port1.onmessage = () => waiting.shift()?.();
    return () => new Promise<void>((r) => { waiting.push(r); ch.port2.postMessage(0); });
  }
  return () => new Promise<void>((r) => setTimeout(r, 0));
})();

/**
 * Generates from `prompt`. `cache` holds the tokens in the engine's KV cache and is kept up to date
 * (after the loop: the prompt and the evaluated generated tokens). The result arrives in `out.result`
 * when the generator finishes, also when a consumer leaves early ('abort').
 */
export async function* generationLoop(
  engine: Engine, tok: Tokenizer, cache: number[], prompt: readonly number[], o: LoopOptions,
  out: { result?: GenerateResult },
): AsyncGenerator<TokenEvent, void, undefined> {
  if (prompt.length === 0) throw new UsageError('USAGE', 'the prompt is empty', 'prompt');
  const tokens: number[] = [];
  const probs: NonNullable<GenerateResult['probs']> = [];
  const detok = new StreamingDetokenizer((id) => tok.tokenToPiece(id, { special: o.special }));
  const stopper = new StopMatcher(o.stop.filter((s) => s.length > 0));
  let text = '';
  let finish: FinishReason | undefined;
  let stoppedBy: GenerateResult['stoppedBy'];
  let stopString: string | undefined;
  let promptN = 0;
  let t0 = performance.now(), t1 = t0;
  try {
    // evaluate only what differs from the cache (at least the last prompt token: its logits are needed)
    let common = 0;
    while (common < cache.length && common < prompt.length && cache[common] === prompt[common]) common++;
    if (common === prompt.length) common--;
    common = engine.truncate(common);
    cache.length = common;
    const rest = prompt.slice(common);
    promptN = rest.length;
    t0 = performance.now();
    await engine.evaluate(rest);
    for (const t of rest) cache.push(t);
    t1 = performance.now();
    // the penalties see the prompt, then each sampled token once
    engine.setHistory(prompt as number[]);
    const grammar = o.constraint ?? null;
    // the budget rule: the grammar must be able to finish within the tokens left (maxTokens, and the context
    // unless it shifts)
    const budget = (i: number) => Math.min(o.maxTokens - i, o.contextShift ? Infinity : engine.nCtx - cache.length + 1);
    if (grammar && grammar.minTokens > budget(0)) {
      throw new GrammarError('GRAMMAR_BUDGET', `the grammar needs at least ${grammar.minTokens} tokens to complete but only ${budget(0)} may be generated (raise maxTokens / the context size)`);
    }
    for (let i = 0; i < o.maxTokens; i++) {
      await yieldToEventLoop();
      if (o.shouldStop()) { finish = 'abort'; break; }
      if (grammar) grammar.remaining = budget(i);
      const id = engine.sample();
      grammar?.accept(id);
      if (o.probs) probs.push({ token: id, top: topProbs(engine.logits!(), o.probs) });
      tokens.push(id);
      if ((!o.ignoreEos || grammar) && tok.isEog(id)) {
        finish = 'stop'; stoppedBy = 'eog';
        const { emit } = stopper.feed(detok.flush(), true);
        text += emit;
        yield { token: id, text: emit };
        break;
      }
      const last = i === o.maxTokens - 1;
      const full = cache.length >= engine.nCtx;
      const done = !!grammar?.done;
      const ends = last || (full && !o.contextShift) || done;
      let { emit, stop } = stopper.feed(detok.push(id));
      if (stop === undefined && ends) {
        // the loop ends here: release what was held back with this token's text
        const f = stopper.feed(detok.flush(), true);
        emit += f.emit; stop = f.stop;
      }
      text += emit;
      if (stop !== undefined) { finish = 'stop'; stoppedBy = 'stop-string'; stopString = stop; }
      else if (done) { finish = 'stop'; stoppedBy = 'grammar'; }
      else if (ends) finish = last ? 'length' : 'context';
      yield { token: id, text: emit };
      if (finish !== undefined) break;
      if (full) {
        // shift: keep the first tokens (BOS, system prompt), discard the older half of the rest: in place where
        // the engine can (llama.cpp's K-shift, no evaluation), else by evaluating the kept tokens again
        const nKeep = Math.min(o.contextShift!.keep, cache.length - 1);
        const nDiscard = Math.max(1, Math.floor((cache.length - nKeep) / 2));
        if (engine.shift?.(nKeep, nDiscard)) {
          o.contextShift!.notice?.(`context full: shifted the context in place, kept the first ${nKeep} token(s) (BOS and system prompt), discarded the next ${nDiscard}`);
          cache.splice(nKeep, nDiscard);
          await engine.evaluate([id]);
          cache.push(id);
        } else {
          const kept = [...cache.slice(0, nKeep), ...cache.slice(nKeep + nDiscard)];
          o.contextShift!.notice?.(`context full: shifted the context, kept the first ${nKeep} token(s) (BOS and system prompt), discarded ${nDiscard} token(s), evaluating the rest again`);
          const n = engine.truncate(nKeep);
          cache.length = n;
          const again = [...kept.slice(n), id];
          await engine.evaluate(again);
          for (const t of again) cache.push(t);
        }
      } else {
        await engine.evaluate([id]);
        cache.push(id);
      }
    }
    finish ??= 'length';
  } finally {
    // also reached when a consumer leaves the loop early: that is an abort
    finish ??= 'abort';
    const t2 = performance.now();
    out.result = {
      ...result(text, tokens, finish, prompt.length, promptN, t1 - t0, tokens.length ? t2 - t1 : 0),
      ...(stoppedBy ? { stoppedBy } : {}),
      ...(stopString !== undefined ? { stopString } : {}),
      ...(o.probs ? { probs } : {}),
    };
  }
}

function result(text: string, tokens: number[], finish: FinishReason, nPrompt: number, promptN: number, promptMs: number, predictedMs: number): GenerateResult {
  return {
    text,
    tokens,
    finishReason: finish,
    usage: { prompt_tokens: nPrompt, completion_tokens: tokens.length, total_tokens: nPrompt + tokens.length },
    timings: {
      prompt_n: promptN,
      prompt_ms: promptMs,
      prompt_per_second: promptMs > 0 ? promptN / (promptMs / 1000) : 0,
      predicted_n: tokens.length,
      predicted_ms: predictedMs,
      predicted_per_second: predictedMs > 0 ? tokens.length / (predictedMs / 1000) : 0,
    },
  };
}

/** The result of a generation aborted before it evaluated anything. */
export function abortedResult(nPrompt: number): GenerateResult {
  return result('', [], 'abort', nPrompt, 0, 0, 0);
}
