// A conversation over a context: the history and system prompt, rendered with the chat template every turn
// (only the tokens that differ from the cache are evaluated), replies that stop at the template's end-of-turn
// strings, and a full context handled the way llama.cpp's chat does: before a turn the oldest turns are
// dropped (the system prompt stays); within a reply the older half of the non-system tokens is discarded.
import type { Sampler } from '../runtime/sampler.js';
import { ChatFormatter, type ChatMessage } from '../tokenizer/chat-template.js';
import type { Tokenizer } from '../tokenizer/index.js';
import { ContextError } from '../runtime/context.js';
import { Generation, type GenerateOptions, type ModelContext } from './context.js';
import type { EngineContext } from './engine-context.js';
import type { GenerateResult, TokenEvent } from './generation.js';
import { buildSampler, type SamplingOptions } from './sampling.js';

/** What a ChatSession generates with: a ModelContext, or an EngineContext over your own engine. */
export type ChatTarget = ModelContext | EngineContext;

export interface ChatSessionOptions extends SamplingOptions {
  /** the system prompt */
  system?: string;
  /** a built-in format by name (chatml, llama3, gemma, ...) or Jinja source; default: the model's own, else ChatML */
  template?: string;
  /** an explicit formatter (instead of `template`) */
  formatter?: ChatFormatter;
  /** tokens per reply at most (default: until end of turn) */
  maxTokens?: number;
  /** stop strings besides the template's end-of-turn strings */
  stop?: string[];
  ignoreEos?: boolean;
  /** what the session did to fit the context (dropped turns, a context shift) */
  onNotice?: (message: string) => void;
}

/** Per-reply options: sampling options given here replace the session's for this reply. */
export type SendOptions = Pick<GenerateOptions, 'signal' | 'onToken' | 'maxTokens' | 'stop' | 'ignoreEos'> & SamplingOptions;

const SAMPLING_KEYS = ['temperature', 'topK', 'topP', 'minP', 'penalties', 'seed'] as const;

export class ChatSession {
  /** the conversation without the system prompt */
  messages: ChatMessage[] = [];
  system: string | undefined;
  readonly formatter: ChatFormatter;
  private readonly tok: Tokenizer;
  /** the session's sampler: its random state goes on from reply to reply */
  private sampler: Sampler | undefined;

  constructor(readonly context: ChatTarget, private readonly opts: ChatSessionOptions = {}) {
    this.tok = context.tokenizer;
    this.formatter = opts.formatter ?? new ChatFormatter(this.tok, opts.template);
    this.setSystem(opts.system);
  }

  setSystem(text: string | undefined): void {
    this.system = text && text.length > 0 ? text : undefined;
  }

  /** the conversation as the template sees it: the system prompt, then the messages */
  conversation(): ChatMessage[] {
    return [...(this.system ? [{ role: 'system', content: this.system }] : []), ...this.messages];
  }

  /** Forgets the conversation (the system prompt stays) and the context's cache. */
  reset(): void {
    this.messages = [];
    this.context.clear();
    this.sampler?.reset();
  }

  private promptTokens(): number[] {
    return this.tok.tokenize(this.formatter.render(this.conversation(), { addGenerationPrompt: true }), { addSpecial: true, parseSpecial: true });
  }

  /** Tokens of the system prompt (and BOS) that a context shift keeps. */
  private keepCount(prompt: number[]): number {
    let keep = this.tok.addBos ? 1 : 0;
    if (this.system) {
      try {
        const sys = this.tok.tokenize(this.formatter.render([{ role: 'system', content: this.system }], { addGenerationPrompt: false }), { addSpecial: true, parseSpecial: true });
        let n = 0;
        while (n < sys.length && n < prompt.length && sys[n] === prompt[n]) n++;
        keep = Math.max(keep, n);
      } catch {
        // templates that cannot render a lone system message keep BOS only
      }
    }
    return keep;
  }

  /**
   * Adds a user message and generates the reply: a Generation (iterate its {token, text} events; `result`
   * has the reply). The reply joins `messages` when it ends, also when it is aborted (what was said so far).
   */
  send(user: string, o: SendOptions = {}): Generation {
    return new Generation((out) => this.turn(user, o, out), o.onToken);
  }

  private async *turn(user: string, o: SendOptions, out: { result?: GenerateResult }): AsyncGenerator<TokenEvent, void, undefined> {
    const nCtx = this.context.nCtx;
    const maxTokens = o.maxTokens ?? this.opts.maxTokens;
    this.messages.push({ role: 'user', content: user });
    const reserve = Math.max(1, Math.floor(maxTokens !== undefined ? Math.min(maxTokens, nCtx / 2) : nCtx / 4));
    let prompt = this.promptTokens();
    // drop the oldest turns until the prompt plus room for the reply fits; the system prompt stays
    let dropped = 0;
    while (prompt.length + reserve > nCtx && this.messages.length > 1) {
      this.messages.shift();
      if (this.messages.length > 1 && this.messages[0]!.role !== 'user') this.messages.shift(), dropped++;
      dropped++;
      prompt = this.promptTokens();
    }
    if (dropped > 0) this.opts.onNotice?.(`context full: dropped the ${dropped} oldest message(s), kept the system prompt`);
    if (prompt.length >= nCtx) {
      this.messages.pop();
      throw new ContextError('CONTEXT_FULL', `the prompt needs ${prompt.length} tokens but the context holds ${nCtx} (raise --ctx)`);
    }
    const overrides = SAMPLING_KEYS.some((k) => o[k] !== undefined);
    let sampler: Sampler | undefined;
    if ('runtime' in this.context) {
      sampler = overrides ? buildSampler(this.context.runtime.model.hp.nVocab, { ...this.opts, ...o }) : (this.sampler ??= buildSampler(this.context.runtime.model.hp.nVocab, this.opts));
    }
    const g = this.context.generate(prompt, {
      maxTokens, sampler, signal: o.signal,
      stop: [...(o.stop ?? this.opts.stop ?? []), ...this.formatter.stopStrings()],
      ignoreEos: o.ignoreEos ?? this.opts.ignoreEos,
      contextShift: { keep: this.keepCount(prompt), notice: this.opts.onNotice },
    });
    let failed = false;
    try {
      for await (const e of g) yield e;
    } catch (e) {
      failed = true;
      throw e;
    } finally {
      if (!failed) {
        const r = await g.result;
        out.result = r;
        this.messages.push({ role: 'assistant', content: r.text });
      }
    }
  }
}
