// Errors of the structured-output layer: a stable code, and where the problem is (grammar line/column,
// JSON Schema path).

export type GrammarErrorCode =
  | 'GBNF_SYNTAX'       // the grammar text does not parse (line/column given)
  | 'GBNF_UNDEFINED'    // a rule is referenced but never defined
  | 'GBNF_NO_ROOT'      // no `root` rule
  | 'GBNF_LEFT_RECURSION'
  | 'GBNF_UNSUPPORTED'  // valid llama.cpp syntax this engine does not implement (token references)
  | 'GBNF_TOO_LARGE'    // a repetition count or rule count past the limits
  | 'GRAMMAR_STACK_LIMIT' // an ambiguous grammar grew more parse stacks than the limit
  | 'GRAMMAR_BUDGET'    // the shortest completion does not fit in the tokens left
  | 'GRAMMAR_NO_TOKEN'  // no token of the vocabulary can extend the grammar
  | 'SCHEMA_UNSUPPORTED' // a JSON Schema keyword or value the converter does not support
  | 'SCHEMA_INVALID';   // a malformed schema (wrong type of a keyword, bad $ref)

export class GrammarError extends Error {
  readonly code: GrammarErrorCode;
  /** 1-based line and column in the grammar text (GBNF errors) */
  readonly line?: number;
  readonly column?: number;
  /** JSON pointer of the offending schema node (schema errors) */
  readonly path?: string;
  constructor(code: GrammarErrorCode, message: string, where: { line?: number; column?: number; path?: string } = {}) {
    super(message);
    this.name = 'GrammarError';
    this.code = code;
    this.line = where.line;
    this.column = where.column;
    this.path = where.path;
  }
}
