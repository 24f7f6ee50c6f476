// Structured output: GBNF grammars, JSON Schema to grammar, and the token constraint the sampler uses.
export { GrammarError, type GrammarErrorCode } from './errors.js';
export { parseGbnf, lineColumn, type Grammar, type CharClass, type Element } from './gbnf.js';
export { GrammarMatcher, REJECT } from './matcher.js';
export { buildTokenIndex, tokenIndex, type TokenIndex, type VocabSource } from './token-index.js';
export { grammarConstraint, type TokenConstraint, type ConstraintStats } from './constraint.js';
export { jsonSchemaToGrammar, integerRange, SPACE_RULE, type SchemaToGrammarOptions } from './json-schema.js';
export { patternToGbnf } from './regex.js';
