// The constrained sampler picks exactly the token llama.cpp's common_sampler rule picks: sample from the
// unconstrained chain; if the grammar rejects that token, set every token the grammar rejects to -inf
// and sample again with the same chain (the random generator moves on). The oracle here runs that rule
// literally: an unconstrained sampler over the whole vocabulary, and the grammar's acceptance of each
// token judged one token at a time by a separate matcher (its bytes walked from the current state; no
// trie, no candidate list). The sampler under test must pick the same token at every step, for several
// chain settings, on a real 102k-token BPE vocabulary and on a real model's generation, whose output
// ajv then validates.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Ajv2020Module from 'ajv/dist/2020.js';
import { getDevice } from '../../src/backends/registry.js';
import { openGguf } from '../../src/gguf/open.js';
import { loadModel } from '../../src/runtime/model.js';
import { Context } from '../../src/runtime/context.js';
import { createSampler, type SamplerParams } from '../../src/runtime/sampler.js';
import { generate } from '../../src/runtime/generate.js';
import { Mt19937 } from '../../src/runtime/rng.js';
import { tokenizerFromGguf, type Tokenizer } from '../../src/tokenizer/index.js';
import { GrammarMatcher, REJECT, grammarConstraint, jsonSchemaToGrammar, parseGbnf, tokenIndex } from '../../src/grammar/index.js';
import { fixture } from '../helpers/fixtures.js';

type AjvCtor = new (o: object) => { compile(s: unknown): ((d: unknown) => boolean) & { errors?: unknown } };
const Ajv2020 = ((Ajv2020Module as unknown as { default?: AjvCtor }).default ?? Ajv2020Module) as unknown as AjvCtor;

const SCHEMA = {
  type: 'object',
  properties: {
    name: { type: 'string', maxLength: 12 },
    n: { type: 'integer', minimum: -5, maximum: 300 },
    tags: { type: 'array', items: { enum: ['a', 'bb', 'c c'] }, maxItems: 3 },
    ok: { type: 'boolean' },
  },
  required: ['name', 'n', 'tags'],
};

const SETTINGS: [string, Partial<SamplerParams>][] = [
  ['defaults', {}],
  ['temp 1, no top-k/top-p/min-p', { temp: 1, topK: 0, topP: 1, minP: 0 }],
  ['greedy', { temp: 0 }],
  ['penalties, top-k 100', { temp: 0.9, topK: 100, repeatPenalty: 1.3, frequencyPenalty: 0.4, presencePenalty: 0.3, repeatLastN: 16 }],
  ['top-k 3, top-p 0.5', { temp: 1.3, topK: 3, topP: 0.5, minP: 0 }],
  ['min-p 0.2, no top-k', { temp: 0.7, topK: 0, topP: 1, minP: 0.2 }],
];

/** the grammar's acceptance, token by token, on a matcher of its own (llama.cpp's rule, incl. the budget) */
class Oracle {
  private m: GrammarMatcher;
  private state: number;
  private readonly pieces: Uint8Array[];
  constructor(gbnf: string, private readonly tok: Tokenizer) {
    this.m = new GrammarMatcher(parseGbnf(gbnf));
    this.state = this.m.initial;
    this.pieces = Array.from({ length: tok.nVocab }, (_, t) => tok.tokenToPiece(t, { special: false }));
  }
  private after(t: number): number {
    if (this.tok.isEog(t)) return this.m.isComplete(this.state) ? this.state : REJECT;
    const bytes = this.pieces[t]!;
    return bytes.length === 0 ? REJECT : this.m.walk(this.state, bytes);
  }
  allows(t: number, remaining: number): boolean {
    const s = this.after(t);
    return s !== REJECT && (this.tok.isEog(t) || this.m.dist[s]! <= remaining - 1);
  }
  accept(t: number): void { const s = this.after(t); assert.notEqual(s, REJECT, `the oracle rejects the sampled token ${t}`); this.state = s; }
  get done(): boolean { return this.m.isDone(this.state); }
}

/** the rule, literally: the unconstrained sampler, and a full -inf mask and a second draw on a rejection */
function oracleSample(u: ReturnType<typeof createSampler>, o: Oracle, logits: Float32Array, remaining: number): number {
  const id = u.sample(logits);
  if (o.allows(id, remaining)) return id;
  const masked = Float32Array.from(logits);
  for (let t = 0; t < masked.length; t++) if (!o.allows(t, remaining)) masked[t] = -Infinity;
  return u.sample(masked);
}

test('constrained sampling == the common_sampler rule on a 102k BPE vocabulary (random logits, six chain settings)', () => {
  const tok = tokenizerFromGguf(openGguf(fixture('vocab/ggml-vocab-deepseek-llm.gguf')));
  const idx = tokenIndex(tok);
  const gbnf = jsonSchemaToGrammar(SCHEMA);
  const validate = new Ajv2020({ strict: false }).compile(SCHEMA);
  const nV = tok.nVocab;
  const nPredict = 40;
  let rejected = 0, steps = 0;
  for (const [name, params] of SETTINGS) {
    // without top-k the oracle sorts the whole vocabulary twice a step: one seed there
    for (let seed = 0; seed < (params.topK === 0 ? 1 : 2); seed++) {
      const rng = new Mt19937(1000 + seed);
      const c = grammarConstraint(gbnf, idx);
      const s = createSampler(nV, { ...params, seed }, c);
      const u = createSampler(nV, { ...params, seed });
      const o = new Oracle(gbnf, tok);
      const logits = new Float32Array(nV);
      const out: number[] = [];
      for (let i = 0; i < nPredict && !o.done; i++) {
        // a spread like a model's: a few strong candidates over a flat tail, and exact ties
        for (let t = 0; t < nV; t++) logits[t] = Math.round((rng.nextDouble() * 8 - 4) * 4) / 4;
        for (let k = 0; k < 6; k++) logits[rng.nextU32() % nV] = 6 + k;
        c.remaining = nPredict - i;
        const want = oracleSample(u, o, logits, nPredict - i);
        const masksBefore = c.stats.masks;
        const got = s.sample(logits);
        assert.equal(got, want, `${name}, seed ${seed}, step ${i}: sampled ${got}, the rule gives ${want}`);
        if (c.stats.masks > masksBefore) rejected++;
        steps++;
        s.accept(got); u.accept(got); c.accept(got); o.accept(got);
        out.push(got);
        if (tok.isEog(got)) break;
      }
      const text = tok.detokenize(out.filter((t) => !tok.isEog(t)));
      const doc: unknown = JSON.parse(text);
      assert.ok(validate(doc), `${name}, seed ${seed}: ${JSON.stringify(text)} fails the schema: ${JSON.stringify(validate.errors)}`);
    }
  }
  assert.ok(rejected > 0 && rejected < steps, `both paths ran: ${rejected} of ${steps} steps rejected the sampled token`);
});

test('a constrained generation on a real model gives the tokens of the common_sampler rule, and ajv validates it', async () => {
  const file = openGguf(fixture('models/stories260K.gguf'));
  const tok = tokenizerFromGguf(file);
  const model = loadModel(file, { device: await getDevice('cpu', { threads: 1 }) });
  const ctx = await Context.create(model, { nCtx: 128, kvType: 'f32' });
  const gbnf = jsonSchemaToGrammar(SCHEMA);
  const validate = new Ajv2020({ strict: false }).compile(SCHEMA);
  const prompt = tok.tokenize('Once upon a time', { addSpecial: true });
  const idx = tokenIndex(tok);
  try {
    for (const [name, params] of SETTINGS) {
      const c = grammarConstraint(gbnf, idx);
      const nPredict = c.minTokens + 24;
      ctx.clear();
      const got = await generate(ctx, tok, prompt, { nPredict, sampler: createSampler(tok.nVocab, { ...params, seed: 7 }, c) });
      // the rule, step by step on the same model
      ctx.clear();
      const u = createSampler(tok.nVocab, { ...params, seed: 7 });
      for (const t of prompt) u.accept(t);
      const o = new Oracle(gbnf, tok);
      let logits = Float32Array.from(await ctx.decode(prompt));
      const want: number[] = [];
      for (let i = 0; i < nPredict; i++) {
        const id = oracleSample(u, o, logits, nPredict - i);
        u.accept(id); o.accept(id); want.push(id);
        if (tok.isEog(id) || o.done || i === nPredict - 1) break;
        logits = Float32Array.from(await ctx.decode([id]));
      }
      assert.deepEqual(got.tokens, want, `${name}: the constrained generation differs from the rule`);
      assert.ok(validate(JSON.parse(got.text)), `${name}: ${JSON.stringify(got.text)} fails the schema`);
    }
  } finally {
    ctx.close();
  }
});
