// What a JSON-schema constraint costs in decode: tokens/s of temperature-1 generation with and without
// the constraint on the same model, prompt and seed, plus the grammar's own time per step (sampled-token
// checks, allowed-token lists, the redraw, advancing the state) as `run --profile` reports it.
//
// Interleaved (the default): every stream (unconstrained, and constrained with each vocabulary) has a
// Context of its own on the one loaded model, and the streams take their decode steps in turn (the order
// rotating each step), so a load spike on the shared machine hits them all alike; a whole run after another
// (--sequential, the earlier method) lets the machine's load drift between the runs into the ratio.
// Each stream's step is what runtime/generate.ts does per token: sample, record, advance the grammar,
// detokenize, evaluate; tok/s = (tokens - 1) / time over its steps, like generate's tg_tps.
//
// Two vocabularies for the grammar: the synthetic model's own (a placeholder SentencePiece vocab: 256
// byte tokens and "t<i>" pieces, so almost every sampled token is rejected outside strings: the allowed
// list and the redraw run at nearly every structural step), and, with --vocab (default: the deepseek-llm
// BPE vocab of the fixtures when present), a real 100k-token BPE vocabulary whose pieces stand for the
// model's first ids (the trie a real model walks). A measurement, not a test.
//
// Usage: npm run bench:grammar -- [--synthetic qwen3-0.6b:q4_k_m] [-n 96] [--rounds 3] [-t THREADS]
//          [--vocab FILE.gguf | --vocab none] [--sequential] [--json]

import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { getDevice } from '../src/backends/registry.js';
import { randomTokens } from '../src/bench/runner.js';
import { parseSyntheticSpec } from '../src/bench/shapes.js';
import { syntheticModel } from '../src/bench/synthetic.js';
import { openGguf } from '../src/gguf/open.js';
import { Context } from '../src/runtime/context.js';
import { loadModel } from '../src/runtime/model.js';
import { createSampler, type Sampler } from '../src/runtime/sampler.js';
import { StreamingDetokenizer, tokenizerFromGguf, type Tokenizer } from '../src/tokenizer/index.js';
import { grammarConstraint, jsonSchemaToGrammar, parseGbnf, tokenIndex, type TokenConstraint } from '../src/grammar/index.js';
import { enableRelaxedSimd } from '../src/backends/cpu/node-flags.js';
enableRelaxedSimd();

const { values } = parseArgs({
  options: {
    synthetic: { type: 'string', default: 'qwen3-0.6b:q4_k_m' },
    'n-predict': { type: 'string', short: 'n', default: '96' },
    rounds: { type: 'string', default: '3' },
    threads: { type: 'string', short: 't' },
    vocab: { type: 'string' },
    sequential: { type: 'boolean' },
    json: { type: 'boolean' },
  },
});

const SCHEMA = {
  type: 'object',
  properties: {
    name: { type: 'string', maxLength: 24 },
    age: { type: 'integer', minimum: 0, maximum: 120 },
    tags: { type: 'array', items: { type: 'string', maxLength: 8 }, maxItems: 4 },
    ok: { type: 'boolean' },
  },
  required: ['name', 'age', 'tags', 'ok'],
};

const median = (xs: number[]) => { const s = [...xs].sort((a, b) => a - b); return s.length % 2 ? s[s.length >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2; };

/** one generation in progress: generate()'s loop body, one token per step() */
class Stream {
  tokens = 0;
  ms = 0; // wall over the steps: samples, grammar, detokenizing and the decodes between them
  readonly stepMs: number[] = [];
  sampleMs = 0; decodeMs = 0;
  text = '';
  ended = false;
  private logits!: Float32Array;
  private readonly one = new Int32Array(1);
  private readonly detok: StreamingDetokenizer;
  constructor(readonly ctx: Context, tok: Tokenizer, readonly sampler: Sampler, readonly constraint: TokenConstraint | null, readonly n: number) {
    this.detok = new StreamingDetokenizer((id) => tok.tokenToPiece(id, { special: true }));
  }
  async start(prompt: number[]): Promise<void> {
    this.ctx.clear();
    for (const t of prompt) this.sampler.accept(t);
    this.logits = await this.ctx.decode(prompt);
  }
  async step(): Promise<void> {
    const t0 = performance.now();
    const c = this.constraint;
    if (c) c.remaining = Math.min(this.n - this.tokens, this.ctx.nCtx - this.ctx.nPast + 1);
    const id = this.sampler.sample(this.logits);
    const t1 = performance.now();
    this.sampler.accept(id);
    c?.accept(id);
    this.tokens++;
    this.text += this.detok.push(id);
    if (c?.done || this.tokens === this.n || this.ctx.nPast >= this.ctx.nCtx) {
      this.ended = true;
      this.text += this.detok.flush();
    }
    const t2 = performance.now();
    if (!this.ended) { this.one[0] = id; this.logits = await this.ctx.decode(this.one); }
    const t3 = performance.now();
    this.sampleMs += t1 - t0; this.decodeMs += t3 - t2; this.ms += t3 - t0; this.stepMs.push(t3 - t0);
  }
  get tps(): number { return this.tokens > 1 ? (this.tokens - 1) / (this.ms / 1000) : 0; }
}

async function main(): Promise<void> {
  const n = Number(values['n-predict']);
  const rounds = Number(values.rounds);
  const { shape, type } = parseSyntheticSpec(values.synthetic!);
  const built = syntheticModel(shape.name, type);
  const file = openGguf(built.path);
  const own = tokenizerFromGguf(file);
  const device = await getDevice('cpu', values.threads ? { threads: Number(values.threads) } : {});
  const model = loadModel(file, { device });
  const nV = model.hp.nVocab;
  const prompt = Array.from(randomTokens(8, 32000, 7));
  const grammar = parseGbnf(jsonSchemaToGrammar(SCHEMA));

  const here = resolve(fileURLToPath(import.meta.url), '../../..');
  const defVocab = resolve(here, '../shared/fixtures/vocab/ggml-vocab-deepseek-llm.gguf');
  const vocabPath = values.vocab === 'none' ? undefined : values.vocab ?? (existsSync(defVocab) ? defVocab : undefined);
  const vocabs: { name: string; tok: Tokenizer }[] = [{ name: `own (${own.nVocab} placeholder pieces)`, tok: own }];
  if (vocabPath) {
    const t = tokenizerFromGguf(openGguf(vocabPath));
    vocabs.push({ name: `${vocabPath.split('/').pop()} (${t.nVocab} BPE pieces)`, tok: t });
  }
  const index = vocabs.map((v) => {
    const t0 = performance.now();
    const idx = tokenIndex(v.tok);
    return { idx, ms: performance.now() - t0, nodes: idx.nodeByte.length };
  });
  const sequential = !!values.sequential;
  // one Context per stream on the one model (sequential runs share one)
  const ctxOpts = { nCtx: 256, kvType: 'f16' as const, nBatch: 64 };
  const ctxs: Context[] = [];
  for (let i = 0; i < (sequential ? 1 : vocabs.length + 1); i++) ctxs.push(await Context.create(model, ctxOpts));

  type Acc = { tps: number[]; tokens: number; ms: number; sampleMs: number; decodeMs: number; grammarMs: number; checks: number; masks: number; maskMs: number; resampleMs: number; states: number; valid: number; runs: number };
  const acc = (): Acc => ({ tps: [], tokens: 0, ms: 0, sampleMs: 0, decodeMs: 0, grammarMs: 0, checks: 0, masks: 0, maskMs: 0, resampleMs: 0, states: 0, valid: 0, runs: 0 });
  const base = acc();
  const cons = vocabs.map(acc);
  const costs = vocabs.map(() => [] as number[]);
  for (let r = 0; r < rounds; r++) {
    const streams = [new Stream(ctxs[0]!, own, createSampler(nV, { temp: 1, seed: r }), null, n)];
    vocabs.forEach((v, i) => {
      const c = grammarConstraint(grammar, index[i]!.idx);
      streams.push(new Stream(ctxs[sequential ? 0 : i + 1]!, v.tok, createSampler(nV, { temp: 1, seed: r }, c), c, n));
    });
    if (sequential) {
      for (const s of streams) { await s.start(prompt); while (!s.ended) await s.step(); }
    } else {
      for (const s of streams) await s.start(prompt);
      for (let step = 0; streams.some((s) => !s.ended); step++) {
        for (let j = 0; j < streams.length; j++) {
          const s = streams[(j + step) % streams.length]!;
          if (!s.ended) await s.step();
        }
      }
    }
    streams.forEach((s, i) => {
      const o = i === 0 ? base : cons[i - 1]!;
      o.tps.push(s.tps); o.tokens += s.tokens; o.ms += s.ms; o.sampleMs += s.sampleMs; o.decodeMs += s.decodeMs; o.runs++;
      const c = s.constraint;
      if (c) {
        o.grammarMs += c.stats.ms + c.stats.resampleMs; o.checks += c.stats.checks; o.masks += c.stats.masks;
        o.maskMs += c.stats.maskMs; o.resampleMs += c.stats.resampleMs; o.states = Math.max(o.states, c.states);
        try { JSON.parse(s.text); o.valid++; } catch { /* counted */ }
        // paired: the steps both streams took (the same positions, at the same moments when interleaved), the
        // last with a decode; the constrained one usually ends first, when its document is complete
        const m = Math.min(s.tokens, streams[0]!.tokens) - 1;
        const sum = (xs: number[]) => xs.slice(0, m).reduce((a, x) => a + x, 0);
        costs[i - 1]!.push(1 - sum(streams[0]!.stepMs) / sum(s.stepMs));
      }
    });
  }
  const per = (o: Acc) => ({ step_ms: o.ms / o.tokens, sample_ms: o.sampleMs / o.tokens, decode_ms: o.decodeMs / o.tokens });
  const baseTps = median(base.tps);
  const b = per(base);
  const rows = vocabs.map((v, i) => {
    const o = cons[i]!;
    const p = per(o);
    const grammarMsStep = o.grammarMs / o.tokens;
    return {
      vocab: v.name, trie_nodes: index[i]!.nodes, index_build_ms: index[i]!.ms, automaton_states: o.states,
      tg_tps: median(o.tps), tg_runs: o.tps,
      // the wall cost: per round, 1 - constrained / unconstrained tok/s over the steps both took; the median
      cost: median(costs[i]!), cost_runs: costs[i]!,
      step_ms: p.step_ms, sampling_ms_per_step: p.sample_ms, decode_ms_per_step: p.decode_ms,
      added_ms_per_step: p.step_ms - b.step_ms,
      grammar_ms_per_step: grammarMsStep, grammar_cost: grammarMsStep / b.step_ms,
      checks: o.checks, full_masks: o.masks, steps: o.tokens,
      ms_per_full_mask: o.masks ? o.maskMs / o.masks : 0, ms_per_redraw: o.masks ? o.resampleMs / o.masks : 0,
      valid_documents: `${o.valid}/${o.runs}`,
    };
  });
  const out = {
    model: `${shape.name}:${type}`, n_vocab: nV, n_predict: n, rounds, device: device.name, mode: sequential ? 'sequential' : 'interleaved',
    baseline_tg_tps: baseTps, baseline_runs: base.tps, baseline_ms_per_step: b.step_ms, baseline_sampling_ms_per_step: b.sample_ms, baseline_decode_ms_per_step: b.decode_ms,
    constrained: rows,
  };
  if (values.json) { process.stdout.write(JSON.stringify(out, null, 2) + '\n'); }
  else {
    const f = (x: number, d = 2) => x.toFixed(d);
    console.log(`grammar cost on --synthetic ${shape.name}:${type} (${nV} logits), -n ${n}, ${rounds} rounds (${out.mode}), medians`);
    console.log(`  unconstrained tg: ${f(baseTps)} tok/s (${base.tps.map((x) => f(x)).join(', ')}); ${f(b.step_ms, 1)} ms/step: decode ${f(b.decode_ms, 1)}, sampling ${f(b.sample_ms)}`);
    for (const r of rows) {
      console.log(`  JSON schema, vocab ${r.vocab}: tg ${f(r.tg_tps)} tok/s (${r.tg_runs.map((x) => f(x)).join(', ')}), wall cost ${f(r.cost * 100, 1)}% (${r.cost_runs.map((x) => f(x * 100, 1)).join(', ')}); ` +
        `${f(r.step_ms, 1)} ms/step (${r.added_ms_per_step >= 0 ? '+' : ''}${f(r.added_ms_per_step)}): decode ${f(r.decode_ms_per_step, 1)}, sampling ${f(r.sampling_ms_per_step)}; ` +
        `grammar ${f(r.grammar_ms_per_step, 3)} ms/step = ${f(r.grammar_cost * 100, 2)}% of a step; ${r.full_masks} allowed-token lists in ${r.steps} steps ` +
        `(${f(r.ms_per_full_mask)} ms each + ${f(r.ms_per_redraw, 3)} ms redraw), ${r.automaton_states} automaton states, trie ${r.trie_nodes} nodes built in ${f(r.index_build_ms, 0)} ms, valid ${r.valid_documents}`);
    }
  }
  for (const c of ctxs) c.close();
  process.exit(0);
}

await main();
