// JSON Schema -> GBNF: unsupported keywords are errors naming their place; integer bounds against
// arithmetic; the output against llama.cpp's own converter (tests/test-json-schema-to-grammar.cpp
// expected grammars, as test data) on the documents both must accept or reject.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GrammarError, GrammarMatcher, REJECT, integerRange, jsonSchemaToGrammar, parseGbnf } from '../../src/grammar/index.js';
import { corpus, unsupported } from './schema-corpus.js';

const enc = new TextEncoder();
const accepts = (m: GrammarMatcher, text: string) => { const s = m.walk(m.initial, enc.encode(text)); return s !== REJECT && m.isComplete(s); };
const compile = (gbnf: string) => new GrammarMatcher(parseGbnf(gbnf));

test('the corpus: over 100 schemas, each converts to a grammar that parses and can complete', () => {
  assert.ok(corpus.length >= 100, `${corpus.length} schemas`);
  for (const c of corpus) {
    const g = jsonSchemaToGrammar(c.schema);
    const m = compile(g);
    assert.ok(Number.isFinite(m.dist[m.initial]!), c.name);
  }
});

test('unsupported keywords and values are typed errors with the JSON pointer', () => {
  for (const [name, schema, path] of unsupported) {
    assert.throws(() => jsonSchemaToGrammar(schema), (e: unknown) => {
      assert.ok(e instanceof GrammarError, `${name}: ${String(e)}`);
      assert.equal(e.code, 'SCHEMA_UNSUPPORTED', `${name}: ${e.message}`);
      assert.equal(e.path, path, `${name}: ${e.message}`);
      assert.ok(e.message.includes(path), e.message);
      return true;
    });
  }
  for (const bad of [{ type: 'kaboom' }, { type: 123 }, { enum: [] }, { $ref: '#/$defs/missing' }, { type: 'integer', minimum: 5, maximum: 1 }, { type: 'string', minLength: -1 }]) {
    assert.throws(() => jsonSchemaToGrammar(bad), (e: unknown) => e instanceof GrammarError && e.code === 'SCHEMA_INVALID', JSON.stringify(bad));
  }
});

test('integer bounds: exactly the integers in range, checked against arithmetic from -1100 to 1100', () => {
  const bounds: [number | undefined, number | undefined][] = [
    [0, undefined], [1, undefined], [3, undefined], [9, undefined], [10, undefined], [25, undefined], [-5, undefined], [-123, undefined],
    [undefined, 30], [undefined, -5], [undefined, 1], [undefined, 100], [undefined, 0],
    [0, 23], [15, 300], [5, 30], [-123, 42], [-10, 10], [-10, -2], [7, 7], [0, 0], [99, 1000], [-1000, -999], [100, 199],
  ];
  for (const [lo, hi] of bounds) {
    const m = compile(`root ::= ${integerRange(lo, hi)}\n`);
    for (let v = -1100; v <= 1100; v++) {
      const inRange = (lo === undefined || v >= lo) && (hi === undefined || v <= hi);
      assert.equal(accepts(m, String(v)), inRange, `[${lo}, ${hi}] ${v}`);
    }
    // no leading zeros, no "-0", and the unbounded side reaches 16 digits
    for (const t of ['007', '-0', '00']) assert.ok(!accepts(m, t), `[${lo}, ${hi}] ${t}`);
    if (hi === undefined) assert.ok(accepts(m, '1234567890123456'), `[${lo}, ${hi}] 16 digits`);
  }
});

// llama.cpp's expected grammars (tests/test-json-schema-to-grammar.cpp, the version that appends
// `space` after every value). Ours puts the space before closing brackets instead (the newer
// json_schema_to_grammar.py layout), so the documents below are compact: both layouts accept them.
const llamaCases: { schema: unknown; grammar: string; docs: string[] }[] = [
  {
    schema: { type: 'integer', minimum: -123, maximum: 42 },
    grammar: 'root ::= ("-" ([0-9] | ([1-8] [0-9] | [9] [0-9]) | "1" ([0-1] [0-9] | [2] [0-3])) | [0-9] | ([1-3] [0-9] | [4] [0-2])) space\nspace ::= | " " | "\\n"{1,2} [ \\t]{0,20}',
    // (llama.cpp also accepts "-0" here; ours never produces it)
    docs: ['-123', '-124', '42', '43', '0', '7', '100', '-99'],
  },
  {
    schema: { type: 'integer', minimum: 25 },
    grammar: 'root ::= ([1] [0-9]{2,15} | [2] ([0-4] [0-9]{1,14} | [5-9] [0-9]{0,14}) | [3-9] [0-9]{1,15}) space\nspace ::= | " " | "\\n"{1,2} [ \\t]{0,20}',
    docs: ['24', '25', '26', '99', '100', '1000000', '3', '250'],
  },
  {
    schema: { enum: ['red', 'amber', 'green', null, 42, ['foo']] },
    grammar: 'root ::= ("\\"red\\"" | "\\"amber\\"" | "\\"green\\"" | "null" | "42" | "[\\"foo\\"]") space\nspace ::= | " " | "\\n"{1,2} [ \\t]{0,20}',
    docs: ['"red"', '"blue"', 'null', '42', '["foo"]', '"amber"', '43'],
  },
  {
    schema: { type: 'string', minLength: 1, maxLength: 4 },
    grammar: 'char ::= [^"\\\\\\x7F\\x00-\\x1F] | [\\\\] (["\\\\bfnrt] | "u" [0-9a-fA-F]{4})\nroot ::= "\\"" char{1,4} "\\"" space\nspace ::= | " " | "\\n"{1,2} [ \\t]{0,20}',
    docs: ['""', '"a"', '"abcd"', '"abcde"', '"\\n\\u00e9"', '"\\x"', '"é"'],
  },
  {
    schema: { prefixItems: [{ type: 'string' }, { type: 'number' }] },
    grammar: 'char ::= [^"\\\\\\x7F\\x00-\\x1F] | [\\\\] (["\\\\bfnrt] | "u" [0-9a-fA-F]{4})\ndecimal-part ::= [0-9]{1,16}\nintegral-part ::= [0] | [1-9] [0-9]{0,15}\nnumber ::= ("-"? integral-part) ("." decimal-part)? ([eE] [-+]? integral-part)? space\nroot ::= "[" space string "," space number "]" space\nspace ::= | " " | "\\n"{1,2} [ \\t]{0,20}\nstring ::= "\\"" char* "\\"" space',
    docs: ['["a",1]', '["a",-1.5e3]', '[1,"a"]', '["a"]', '["",0.25]', '["a",01]'],
  },
  {
    schema: { type: 'object', properties: { a: { type: 'string' }, b: { type: 'integer' } }, required: ['a'], additionalProperties: false },
    grammar: [
      'a-kv ::= "\\"a\\"" space ":" space string',
      'b-kv ::= "\\"b\\"" space ":" space integer',
      'char ::= [^"\\\\\\x7F\\x00-\\x1F] | [\\\\] (["\\\\bfnrt] | "u" [0-9a-fA-F]{4})',
      'integer ::= ("-"? integral-part) space',
      'integral-part ::= [0] | [1-9] [0-9]{0,15}',
      'root ::= "{" space a-kv ( "," space ( b-kv ) )? "}" space',
      'space ::= | " " | "\\n"{1,2} [ \\t]{0,20}',
      'string ::= "\\"" char* "\\"" space',
    ].join('\n'),
    docs: ['{"a":"x"}', '{"a":"x","b":3}', '{"b":3,"a":"x"}', '{"b":3}', '{}', '{"a":"x","c":1}', '{"a":"x","b":1.5}'],
  },
  {
    schema: { type: 'array', items: { type: 'boolean' }, minItems: 1, maxItems: 2 },
    grammar: 'boolean ::= ("true" | "false") space\nroot ::= "[" space boolean ("," space boolean)? "]" space\nspace ::= | " " | "\\n"{1,2} [ \\t]{0,20}',
    docs: ['[]', '[true]', '[true,false]', '[true,false,true]', '[1]'],
  },
];

test('llama.cpp cross-check: our grammar accepts exactly the compact documents llama.cpp\'s does', () => {
  for (const c of llamaCases) {
    const ours = compile(jsonSchemaToGrammar(c.schema));
    const theirs = compile(c.grammar);
    for (const d of c.docs) assert.equal(accepts(ours, d), accepts(theirs, d), `${JSON.stringify(c.schema)} on ${d}`);
    assert.ok(c.docs.some((d) => accepts(theirs, d)) && c.docs.some((d) => !accepts(theirs, d)), 'the documents separate');
  }
});

test('layout facts shared with llama.cpp: rule names, the space rule, required first, sorted rules', () => {
  const g = jsonSchemaToGrammar({ type: 'object', properties: { b: { type: 'boolean' }, 'a-b c': { type: 'null' } }, required: ['a-b c'] });
  const lines = g.trim().split('\n');
  assert.deepEqual(lines.map((l) => l.split(' ::= ')[0]), [...lines.map((l) => l.split(' ::= ')[0]!)].sort());
  assert.ok(lines.includes('space ::= | " " | "\\n"{1,2} [ \\t]{0,20}'), g);
  assert.ok(lines.some((l) => l.startsWith('a-b-c-kv ::= "\\"a-b c\\"" space ":" space')), g);
  assert.ok(lines.includes('root ::= "{" space a-b-c-kv ( "," space ( b-kv ) )? space "}"'), g);
  // the output is a complete document: nothing may follow the closing brace
  const m = compile(g);
  assert.ok(m.isDone(m.walk(m.initial, enc.encode('{"a-b c": null}'))));
});
