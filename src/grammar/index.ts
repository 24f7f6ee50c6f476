// Structured output: GBNF grammars, JSON Schema to grammar, and the token constraint the sampler uses.
export { GrammarError, type GrammarErrorCode } from './errors.js';
export { parseGbnf, lineColumn, type Grammar, type CharClass, type Element } from './gbnf.js';
export { GrammarMatcher, REJECT } from './matcher.js';
export { buildTokenIndex, tokenIndex, type TokenIndex, type VocabSource } from './token-index.js';
export { grammarConstraint, type TokenConstraint, type ConstraintStats } from './constraint.js';
export { jsonSchemaToGrammar, integerRange, SPACE_RULE, type SchemaToGrammarOptions } from './json-schema.js';
export { patternToGbnf } from './regex.js';

import { grammarConstraint as makeConstraint, type TokenConstraint as Constraint } from './constraint.js';
import { jsonSchemaToGrammar as schemaToGbnf } from './json-schema.js';
import { GrammarError as GErr } from './errors.js';
import type { VocabSource as Vocab } from './token-index.js';

/** What a caller may constrain a generation with (at most one). */
export interface StructuredOutput {
  /** GBNF grammar text */
  grammar?: string;
  /** a JSON Schema (object or boolean) */
  jsonSchema?: unknown;
  /** any JSON value */
  jsonObject?: boolean;
}

/** The GBNF for a structured-output request, or null when it asks for none. */
export function structuredGrammar(o: StructuredOutput): string | null {
  const n = (o.grammar !== undefined ? 1 : 0) + (o.jsonSchema !== undefined ? 1 : 0) + (o.jsonObject ? 1 : 0);
  if (n > 1) throw new GErr('SCHEMA_INVALID', 'give one of grammar, JSON schema or JSON object, not several');
  if (o.grammar !== undefined) return o.grammar;
  if (o.jsonSchema !== undefined) return schemaToGbnf(o.jsonSchema);
  if (o.jsonObject) return schemaToGbnf(true);
  return null;
}

/** The token constraint for a structured-output request, or null when it asks for none. */
export function structuredConstraint(o: StructuredOutput, vocab: Vocab): Constraint | null {
  const g = structuredGrammar(o);
  return g === null ? null : makeConstraint(g, vocab);
}
