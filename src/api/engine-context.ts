// A context over any Engine (a KV cache plus a sampler you provide: another runtime, a scripted engine in a
// test). It generates like ModelContext, through the same loop; the engine does its own sampling, so the
// sampling options do not apply.
import type { Tokenizer } from '../tokenizer/index.js';
import { Generation, type GenerateOptions } from './context.js';
import { UsageError } from './errors.js';
import { generationLoop, type Engine } from './generation.js';

export class EngineContext {
  private readonly cache: number[] = [];
  constructor(readonly engine: Engine, readonly tokenizer: Tokenizer) {}

  get nCtx(): number { return this.engine.nCtx; }
  /** tokens in the engine's cache */
  get tokens(): readonly number[] { return this.cache; }

  generate(prompt: string | ArrayLike<number>, o: GenerateOptions = {}): Generation {
    return new Generation((out) => {
      const ids = typeof prompt === 'string'
        ? this.tokenizer.tokenize(prompt, { addSpecial: o.addSpecial ?? true, parseSpecial: o.parseSpecial ?? false })
        : Array.from(prompt);
      const maxTokens = o.maxTokens ?? Infinity;
      if (!(maxTokens >= 0)) throw new UsageError('USAGE', `maxTokens must be a number >= 0, got ${String(o.maxTokens)}`, 'maxTokens');
      const shift = o.contextShift === true ? { keep: this.tokenizer.addBos ? 1 : 0 } : o.contextShift || undefined;
      return generationLoop(this.engine, this.tokenizer, this.cache, ids, {
        maxTokens: Math.floor(maxTokens), stop: o.stop ?? [], ignoreEos: !!o.ignoreEos, special: !!o.special,
        contextShift: shift, shouldStop: () => !!o.signal?.aborted, probs: o.probs,
      }, out);
    }, o.onToken);
  }

  /** Forgets the cache (and the engine's sampler history). */
  clear(): void {
    this.engine.reset();
    this.cache.length = 0;
  }
}
