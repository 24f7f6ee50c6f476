// A model context: one KV cache with the tokens in it, and generate(), which reuses the cached prefix of
// each prompt. One generation runs at a time per context.
import { Context, type ContextOptions } from '../runtime/context.js';
import type { Sampler } from '../runtime/sampler.js';
import type { Tokenizer } from '../tokenizer/index.js';
import { UsageError } from './errors.js';
import { abortedResult, generationLoop, type Engine, type GenerateResult, type TokenEvent } from './generation.js';
import type { KvType } from '../graph/kv-type.js';
import { buildSampler, type SamplingOptions } from './sampling.js';
import { structuredConstraint } from '../grammar/index.js';

export interface CreateContextOptions extends Partial<Omit<ContextOptions, 'nCtx' | 'kvType' | 'nBatch' | 'flashAttn'>> {
  /** KV cache size in tokens (default min(4096, the model's training context)) */
  ctx?: number;
  /**
   * KV cache element type, keys and values (default 'f16'): 'f32', or llama.cpp's quantized caches 'q8_0'
   * (34 bytes per 32 values) and 'q4_0' (18 bytes), which need flash attention ('auto' turns it on, 'off' is refused)
   */
  kvType?: KvType;
  /** largest batch evaluated at once; a longer prompt is split (default 512) */
  batch?: number;
  /**
   * flash attention (llama.cpp's -fa and its numerics): 'on', 'off' or 'auto' (the default here): on when every
   * device of the context prefers it (the reference and cpu devices run it when 'on' but do not prefer it)
   */
  flashAttn?: 'on' | 'off' | 'auto';
}

export interface GenerateOptions extends SamplingOptions {
  /** tokens to generate at most (default: until end of generation, a stop string or a full context) */
  maxTokens?: number;
  /** stop strings: the text ends before the first one found (it is not included) */
  stop?: string[];
  /** stops the generation (finish reason 'abort'); checked before every token */
  signal?: AbortSignal;
  /** called with every event, also when nobody iterates */
  onToken?: (event: TokenEvent) => void;
  /** keep generating past end-of-generation tokens */
  ignoreEos?: boolean;
  /** render special tokens (e.g. "</s>") in the text (default false) */
  special?: boolean;
  /** a text prompt: add BOS/EOS as the model's metadata says (default true) */
  addSpecial?: boolean;
  /** a text prompt: parse special-token text such as "<|im_start|>" (default false) */
  parseSpecial?: boolean;
  /** when the context fills: drop the older half of the cached tokens after the first `keep` (true: keep BOS) and go on */
  contextShift?: boolean | { keep: number; notice?: (msg: string) => void };
  /** record the top-K next-token probabilities at every step */
  probs?: number;
  /** advanced: a sampler to use instead of one built from the options (its random state goes on) */
  sampler?: Sampler;
  /** constrain the output to a GBNF grammar (llama.cpp's format); the text is always a complete match */
  grammar?: string;
  /** constrain the output to JSON that this JSON Schema validates (converted like llama.cpp's json-schema-to-grammar) */
  jsonSchema?: unknown;
  /** constrain the output to any JSON value */
  jsonObject?: boolean;
}

/** What a context needs from its model. */
export interface ContextHost {
  readonly tokenizer: Tokenizer;
  readonly nVocab: number;
  tokenize(text: string, o?: { addSpecial?: boolean; parseSpecial?: boolean }): number[];
  /** called when the context closes */
  forget(ctx: ModelContext): void;
}

/** The runtime Context and a sampler as an Engine for the generation loop. */
export class RuntimeEngine implements Engine {
  sampler: Sampler;
  private last: Float32Array | null = null;
  constructor(readonly rt: Context, sampler: Sampler) { this.sampler = sampler; }
  get nCtx(): number { return this.rt.nCtx; }
  async evaluate(tokens: number[]): Promise<void> {
    if (tokens.length === 0) return;
    this.last = await this.rt.decode(tokens);
  }
  setHistory(tokens: number[]): void {
    this.sampler.reset();
    for (const t of tokens) this.sampler.accept(t);
  }
  sample(): number {
    if (!this.last) throw new UsageError('USAGE', 'nothing evaluated yet');
    const id = this.sampler.sample(this.last);
    this.sampler.accept(id);
    return id;
  }
  truncate(keep: number): number {
    // a recurrent state cannot be rolled back: anything short of the whole cache clears it
    if (this.rt.recurrent && keep < this.rt.nPast) { this.rt.clear(); return 0; }
    this.rt.truncate(keep);
    return this.rt.nPast;
  }
  shift(keep: number, discard: number): boolean { return this.rt.shiftSeq(0, keep, discard); }
  reset(): void { this.rt.clear(); this.sampler.reset(); this.last = null; }
  logits(): Float32Array { return this.last!; }
}

/**
 * One generation: an async iterable of {token, text} events, and `result` (text, tokens, finish reason,
 * usage, timings). Iterate it once; or only await `result` (the tokens then go to onToken alone).
 * Leaving a for-await loop early ends the generation (finish reason 'abort').
 */
export class Generation implements AsyncIterable<TokenEvent> {
  private started = false;
  private readonly done: Promise<GenerateResult>;
  private settle!: { resolve: (r: GenerateResult) => void; reject: (e: unknown) => void };

  constructor(private readonly run: (out: { result?: GenerateResult }) => AsyncGenerator<TokenEvent, void, undefined>, private readonly onToken?: (e: TokenEvent) => void) {
    this.done = new Promise((resolve, reject) => { this.settle = { resolve, reject }; });
    this.done.catch(() => {}); // the error also reaches whoever iterates; no unhandled rejection
  }

  /** The final result; awaiting it without iterating runs the generation to its end. */
  get result(): Promise<GenerateResult> {
    if (!this.started) void this.drain();
    return this.done;
  }

  private async drain(): Promise<void> {
    try { for await (const _ of this) { /* events go to onToken */ } } catch { /* rejected through `done` */ }
  }

  [Symbol.asyncIterator](): AsyncGenerator<TokenEvent, void, undefined> {
    if (this.started) throw new UsageError('USAGE', 'a generation can be iterated only once');
    this.started = true;
    this.iter = this.events();
    return this.iter;
  }

  /** Ends a started generation wherever its consumer left it (runs its clean-up; finish reason 'abort'). */
  async cancel(): Promise<void> {
    if (this.iter) await this.iter.return(undefined).catch(() => {});
  }

  private iter: AsyncGenerator<TokenEvent, void, undefined> | undefined;

  private async *events(): AsyncGenerator<TokenEvent, void, undefined> {
    const out: { result?: GenerateResult } = {};
    try {
      for await (const e of this.run(out)) {
        this.onToken?.(e);
        yield e;
      }
    } catch (e) {
      this.settle.reject(e);
      throw e;
    } finally {
      if (out.result) this.settle.resolve(out.result);
    }
  }
}

export class ModelContext {
  readonly nCtx: number;
  readonly kvType: KvType;
  /** attention runs with flash attention (createContext's flashAttn, resolved) */
  readonly flashAttn: boolean;
  /** escape hatch: the runtime context (KV cache, scheduler, decode()) */
  readonly runtime: Context;
  private readonly cache: number[] = [];
  private busy: Promise<void> | undefined;
  /** the generation holding `busy` */
  private active: Generation | undefined;
  private closedPromise: Promise<void> | undefined;
  private closing = false;
  private closed = false;

  /** the model's tokenizer */
  get tokenizer(): Tokenizer { return this.host.tokenizer; }

  constructor(private readonly host: ContextHost, rt: Context) {
    this.runtime = rt;
    this.nCtx = rt.nCtx;
    this.kvType = rt.kvType;
    this.flashAttn = rt.flashAttn;
  }

  /** Tokens in the KV cache (the last generation's prompt and evaluated tokens). */
  get tokens(): readonly number[] { return this.cache; }

  /**
   * Generates from a prompt (text, or token ids). The prompt is the context's whole content: its longest
   * common prefix with the cached tokens is reused, the rest evaluated.
   */
  generate(prompt: string | ArrayLike<number>, o: GenerateOptions = {}): Generation {
    const g: Generation = new Generation((out) => this.run(prompt, o, out, g), o.onToken);
    return g;
  }

  private async *run(prompt: string | ArrayLike<number>, o: GenerateOptions, out: { result?: GenerateResult }, g: Generation): AsyncGenerator<TokenEvent, void, undefined> {
    if (this.closed || this.closing) throw new UsageError('CLOSED', 'the context is closed');
    if (this.busy) throw new UsageError('BUSY', 'the context is already generating (one generation per context at a time)');
    const ids = typeof prompt === 'string'
      ? this.host.tokenize(prompt, { addSpecial: o.addSpecial ?? true, parseSpecial: o.parseSpecial ?? false })
      : Array.from(prompt);
    if (ids.length === 0) throw new UsageError('USAGE', 'the prompt is empty', 'prompt');
    const maxTokens = o.maxTokens ?? Infinity;
    if (!(maxTokens >= 0)) throw new UsageError('USAGE', `maxTokens must be a number >= 0, got ${String(o.maxTokens)}`, 'maxTokens');
    const sampler = o.sampler ?? buildSampler(this.host.nVocab, o);
    // a grammar from the options, or the one a caller's sampler already carries (the CLI's run builds its own
    // to report its stats): either way the loop drives it (budget, advance, stop)
    const constraint = structuredConstraint({ grammar: o.grammar, jsonSchema: o.jsonSchema, jsonObject: o.jsonObject }, this.host.tokenizer) ?? sampler.constraint;
    // aborted before it started: nothing is evaluated (and the caller's sampler is left as it was)
    if (o.signal?.aborted) { out.result = abortedResult(ids.length); return; }
    const before = sampler.constraint;
    if (constraint) sampler.constraint = constraint;
    const engine = new RuntimeEngine(this.runtime, sampler);
    const shift = o.contextShift === true ? { keep: this.host.tokenizer.addBos ? 1 : 0 } : o.contextShift || undefined;
    let release!: () => void;
    this.busy = new Promise((r) => { release = r; });
    this.active = g;
    try {
      yield* generationLoop(engine, this.host.tokenizer, this.cache, ids, {
        maxTokens: Math.floor(maxTokens),
        stop: o.stop ?? [],
        ignoreEos: !!o.ignoreEos,
        special: !!o.special,
        contextShift: shift,
        shouldStop: () => this.closing || !!o.signal?.aborted,
        probs: o.probs,
        constraint: sampler.constraint,
      }, out);
    } finally {
      sampler.constraint = before;
      // the cache list follows the runtime's cache, also after a failed evaluation
      if (this.runtime.nPast < this.cache.length) this.cache.length = this.runtime.nPast;
      else if (this.runtime.nPast > this.cache.length) this.cache.length = engine.truncate(this.cache.length);
      this.busy = undefined;
      this.active = undefined;
      release();
    }
  }

  /** Forgets the cached tokens. */
  clear(): void {
    if (this.busy) throw new UsageError('BUSY', 'the context is generating');
    this.runtime.clear();
    this.cache.length = 0;
  }

  /** Stops a running generation (finish reason 'abort'), then frees the KV cache and the compute buffers. Idempotent. */
  close(): Promise<void> {
    this.closedPromise ??= (async () => {
      this.closing = true;
      // a generation suspended between two events (its consumer away) is ended here; a running one stops at its next token
      if (this.busy) void this.active?.cancel();
      while (this.busy) await this.busy;
      this.runtime.close();
      this.closed = true;
      this.host.forget(this);
    })();
    return this.closedPromise;
  }
}
