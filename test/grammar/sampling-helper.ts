// The sampled-generation check of the JSON Schema corpus: for each schema, 20 seeded generations at
// temperature 1 on the stories260K fixture (cpu device, one thread), each parsed with JSON.parse and
// validated by ajv (draft 2020-12, ajv-formats), independently of our converter.
import assert from 'node:assert/strict';
import Ajv2020Module from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { getDevice } from '../../src/backends/registry.js';
import { openGguf } from '../../src/gguf/open.js';
import { loadModel } from '../../src/runtime/model.js';
import { Context } from '../../src/runtime/context.js';
import { createSampler } from '../../src/runtime/sampler.js';
import { generate } from '../../src/runtime/generate.js';
import { tokenizerFromGguf } from '../../src/tokenizer/index.js';
import { grammarConstraint, jsonSchemaToGrammar, parseGbnf, tokenIndex } from '../../src/grammar/index.js';
import { fixture } from '../helpers/fixtures.js';
import type { Case } from './schema-corpus.js';

type AjvCtor = new (o: object) => { compile(s: unknown): ((d: unknown) => boolean) & { errors?: unknown } };
const Ajv2020 = ((Ajv2020Module as unknown as { default?: AjvCtor }).default ?? Ajv2020Module) as unknown as AjvCtor;
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (a: unknown) => void;

export const GENERATIONS = 20;
/** tokens allowed past the grammar's shortest completion */
export const SLACK = 12;

export async function sampleCorpus(cases: Case[]): Promise<{ tokens: number; masks: number; checks: number }> {
  const file = openGguf(fixture('models/stories260K.gguf'));
  const tok = tokenizerFromGguf(file);
  const model = loadModel(file, { device: await getDevice('cpu', { threads: 1 }) });
  const ctx = await Context.create(model, { nCtx: 128, kvType: 'f32' });
  const idx = tokenIndex(tok);
  const prompt = tok.tokenize('Once upon a time', { addSpecial: true });
  let tokens = 0, masks = 0, checks = 0;
  for (const c of cases) {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    const validate = ajv.compile(c.schema);
    const gbnf = jsonSchemaToGrammar(c.schema);
    parseGbnf(gbnf);
    for (let seed = 0; seed < GENERATIONS; seed++) {
      const constraint = grammarConstraint(gbnf, idx);
      const sampler = createSampler(tok.nVocab, { temp: 1, seed }, constraint);
      ctx.clear();
      const r = await generate(ctx, tok, prompt, { nPredict: constraint.minTokens + SLACK, sampler });
      tokens += r.tokens.length; masks += constraint.stats.masks; checks += constraint.stats.checks;
      let doc: unknown;
      try { doc = JSON.parse(r.text); } catch (e) { assert.fail(`${c.name} seed ${seed}: not JSON (${(e as Error).message}): ${JSON.stringify(r.text)}`); }
      assert.ok(validate(doc), `${c.name} seed ${seed}: ${JSON.stringify(r.text)} fails the schema: ${JSON.stringify(validate.errors)}`);
      assert.ok(constraint.complete, `${c.name} seed ${seed}: the grammar is not complete`);
    }
  }
  ctx.close();
  return { tokens, masks, checks };
}
