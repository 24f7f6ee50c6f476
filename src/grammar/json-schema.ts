// JSON Schema to GBNF, after llama.cpp's json-schema-to-grammar (examples/json_schema_to_grammar.py,
// common/json-schema-to-grammar.cpp): the same rule shapes and names (the bounded `space` rule, `kv`
// rules, required properties first in schema order then the optional ones in order, `additional-kv`,
// rules sorted by name), with two differences of principle:
// - a keyword the converter cannot honour is an error (SCHEMA_UNSUPPORTED with its JSON pointer),
//   never skipped; annotations (title, description, default, examples, ...) are ignored;
// - `pattern` is translated by our own regex subset (./regex.ts) so its output is always valid JSON.
//
// Covered: type (or a list of types), properties / required / additionalProperties (false when absent,
// as in llama.cpp: producing no extra keys is valid either way), enum, const, anyOf / oneOf (oneOf is not
// made exclusive: give it disjoint branches), allOf (of object schemas and enums), items / prefixItems,
// minItems / maxItems, minLength / maxLength, pattern, format date / time / date-time / uuid,
// minimum / maximum / exclusiveMinimum / exclusiveMaximum on integers (llama.cpp supports bounds for
// integers only), $ref to "#..." JSON pointers (including recursion) with $defs / definitions.

import { GrammarError } from './errors.js';
import { patternToGbnf } from './regex.js';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type Schema = { [k: string]: Json } | boolean;

export const SPACE_RULE = '| " " | "\\n"{1,2} [ \\t]{0,20}';

const PRIMITIVES: Record<string, { body: string; deps: string[] }> = {
  boolean: { body: '("true" | "false")', deps: [] },
  'decimal-part': { body: '[0-9]{1,16}', deps: [] },
  'integral-part': { body: '[0] | [1-9] [0-9]{0,15}', deps: [] },
  number: { body: '("-"? integral-part) ("." decimal-part)? ([eE] [-+]? integral-part)?', deps: ['integral-part', 'decimal-part'] },
  integer: { body: '("-"? integral-part)', deps: ['integral-part'] },
  value: { body: 'object | array | string | number | boolean | null', deps: ['object', 'array', 'string', 'number', 'boolean', 'null'] },
  object: { body: '"{" space ( string ":" space value ("," space string ":" space value)* )? space "}"', deps: ['string', 'value'] },
  array: { body: '"[" space ( value ("," space value)* )? space "]"', deps: ['value'] },
  uuid: { body: '"\\"" [0-9a-fA-F]{8} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{12} "\\""', deps: [] },
  char: { body: '[^"\\\\\\x7F\\x00-\\x1F] | [\\\\] (["\\\\bfnrt] | "u" [0-9a-fA-F]{4})', deps: [] },
  string: { body: '"\\"" char* "\\""', deps: ['char'] },
  null: { body: '"null"', deps: [] },
  // string formats
  // llama.cpp's date allows day 31 in every month; validators (ajv-formats) check the calendar, so days
  // follow the month here (February to 28: the 29th would need the year)
  date: { body: '[0-9]{4} "-" ( ( "0" [13578] | "1" [02] ) "-" ( "0" [1-9] | [1-2] [0-9] | "3" [0-1] ) | ( "0" [469] | "11" ) "-" ( "0" [1-9] | [1-2] [0-9] | "30" ) | "02-" ( "0" [1-9] | "1" [0-9] | "2" [0-8] ) )', deps: [] },
  time: { body: '([01] [0-9] | "2" [0-3]) ":" [0-5] [0-9] ":" [0-5] [0-9] ( "." [0-9]{3} )? ( "Z" | ( "+" | "-" ) ( [01] [0-9] | "2" [0-3] ) ":" [0-5] [0-9] )', deps: [] },
  'date-time': { body: 'date "T" time', deps: ['date', 'time'] },
  'date-string': { body: '"\\"" date "\\""', deps: ['date'] },
  'time-string': { body: '"\\"" time "\\""', deps: ['time'] },
  'date-time-string': { body: '"\\"" date-time "\\""', deps: ['date-time'] },
};
const RESERVED = new Set(['root', 'dot', ...Object.keys(PRIMITIVES)]);

const ANNOTATIONS = new Set(['title', 'description', '$schema', '$id', '$comment', 'default', 'examples', 'deprecated', 'readOnly', 'writeOnly', '$defs', 'definitions']);
const KNOWN = new Set([
  'type', 'properties', 'required', 'additionalProperties', 'enum', 'const', 'anyOf', 'oneOf', 'allOf', 'items', 'prefixItems',
  'minItems', 'maxItems', 'minLength', 'maxLength', 'pattern', 'format', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', '$ref',
]);
const TYPE_KEYWORDS: Record<string, string[]> = {
  object: ['properties', 'required', 'additionalProperties'],
  array: ['items', 'prefixItems', 'minItems', 'maxItems'],
  string: ['minLength', 'maxLength', 'pattern', 'format'],
  integer: ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum'],
  number: ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum'],
};
const TYPES = new Set(['null', 'boolean', 'object', 'array', 'number', 'string', 'integer']);

export interface SchemaToGrammarOptions {
  /** property names that come first, in this order (llama.cpp's --prop-order) */
  propOrder?: string[];
}

/** Converts a JSON Schema to a GBNF grammar whose root matches exactly the JSON texts it generates. */
export function jsonSchemaToGrammar(schema: unknown, opts: SchemaToGrammarOptions = {}): string {
  const c = new Converter(schema as Schema, opts);
  c.visit(schema as Schema, '', '#');
  return c.format();
}

const literal = (s: string): string => `"${s.replace(/[\r\n"\\]/g, (m) => ({ '\r': '\\r', '\n': '\\n', '"': '\\"', '\\': '\\\\' })[m]!)}"`;
const constant = (v: Json): string => literal(JSON.stringify(v));

function repetition(item: string, min: number, max: number | undefined, sep?: string): string {
  if (max === 0) return '';
  if (min === 0 && max === 1) return `${item}?`;
  if (!sep) {
    if (min === 1 && max === undefined) return `${item}+`;
    if (min === 0 && max === undefined) return `${item}*`;
    return `${item}{${min},${max ?? ''}}`;
  }
  const r = `${item} ${repetition(`(${sep} ${item})`, min > 0 ? min - 1 : 0, max !== undefined ? max - 1 : undefined)}`;
  return min === 0 ? `(${r})?` : r;
}

// Integers in a range, by the digit-by-digit decomposition of [lo, hi] into runs of equal length.
const MAX_DIGITS = 16;
function sameLength(a: string, b: string): string {
  // all numbers of a.length digits between a and b (a <= b, same length), as GBNF
  if (a === b) return `"${a}"`;
  let p = 0;
  while (a[p] === b[p]) p++;
  const prefix = p > 0 ? `"${a.slice(0, p)}" ` : '';
  const restLen = a.length - p - 1;
  const da = a.charCodeAt(p) - 48, db = b.charCodeAt(p) - 48;
  const digits = (x: number, y: number) => (x === y ? `[${x}]` : `[${x}-${y}]`);
  const any = (n: number) => (n === 0 ? '' : n === 1 ? ' [0-9]' : ` [0-9]{${n}}`);
  if (restLen === 0) return `${prefix}${digits(da, db)}`;
  const aRest = a.slice(p + 1), bRest = b.slice(p + 1);
  const zeros = '0'.repeat(restLen), nines = '9'.repeat(restLen);
  const alts: string[] = [];
  let lo = da, hi = db;
  if (aRest !== zeros) { alts.push(`[${da}] (${sameLength(aRest, nines)})`); lo = da + 1; }
  if (bRest !== nines) hi = db - 1;
  if (lo <= hi) alts.push(`${digits(lo, hi)}${any(restLen)}`);
  if (bRest !== nines) alts.push(`[${db}] (${sameLength(zeros, bRest)})`);
  return `${prefix}(${alts.join(' | ')})`;
}
function nonNegRange(lo: number, hi: number | undefined): string {
  // non-negative integers lo..hi (hi undefined: no upper bound, up to MAX_DIGITS digits)
  const alts: string[] = [];
  const ls = String(lo);
  const maxLen = hi === undefined ? MAX_DIGITS : String(hi).length;
  for (let len = ls.length; len <= maxLen; len++) {
    const from = len === ls.length ? ls : len === 1 ? '0' : '1' + '0'.repeat(len - 1);
    if (hi === undefined && len > ls.length) {
      alts.push(`[1-9] [0-9]{${len - 1},${MAX_DIGITS - 1}}`);
      break;
    }
    const to = hi !== undefined && len === maxLen ? String(hi) : '9'.repeat(len);
    alts.push(sameLength(from, to));
  }
  return alts.join(' | ');
}
export function integerRange(min: number | undefined, max: number | undefined): string {
  const lim = 10 ** (MAX_DIGITS - 1);
  for (const v of [min, max]) if (v !== undefined && Math.abs(v) >= lim) throw new GrammarError('SCHEMA_UNSUPPORTED', `integer bound ${v}: at most ${MAX_DIGITS - 1} digits`);
  if (min !== undefined && max !== undefined) {
    if (min > max) throw new GrammarError('SCHEMA_INVALID', `integer bounds: minimum ${min} > maximum ${max} (no value fits)`);
    if (max < 0) return `"-" (${nonNegRange(-max, -min)})`;
    if (min < 0) return `"-" (${nonNegRange(1, -min)}) | ${nonNegRange(0, max)}`;
    return nonNegRange(min, max);
  }
  if (min !== undefined) {
    if (min < 0) return `"-" (${nonNegRange(1, -min)}) | ${nonNegRange(0, undefined)}`;
    return nonNegRange(min, undefined);
  }
  if (max !== undefined) {
    if (max < 0) return `"-" (${nonNegRange(-max, undefined)})`;
    return `"-" (${nonNegRange(1, undefined)}) | ${nonNegRange(0, max)}`;
  }
  return '"-"? ([0] | [1-9] [0-9]{0,15})';
}

class Converter {
  private rules = new Map<string, string>([['space', SPACE_RULE]]);
  private resolving = new Set<string>();
  constructor(private readonly root: Schema, private readonly opts: SchemaToGrammarOptions) {}

  format(): string {
    return [...this.rules.entries()].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).map(([k, v]) => `${k} ::= ${v}`).join('\n') + '\n';
  }

  private fail(path: string, msg: string, code: 'SCHEMA_UNSUPPORTED' | 'SCHEMA_INVALID' = 'SCHEMA_UNSUPPORTED'): never {
    throw new GrammarError(code, `JSON Schema at ${path}: ${msg}`, { path });
  }

  private add(name: string, body: string): string {
    const esc = name.replace(/[^a-zA-Z0-9-]+/g, '-');
    if (!this.rules.has(esc) || this.rules.get(esc) === body) { this.rules.set(esc, body); return esc; }
    let i = 0;
    while (this.rules.has(`${esc}${i}`) && this.rules.get(`${esc}${i}`) !== body) i++;
    this.rules.set(`${esc}${i}`, body);
    return `${esc}${i}`;
  }

  private primitive(name: string, key: string): string {
    const p = PRIMITIVES[key]!;
    const n = this.add(name, p.body);
    for (const d of p.deps) if (!this.rules.has(d)) this.primitive(d, d);
    return n;
  }

  private deref(ref: string, path: string): Schema {
    if (!ref.startsWith('#')) this.fail(path, `$ref "${ref}": only local references ("#/...") are supported`);
    let target: Json = this.root as Json;
    const frag = ref.slice(1);
    if (frag !== '' && !frag.startsWith('/')) this.fail(path, `$ref "${ref}": only JSON-pointer fragments are supported`);
    for (const raw of frag.split('/').slice(1)) {
      const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
      if (target === null || typeof target !== 'object' || !(key in target)) this.fail(path, `$ref "${ref}" does not resolve`, 'SCHEMA_INVALID');
      target = (target as Record<string, Json>)[key]!;
    }
    if (typeof target !== 'boolean' && (target === null || typeof target !== 'object' || Array.isArray(target))) this.fail(path, `$ref "${ref}" is not a schema`, 'SCHEMA_INVALID');
    return target as Schema;
  }

  private checkKeywords(s: Record<string, Json>, path: string): void {
    for (const k of Object.keys(s)) {
      if (!KNOWN.has(k) && !ANNOTATIONS.has(k)) this.fail(`${path}/${k}`, `the keyword "${k}" is not supported`);
    }
  }

  visit(schema: Schema, name: string, path: string): string {
    const ruleName = RESERVED.has(name) ? name + '-' : name || 'root';
    if (schema === true) return this.add(ruleName, this.primitive('value', 'value'));
    if (schema === false) this.fail(path, 'the schema false admits no value', 'SCHEMA_INVALID');
    if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) this.fail(path, 'a schema must be an object or a boolean', 'SCHEMA_INVALID');
    const s = schema as Record<string, Json>;
    this.checkKeywords(s, path);
    const constraints = Object.keys(s).filter((k) => KNOWN.has(k));
    const type = s.type;
    if (type !== undefined) {
      const ts = Array.isArray(type) ? type : [type];
      if (ts.length === 0) this.fail(`${path}/type`, 'an empty type list', 'SCHEMA_INVALID');
      for (const t of ts) if (typeof t !== 'string' || !TYPES.has(t)) this.fail(`${path}/type`, `unknown type ${JSON.stringify(t)}`, 'SCHEMA_INVALID');
    }

    if (s.$ref !== undefined) {
      if (typeof s.$ref !== 'string') this.fail(`${path}/$ref`, '$ref must be a string', 'SCHEMA_INVALID');
      const others = constraints.filter((k) => k !== '$ref');
      if (others.length) this.fail(path, `$ref beside ${others.join(', ')} is not supported`);
      return this.add(ruleName, this.resolveRef(s.$ref, path));
    }
    if (s.oneOf !== undefined || s.anyOf !== undefined) {
      const key = s.oneOf !== undefined ? 'oneOf' : 'anyOf';
      const others = constraints.filter((k) => k !== key);
      if (others.length) this.fail(path, `${key} beside ${others.join(', ')} is not supported (put them inside each branch)`);
      const alts = s[key];
      if (!Array.isArray(alts) || alts.length === 0) this.fail(`${path}/${key}`, `${key} must be a non-empty array`, 'SCHEMA_INVALID');
      return this.add(ruleName, (alts as Schema[]).map((a, i) => this.visit(a, `${name}${name ? '-' : 'alternative-'}${i}`, `${path}/${key}/${i}`)).join(' | '));
    }
    if (s.const !== undefined) return this.add(ruleName, constant(s.const));
    if (s.enum !== undefined) {
      if (!Array.isArray(s.enum) || s.enum.length === 0) this.fail(`${path}/enum`, 'enum must be a non-empty array', 'SCHEMA_INVALID');
      return this.add(ruleName, '(' + (s.enum as Json[]).map(constant).join(' | ') + ')');
    }
    if (Array.isArray(type)) {
      // one branch per type, each with the keywords that apply to it (JSON Schema: a keyword constrains
      // only values of its type)
      const other = constraints.filter((k) => k !== 'type' && !Object.values(TYPE_KEYWORDS).some((ks) => ks.includes(k)));
      if (other.length) this.fail(`${path}/${other[0]}`, `"${other[0]}" beside a list of types is not supported`);
      return this.add(ruleName, (type as string[]).map((t, i) => {
        const branch: Record<string, Json> = { type: t };
        for (const k of TYPE_KEYWORDS[t] ?? []) if (s[k] !== undefined) branch[k] = s[k]!;
        return this.visit(branch, `${name}${name ? '-' : 'alternative-'}${i}`, path);
      }).join(' | '));
    }
    const only = (allowed: string[], what: string) => {
      const bad = constraints.filter((k) => !allowed.includes(k));
      if (bad.length) this.fail(`${path}/${bad[0]}`, `"${bad[0]}" does not apply to ${what} (or cannot be combined here)`);
    };

    if (s.allOf !== undefined) {
      only(['allOf', 'type'], 'allOf');
      if (type !== undefined && type !== 'object' && type !== 'string') this.fail(path, `allOf with type ${JSON.stringify(type)} is not supported`);
      return this.allOf(s.allOf, name, ruleName, path);
    }

    const t = type as string | undefined;
    if ((t === undefined || t === 'object') && (s.properties !== undefined || s.required !== undefined || (s.additionalProperties !== undefined && s.additionalProperties !== true))) {
      only(['type', 'properties', 'required', 'additionalProperties'], 'objects');
      const props = s.properties ?? {};
      if (props === null || typeof props !== 'object' || Array.isArray(props)) this.fail(`${path}/properties`, 'properties must be an object', 'SCHEMA_INVALID');
      const req = s.required ?? [];
      if (!Array.isArray(req) || req.some((x) => typeof x !== 'string')) this.fail(`${path}/required`, 'required must be an array of strings', 'SCHEMA_INVALID');
      const entries = Object.entries(props as Record<string, Schema>);
      // a required property without a schema takes any value (llama.cpp drops it, which breaks validation)
      for (const r of req as string[]) if (!(r in (props as object))) entries.push([r, true]);
      return this.add(ruleName, this.object(entries, new Set(req as string[]), name, s.additionalProperties as Schema | undefined, path));
    }
    if ((t === undefined || t === 'array') && (s.items !== undefined || s.prefixItems !== undefined || s.minItems !== undefined || s.maxItems !== undefined)) {
      only(['type', 'items', 'prefixItems', 'minItems', 'maxItems'], 'arrays');
      return this.add(ruleName, this.array(s, name, path));
    }
    if ((t === undefined || t === 'string') && s.pattern !== undefined) {
      only(['type', 'pattern'], 'a string with a pattern');
      if (typeof s.pattern !== 'string') this.fail(`${path}/pattern`, 'pattern must be a string', 'SCHEMA_INVALID');
      return this.add(ruleName, `"\\"" ${patternToGbnf(s.pattern, `${path}/pattern`)} "\\""`);
    }
    if ((t === undefined || t === 'string') && s.format !== undefined) {
      only(['type', 'format'], 'a string with a format');
      const f = s.format;
      if (typeof f === 'string' && /^uuid[1-5]?$/.test(f)) return this.primitive(ruleName === 'root' ? 'root' : f, 'uuid');
      if (f === 'date' || f === 'time' || f === 'date-time') return this.add(ruleName, this.primitive(`${f}-string`, `${f}-string`));
      this.fail(`${path}/format`, `the string format ${JSON.stringify(f)} is not supported (date, time, date-time, uuid are)`);
    }
    if ((t === undefined || t === 'string') && (s.minLength !== undefined || s.maxLength !== undefined)) {
      only(['type', 'minLength', 'maxLength'], 'strings');
      const min = this.count(s.minLength, `${path}/minLength`) ?? 0;
      const max = this.count(s.maxLength, `${path}/maxLength`);
      if (max !== undefined && max < min) this.fail(path, 'maxLength < minLength', 'SCHEMA_INVALID');
      const ch = this.primitive('char', 'char');
      return this.add(ruleName, `"\\"" ${repetition(ch, min, max)} "\\""`);
    }
    if ((t === undefined || t === 'integer') && (s.minimum !== undefined || s.maximum !== undefined || s.exclusiveMinimum !== undefined || s.exclusiveMaximum !== undefined)) {
      if (t === undefined) this.fail(path, 'numeric bounds need "type": "integer" (llama.cpp supports bounds for integers only)');
      only(['type', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum'], 'integers');
      const num = (k: string): number | undefined => {
        const v = s[k];
        if (v === undefined) return undefined;
        if (typeof v !== 'number' || !Number.isFinite(v)) this.fail(`${path}/${k}`, `${k} must be a number`, 'SCHEMA_INVALID');
        return v;
      };
      let min: number | undefined, max: number | undefined;
      const mi = num('minimum'), xmi = num('exclusiveMinimum'), ma = num('maximum'), xma = num('exclusiveMaximum');
      if (mi !== undefined) min = Math.ceil(mi);
      if (xmi !== undefined) min = Math.max(min ?? -Infinity, Math.floor(xmi) + 1);
      if (ma !== undefined) max = Math.floor(ma);
      if (xma !== undefined) max = Math.min(max ?? Infinity, Math.ceil(xma) - 1);
      return this.add(ruleName, `(${integerRange(min, max)})`);
    }
    if (t === 'number' && constraints.some((k) => k !== 'type')) this.fail(`${path}/${constraints.find((k) => k !== 'type')}`, 'bounds on "number" are not supported (llama.cpp supports them for "integer" only)');
    if (t === 'object' || (t === undefined && Object.keys(s).length === 0)) {
      // llama.cpp: the empty schema {} gives an object (a valid subset of "anything")
      only(['type', 'additionalProperties'], 'objects');
      return this.add(ruleName, this.primitive('object', 'object'));
    }
    if (t === undefined && constraints.length === 0) return this.add(ruleName, this.primitive('value', 'value'));
    if (t === undefined) this.fail(path, `cannot convert a schema with only ${constraints.join(', ')}`);
    const bad = constraints.find((k) => k !== 'type');
    if (bad) this.fail(`${path}/${bad}`, `"${bad}" does not apply to type ${t}`);
    return this.primitive(ruleName === 'root' ? 'root' : t, t);
  }

  private count(v: Json | undefined, path: string): number | undefined {
    if (v === undefined) return undefined;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) this.fail(path, 'must be a non-negative integer', 'SCHEMA_INVALID');
    if (v > 2000) this.fail(path, 'counts above 2000 are not supported (grammar repetition limit)');
    return v;
  }

  private resolveRef(ref: string, path: string): string {
    const frag = ref.slice(1);
    const refName = 'ref' + frag.replace(/[^a-zA-Z0-9-]+/g, '-');
    if (!this.rules.has(refName) && !this.resolving.has(ref)) {
      this.resolving.add(ref);
      const target = this.deref(ref, path);
      const n = this.visit(target, refName, ref);
      this.resolving.delete(ref);
      return n;
    }
    return refName;
  }

  private allOf(list: Json, name: string, ruleName: string, path: string): string {
    if (!Array.isArray(list) || list.length === 0) this.fail(`${path}/allOf`, 'allOf must be a non-empty array', 'SCHEMA_INVALID');
    const props: [string, Schema][] = [];
    const required = new Set<string>();
    let enums: Json[] | undefined;
    let additional: Schema | undefined;
    const add = (comp: Schema, p: string, isRequired: boolean): void => {
      if (typeof comp !== 'object' || comp === null) this.fail(p, 'allOf components must be schema objects', 'SCHEMA_INVALID');
      let c = comp as Record<string, Json>;
      if (typeof c.$ref === 'string') c = this.deref(c.$ref, p) as Record<string, Json>;
      this.checkKeywords(c, p);
      for (const k of Object.keys(c)) {
        if (!KNOWN.has(k)) continue;
        if (!['type', 'properties', 'required', 'enum', 'additionalProperties'].includes(k)) this.fail(`${p}/${k}`, `"${k}" inside allOf is not supported (only properties, required, additionalProperties and enum combine)`);
      }
      if (c.type !== undefined && c.type !== 'object' && !(c.enum && typeof c.type === 'string')) this.fail(`${p}/type`, 'allOf combines object schemas and enums only');
      for (const [k, v] of Object.entries((c.properties ?? {}) as Record<string, Schema>)) {
        const prev = props.find((e) => e[0] === k);
        if (prev) { if (JSON.stringify(prev[1]) !== JSON.stringify(v)) this.fail(`${p}/properties/${k}`, `property "${k}" defined differently by two allOf components`); }
        else props.push([k, v]);
      }
      if (isRequired && Array.isArray(c.required)) for (const r of c.required) if (typeof r === 'string') required.add(r);
      if (c.additionalProperties !== undefined) additional = c.additionalProperties as Schema;
      if (Array.isArray(c.enum)) {
        const e = c.enum as Json[];
        enums = enums === undefined ? e : enums.filter((x) => e.some((y) => JSON.stringify(y) === JSON.stringify(x)));
      }
    };
    list.forEach((comp, i) => {
      const p = `${path}/allOf/${i}`;
      if (comp && typeof comp === 'object' && !Array.isArray(comp) && Array.isArray((comp as Record<string, Json>).anyOf)) {
        ((comp as Record<string, Json>).anyOf as Schema[]).forEach((x, j) => add(x, `${p}/anyOf/${j}`, false));
      } else add(comp as Schema, p, true);
    });
    if (enums !== undefined) {
      if (enums.length === 0) this.fail(path, 'the enums of allOf have no value in common', 'SCHEMA_INVALID');
      if (props.length) this.fail(path, 'allOf mixing enums and properties is not supported');
      return this.add(ruleName, '(' + enums.map(constant).join(' | ') + ')');
    }
    for (const r of required) if (!props.some((e) => e[0] === r)) props.push([r, true]);
    return this.add(ruleName, this.object(props, required, name, additional === true ? undefined : additional, path));
  }

  private object(props: [string, Schema][], required: Set<string>, name: string, additional: Schema | undefined, path: string): string {
    const order = new Map((this.opts.propOrder ?? []).map((k, i) => [k, i]));
    const sorted = props.map((kv, i) => ({ k: kv[0], i })).sort((a, b) => (order.get(a.k) ?? order.size) - (order.get(b.k) ?? order.size) || a.i - b.i).map((x) => x.k);
    const kvRule = new Map<string, string>();
    const pre = name ? `${name}-` : '';
    for (const [k, sch] of props) {
      const valueRule = this.visit(sch, `${pre}${k}`, `${path}/properties/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`);
      kvRule.set(k, this.add(`${pre}${k}-kv`, `${literal(JSON.stringify(k))} space ":" space ${valueRule}`));
    }
    const req = sorted.filter((k) => required.has(k));
    const opt = sorted.filter((k) => !required.has(k));
    if (additional !== undefined && additional !== false) {
      const sub = `${pre}additional`;
      const valueRule = typeof additional === 'object' ? this.visit(additional, `${sub}-value`, `${path}/additionalProperties`) : this.primitive('value', 'value');
      const keyRule = sorted.length === 0 ? this.primitive('string', 'string') : this.add(`${sub}-k`, this.notStrings(sorted));
      kvRule.set('*', this.add(`${sub}-kv`, `${keyRule} ":" space ${valueRule}`));
      opt.push('*');
    }
    let rule = '"{" space ' + req.map((k) => kvRule.get(k)!).join(' "," space ');
    if (opt.length) {
      rule += ' (';
      if (req.length) rule += ' "," space ( ';
      const chain = (ks: string[], firstOptional: boolean): string => {
        const [k, ...rest] = ks as [string, ...string[]];
        const kv = kvRule.get(k)!;
        const comma = `( "," space ${kv} )`;
        let res = firstOptional ? comma + (k === '*' ? '*' : '?') : kv + (k === '*' ? ` ${comma}*` : '');
        if (rest.length) res += ' ' + this.add(`${pre}${k}-rest`, chain(rest, true));
        return res;
      };
      rule += opt.map((_, i) => chain(opt.slice(i), false)).join(' | ');
      if (req.length) rule += ' )';
      rule += ' )?';
    }
    return rule + ' space "}"';
  }

  // a JSON string that is none of `strings` (keys of additional properties), as a trie of exclusions
  private notStrings(strings: string[]): string {
    interface Node { children: Map<string, Node>; end: boolean }
    const root: Node = { children: new Map(), end: false };
    for (const s of strings) {
      let n = root;
      for (const ch of JSON.stringify(s).slice(1, -1)) { let c = n.children.get(ch); if (!c) { c = { children: new Map(), end: false }; n.children.set(ch, c); } n = c; }
      n.end = true;
    }
    const ch = this.primitive('char', 'char');
    const cls = (c: string) => { const cp = c.codePointAt(0)!; return /[0-9A-Za-z]/.test(c) ? c : cp <= 0xff ? `\\x${cp.toString(16).padStart(2, '0')}` : `\\u${cp.toString(16).padStart(4, '0')}`; };
    const out: string[] = ['["] ( '];
    const visit = (n: Node): void => {
      const keys = [...n.children.keys()].sort();
      keys.forEach((c, i) => {
        const child = n.children.get(c)!;
        if (i > 0) out.push(' | ');
        out.push(`[${cls(c)}]`);
        if (child.children.size) { out.push(' ('); visit(child); out.push(')'); }
        else if (child.end) out.push(` ${ch}+`);
      });
      if (keys.length) {
        out.push(' | ');
        // a character that is none of the children: not a quote, not a backslash (escapes start a char), not a child
        out.push(`[^"\\\\\\x00-\\x1F\\x7F${keys.map(cls).join('')}] ${ch}*`);
      }
    };
    visit(root);
    out.push(` )${root.end ? '' : '?'} ["]`);
    return out.join('');
  }

  private array(s: Record<string, Json>, name: string, path: string): string {
    const pre = name ? `${name}-` : '';
    const min = this.count(s.minItems, `${path}/minItems`) ?? 0;
    const max = this.count(s.maxItems, `${path}/maxItems`);
    if (max !== undefined && max < min) this.fail(path, 'maxItems < minItems', 'SCHEMA_INVALID');
    let prefix: Schema[] = [];
    let items: Schema | undefined = s.items as Schema | undefined;
    if (Array.isArray(s.items)) { prefix = s.items as Schema[]; items = undefined; }
    if (s.prefixItems !== undefined) {
      if (!Array.isArray(s.prefixItems)) this.fail(`${path}/prefixItems`, 'prefixItems must be an array', 'SCHEMA_INVALID');
      if (Array.isArray(s.items)) this.fail(`${path}/items`, 'items as an array beside prefixItems', 'SCHEMA_INVALID');
      prefix = s.prefixItems as Schema[];
    }
    const parts: string[] = [];
    const nPrefix = max === undefined ? prefix.length : Math.min(prefix.length, max);
    prefix.slice(0, nPrefix).forEach((it, i) => parts.push(this.visit(it, `${pre}tuple-${i}`, `${path}/prefixItems/${i}`)));
    // the tuple is produced whole (shorter tuples are valid too, but need not be generated)
    let extraMin = Math.max(0, min - nPrefix);
    let extraMax = max === undefined ? undefined : max - nPrefix;
    let itemRule: string | undefined;
    if (items === false) { if (extraMin > 0) this.fail(path, 'minItems needs more items than prefixItems allows', 'SCHEMA_INVALID'); extraMax = 0; }
    else if (items === undefined && prefix.length > 0) { extraMax = extraMin; } // extra items are allowed but only produced when minItems needs them
    if (extraMax !== 0 || extraMin > 0) itemRule = items === undefined || items === true ? this.primitive('value', 'value') : this.visit(items, `${pre}item`, `${path}/items`);
    if (!itemRule) extraMin = 0;
    let body: string;
    if (parts.length === 0) body = itemRule ? repetition(itemRule, extraMin, extraMax, '"," space') : '';
    else {
      body = parts.join(' "," space ');
      if (itemRule && extraMax !== 0) body += ' ' + repetition(`("," space ${itemRule})`, extraMin, extraMax);
    }
    return `"[" space ${body ? body + ' ' : ''}space "]"`;
  }
}
