// Sampling options of the library (camelCase, llama.cpp's defaults and chain order) -> the runtime's sampler.
// Constraints on the sampled text (a grammar, a JSON schema) plug in where buildSampler wraps the chain.
import { createSampler, defaultSamplerParams, type Sampler, type SamplerParams } from '../runtime/sampler.js';
import { UsageError } from './errors.js';

export interface Penalties {
  /** repetition penalty (default 1 = off) */
  repeat?: number;
  /** tokens the penalties look back (default 64) */
  lastN?: number;
  /** subtracted per occurrence (default 0) */
  frequency?: number;
  /** subtracted once if present (default 0) */
  presence?: number;
}

export interface SamplingOptions {
  /** 0 or less: greedy (default 0.8) */
  temperature?: number;
  /** default 40; 0 = off */
  topK?: number;
  /** default 0.95; 1 = off */
  topP?: number;
  /** default 0.05; 0 = off */
  minP?: number;
  penalties?: Penalties;
  /** sampling seed (default: random) */
  seed?: number;
}

function number(v: unknown, name: string, def: number): number {
  if (v === undefined) return def;
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new UsageError('USAGE', `${name} must be a finite number, got ${String(v)}`, name);
  return v;
}

/** Checked sampler parameters from the options (a UsageError names a bad option). Values pass through as the
 * runtime reads them: topK <= 0, topP >= 1, minP <= 0 and repeat 1 are off. */
export function samplerParams(o: SamplingOptions): SamplerParams {
  const d = defaultSamplerParams;
  const p = o.penalties ?? {};
  return {
    temp: number(o.temperature, 'temperature', d.temp),
    topK: number(o.topK, 'topK', d.topK),
    topP: number(o.topP, 'topP', d.topP),
    minP: number(o.minP, 'minP', d.minP),
    repeatPenalty: number(p.repeat, 'penalties.repeat', d.repeatPenalty),
    repeatLastN: number(p.lastN, 'penalties.lastN', d.repeatLastN),
    frequencyPenalty: number(p.frequency, 'penalties.frequency', d.frequencyPenalty),
    presencePenalty: number(p.presence, 'penalties.presence', d.presencePenalty),
    seed: o.seed !== undefined ? number(o.seed, 'seed', 0) >>> 0 : undefined,
  };
}

/** The library's options for the runtime's parameters (the CLI's flags arrive as SamplerParams). */
export function samplingOptions(p: Partial<SamplerParams>): SamplingOptions {
  return {
    temperature: p.temp, topK: p.topK, topP: p.topP, minP: p.minP, seed: p.seed,
    penalties: { repeat: p.repeatPenalty, lastN: p.repeatLastN, frequency: p.frequencyPenalty, presence: p.presencePenalty },
  };
}

/** The sampler for one generation. */
export function buildSampler(nVocab: number, o: SamplingOptions): Sampler {
  return createSampler(nVocab, samplerParams(o));
}
