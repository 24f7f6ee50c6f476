// generate({ grammar | jsonSchema | jsonObject }) in the library: the text is a complete document (ajv
// validates it), the finish reason says the grammar ended it, and bad grammars are typed errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Ajv2020Module from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { loadModel, GrammarError, jsonSchemaToGrammar } from '../../src/api/index.js';
import { fixture } from '../helpers/fixtures.js';

type AjvCtor = new (o: object) => { compile(s: unknown): ((d: unknown) => boolean) & { errors?: unknown } };
const Ajv2020 = ((Ajv2020Module as unknown as { default?: AjvCtor }).default ?? Ajv2020Module) as unknown as AjvCtor;
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (a: unknown) => void;

test('library generate with jsonSchema / grammar / jsonObject', async () => {
  const model = await loadModel(fixture('models/stories260K.gguf'));
  try {
    const ctx = await model.createContext({ ctx: 256 });
    const schema = { type: 'object', properties: { title: { type: 'string', maxLength: 10 }, year: { type: 'integer', minimum: 1900, maximum: 2100 }, tags: { type: 'array', items: { enum: ['a', 'b'] }, maxItems: 2 } }, required: ['title', 'year'] };
    const ajv = new Ajv2020({ strict: false });
    addFormats(ajv);
    const validate = ajv.compile(schema);
    for (let seed = 0; seed < 4; seed++) {
      const g = ctx.generate('Once upon a time', { jsonSchema: schema, maxTokens: 60, temperature: 1, seed });
      let streamed = '';
      for await (const e of g) streamed += e.text;
      const r = await g.result;
      assert.equal(streamed, r.text);
      assert.ok(validate(JSON.parse(r.text)), `${r.text}: ${JSON.stringify(validate.errors)}`);
      assert.ok(r.finishReason === 'stop' && r.stoppedBy === 'grammar', `${r.finishReason} ${r.stoppedBy}`);
    }
    // the same grammar given as GBNF text
    const gb = await ctx.generate('Once upon a time', { grammar: jsonSchemaToGrammar(schema), maxTokens: 60, temperature: 1, seed: 9 }).result;
    assert.ok(validate(JSON.parse(gb.text)), gb.text);
    const yn = await ctx.generate('Once upon a time', { grammar: 'root ::= ("yes" | "no") "!"', maxTokens: 10, temperature: 1, seed: 3 }).result;
    assert.match(yn.text, /^(yes|no)!$/);
    const any = await ctx.generate('Once upon a time', { jsonObject: true, maxTokens: 40, temperature: 1, seed: 5 }).result;
    assert.doesNotThrow(() => JSON.parse(any.text), any.text);
    // an unconstrained generation after constrained ones is unconstrained again
    const free = await ctx.generate('Once upon a time', { maxTokens: 8, temperature: 0 }).result;
    assert.equal(free.tokens.length, 8);
    // typed errors
    await assert.rejects(ctx.generate('x', { grammar: 'root ::= [a-' }).result, (e: unknown) => e instanceof GrammarError && e.code === 'GBNF_SYNTAX' && e.line === 1);
    await assert.rejects(ctx.generate('x', { jsonSchema: { type: 'string', format: 'email' } }).result, (e: unknown) => e instanceof GrammarError && e.code === 'SCHEMA_UNSUPPORTED' && e.path === '#/format');
    await assert.rejects(ctx.generate('x', { grammar: 'root ::= "abcdefgh"', maxTokens: 3 }).result, (e: unknown) => e instanceof GrammarError && e.code === 'GRAMMAR_BUDGET');
    await assert.rejects(ctx.generate('x', { grammar: 'root ::= "a"', jsonObject: true }).result, (e: unknown) => e instanceof GrammarError);
    await ctx.close();
  } finally {
    await model.close();
  }
});
