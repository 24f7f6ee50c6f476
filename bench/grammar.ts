// What a JSON-schema constraint costs in decode: tokens/s of temperature-1 generation with and without
// the constraint on the same model, context and prompt, interleaved round by round (medians), plus the
// grammar's own time per step (sampled-token checks, full-vocabulary masks) as `run --profile` reports it.
//
// Two vocabularies for the grammar: the synthetic model's own (a placeholder SentencePiece vocab: 256
// byte tokens and "t<i>" pieces, so almost every sampled token is rejected outside strings: the mask
// runs at nearly every structural step), and, with --vocab (default: the deepseek-llm BPE vocab of the
// fixtures when present), a real 100k-token BPE vocabulary whose pieces stand for the model's first
// ids (the trie a real model walks). Two costs: the wall one (1 - constrained tok/s / unconstrained, noisy
// on a shared machine) and the accounted one (the ms the constraint adds inside sampler.sample per step,
// over the unconstrained step time), which load drift between runs does not skew. A measurement, not a test.
//
// Usage: npm run bench:grammar -- [--synthetic qwen3-0.6b:q4_k_m] [-n 96] [--rounds 3] [-t THREADS]
//          [--vocab FILE.gguf | --vocab none] [--json]

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
import { generate } from '../src/runtime/generate.js';
import { tokenizerFromGguf, type Tokenizer } from '../src/tokenizer/index.js';
import { grammarConstraint, jsonSchemaToGrammar, parseGbnf, tokenIndex } from '../src/grammar/index.js';
import { enableRelaxedSimd } from '../src/backends/cpu/node-flags.js';
enableRelaxedSimd();

const { values } = parseArgs({
  options: {
    synthetic: { type: 'string', default: 'qwen3-0.6b:q4_k_m' },
    'n-predict': { type: 'string', short: 'n', default: '96' },
    rounds: { type: 'string', default: '3' },
    threads: { type: 'string', short: 't' },
    vocab: { type: 'string' },
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

async function main(): Promise<void> {
  const n = Number(values['n-predict']);
  const rounds = Number(values.rounds);
  const { shape, type } = parseSyntheticSpec(values.synthetic!);
  const built = syntheticModel(shape.name, type);
  const file = openGguf(built.path);
  const own = tokenizerFromGguf(file);
  const device = await getDevice('cpu', values.threads ? { threads: Number(values.threads) } : {});
  const model = loadModel(file, { device });
  const ctx = await Context.create(model, { nCtx: 256, kvType: 'f16', nBatch: 64 });
  const nV = model.hp.nVocab;
  const prompt = Array.from(randomTokens(8, 32000, 7));
  const gbnf = jsonSchemaToGrammar(SCHEMA);
  const grammar = parseGbnf(gbnf);

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

  // time inside sampler.sample (the chain; constrained: also the check, the mask and the resample)
  const timed = (s: Sampler, acc: { ms: number }) => { const inner = s.sample; s.sample = (l) => { const t0 = performance.now(); const r = inner(l); acc.ms += performance.now() - t0; return r; }; return s; };
  const base: number[] = [];
  const baseAcc = { ms: 0, steps: 0, wall: 0 };
  const cons = vocabs.map(() => ({ tps: [] as number[], msStep: [] as number[], masks: 0, checks: 0, steps: 0, maskMs: 0, valid: 0, runs: 0, sampleMs: 0, wall: 0 }));
  for (let r = 0; r < rounds; r++) {
    ctx.clear();
    const acc = { ms: 0 };
    const b = await generate(ctx, null, prompt, { nPredict: n, sampler: timed(createSampler(nV, { temp: 1, seed: r }), acc), stopAtEog: false });
    base.push(b.timings.tg_tps);
    baseAcc.ms += acc.ms; baseAcc.steps += b.tokens.length; baseAcc.wall += b.timings.gen_ms;
    for (let v = 0; v < vocabs.length; v++) {
      ctx.clear();
      const c = grammarConstraint(grammar, index[v]!.idx);
      const acc = { ms: 0 };
      const res = await generate(ctx, vocabs[v]!.tok, prompt, { nPredict: n, sampler: timed(createSampler(nV, { temp: 1, seed: r }, c), acc) });
      const o = cons[v]!;
      o.sampleMs += acc.ms; o.wall += res.timings.gen_ms;
      o.tps.push(res.timings.tg_tps);
      o.msStep.push(c.stats.ms / res.tokens.length);
      o.masks += c.stats.masks; o.checks += c.stats.checks; o.steps += res.tokens.length; o.maskMs += c.stats.maskMs; o.runs++;
      try { JSON.parse(res.text); o.valid++; } catch { /* counted */ }
    }
  }
  const baseTps = median(base);
  // per step: the unconstrained step (decode + sampling) and what the constraint adds to sampling
  const baseStepMs = baseAcc.wall / baseAcc.steps, baseSampleMs = baseAcc.ms / baseAcc.steps;
  const rows = vocabs.map((v, i) => {
    const o = cons[i]!;
    const tps = median(o.tps);
    const added = o.sampleMs / o.steps - baseSampleMs;
    return {
      vocab: v.name, trie_nodes: index[i]!.nodes, index_build_ms: index[i]!.ms,
      tg_tps: tps, cost: 1 - tps / baseTps, sampling_ms_per_step: o.sampleMs / o.steps, added_ms_per_step: added, accounted_cost: added / (baseStepMs + added),
      grammar_ms_per_step: median(o.msStep),
      full_masks: o.masks, steps: o.steps, ms_per_full_mask: o.masks ? o.maskMs / o.masks : 0, valid_documents: `${o.valid}/${o.runs}`,
    };
  });
  const out = { model: `${shape.name}:${type}`, n_vocab: nV, n_predict: n, rounds, device: device.name, baseline_tg_tps: baseTps, baseline_runs: base, baseline_ms_per_step: baseStepMs, baseline_sampling_ms_per_step: baseSampleMs, constrained: rows };
  if (values.json) { process.stdout.write(JSON.stringify(out, null, 2) + '\n'); }
  else {
    console.log(`grammar cost on --synthetic ${shape.name}:${type} (${nV} logits), -n ${n}, ${rounds} rounds, medians`);
    console.log(`  unconstrained tg: ${baseTps.toFixed(2)} tok/s (${base.map((x) => x.toFixed(2)).join(', ')}); ${baseStepMs.toFixed(1)} ms/step of which sampling ${baseSampleMs.toFixed(2)} ms`);
    for (const r of rows) {
      console.log(`  JSON schema, vocab ${r.vocab}: tg ${r.tg_tps.toFixed(2)} tok/s (wall cost ${(r.cost * 100).toFixed(1)}%); sampling ${r.sampling_ms_per_step.toFixed(2)} ms/step, ` +
        `+${r.added_ms_per_step.toFixed(2)} ms/step = accounted cost ${(r.accounted_cost * 100).toFixed(1)}%; grammar ${r.grammar_ms_per_step.toFixed(3)} ms/step, ` +
        `${r.full_masks} full masks in ${r.steps} steps (${r.ms_per_full_mask.toFixed(2)} ms each), trie ${r.trie_nodes} nodes built in ${r.index_build_ms.toFixed(0)} ms, valid ${r.valid_documents}`);
    }
  }
  ctx.close();
  process.exit(0);
}

await main();
