// GBNF, llama.cpp's grammar format (grammars/README.md there): a parser to rules of code-point
// terminals, with llama.cpp's rewriting of repetitions and groups into generated rules, and the checks
// llama.cpp makes before sampling (undefined rules, a root rule, no left recursion).
//
// Syntax: `name ::= alternatives` (a newline or the end closes a rule; a newline after `|` or inside
// parentheses continues it), "literal", [class] with ranges and ^ negation, `.`, ( groups ), the
// postfix operators ? * + {m} {m,} {m,n}, escapes \xHH \uHHHH \UHHHHHHHH \t \r \n \\ \" \[ \], and
// # comments. Token references (<[id]>, <token>, !) are rejected as unsupported.

import { GrammarError } from './errors.js';

/** A set of code points: inclusive [lo, hi] pairs, or their complement when negated. `.` is [^]. */
export interface CharClass {
  negated: boolean;
  ranges: number[];
}

export type Element = { t: 'char'; cls: number } | { t: 'ref'; rule: number };

export interface Grammar {
  ruleNames: string[];
  /** per rule: its alternatives, each a sequence of elements (an empty sequence matches nothing) */
  rules: Element[][][];
  classes: CharClass[];
  root: number;
}

/** llama.cpp caps a repetition count (MAX_REPETITION_THRESHOLD) so a grammar cannot explode. */
export const MAX_REPETITION = 2000;
const MAX_RULES = 100_000;

const isWordChar = (c: string | undefined): boolean =>
  c !== undefined && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c === '-' || c === '_');
const isDigit = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '9';

/** 1-based line and column (in code points) of a string offset. */
export function lineColumn(src: string, offset: number): { line: number; column: number } {
  let line = 1, lineStart = 0;
  for (let i = 0; i < offset && i < src.length; i++) if (src[i] === '\n') { line++; lineStart = i + 1; }
  return { line, column: [...src.slice(lineStart, offset)].length + 1 };
}

export function parseGbnf(src: string): Grammar {
  const ruleNames: string[] = [];
  const rules: (Element[][] | undefined)[] = [];
  const firstUse: number[] = [];
  const ids = new Map<string, number>();
  const classes: CharClass[] = [];
  const classIds = new Map<string, number>();

  const fail = (at: number, msg: string, code: 'GBNF_SYNTAX' | 'GBNF_UNSUPPORTED' | 'GBNF_TOO_LARGE' = 'GBNF_SYNTAX'): never => {
    const { line, column } = lineColumn(src, at);
    const near = src.slice(at, at + 20).split(/\r?\n/)[0];
    throw new GrammarError(code, `GBNF: ${msg} at line ${line}, column ${column}${near ? ` (near "${near}")` : ' (at the end)'}`, { line, column });
  };
  const symbol = (name: string, at: number): number => {
    let id = ids.get(name);
    if (id === undefined) {
      id = ruleNames.length;
      if (id >= MAX_RULES) fail(at, `more than ${MAX_RULES} rules`, 'GBNF_TOO_LARGE');
      ids.set(name, id); ruleNames.push(name); rules.push(undefined); firstUse.push(at);
    }
    return id;
  };
  // a generated rule (group or repetition), named like llama.cpp's generate_symbol_id
  const generated = (base: string, at: number): number => symbol(`${base}_${ruleNames.length}`, at);
  const charClass = (negated: boolean, ranges: number[]): Element => {
    const key = (negated ? '^' : '') + ranges.join(',');
    let id = classIds.get(key);
    if (id === undefined) { id = classes.length; classes.push({ negated, ranges }); classIds.set(key, id); }
    return { t: 'char', cls: id };
  };

  function space(i: number, newlineOk: boolean): number {
    for (;;) {
      const c = src[i];
      if (c === ' ' || c === '\t') i++;
      else if (c === '#') { while (i < src.length && src[i] !== '\n' && src[i] !== '\r') i++; }
      else if (newlineOk && (c === '\n' || c === '\r')) i++;
      else return i;
    }
  }
  function nameEnd(i: number): number {
    let j = i;
    while (isWordChar(src[j])) j++;
    if (j === i) fail(i, 'expecting a rule name');
    return j;
  }
  function hex(i: number, n: number): [number, number] {
    let v = 0;
    for (let k = 0; k < n; k++) {
      const c = src[i + k];
      const d = c === undefined ? -1 : parseInt(c, 16);
      if (Number.isNaN(d) || d < 0) fail(i + k, `expecting ${n} hex digits`);
      v = v * 16 + d;
    }
    if (v > 0x10ffff) fail(i, 'code point above U+10FFFF');
    return [v, i + n];
  }
  function char(i: number): [number, number] {
    if (i >= src.length) fail(i, 'unexpected end of input');
    if (src[i] === '\\') {
      const e = src[i + 1];
      switch (e) {
        case 'x': return hex(i + 2, 2);
        case 'u': return hex(i + 2, 4);
        case 'U': return hex(i + 2, 8);
        case 't': return [9, i + 2];
        case 'r': return [13, i + 2];
        case 'n': return [10, i + 2];
        case '\\': case '"': case '[': case ']': return [e.charCodeAt(0), i + 2];
        default: return fail(i, `unknown escape "\\${e ?? ''}"`);
      }
    }
    const cp = src.codePointAt(i)!;
    return [cp, i + (cp > 0xffff ? 2 : 1)];
  }

  function repeat(out: Element[], start: number, min: number, max: number, ruleName: string, at: number): void {
    if (start === out.length) fail(at, 'expecting an item before */+/?/{');
    if (min > MAX_REPETITION || max > MAX_REPETITION) fail(at, `repetition count above ${MAX_REPETITION}`, 'GBNF_TOO_LARGE');
    if (max >= 0 && max < min) fail(at, `repetition {${min},${max}}: the maximum is below the minimum`);
    // llama.cpp's rewrite: S{m,n} -> S (m times) S'(n-m), S'(k) ::= S S'(k-1) | ; S{m,} -> S (m times) S', S' ::= S S' |
    const prev = out.slice(start);
    if (min === 0) out.length = start;
    else for (let k = 1; k < min; k++) out.push(...prev);
    const nOpt = max < 0 ? 1 : max - min;
    let last = -1;
    for (let k = 0; k < nOpt; k++) {
      const id = generated(ruleName, at);
      const alt = [...prev];
      if (k > 0 || max < 0) alt.push({ t: 'ref', rule: max < 0 ? id : last });
      rules[id] = [alt, []];
      last = id;
    }
    if (nOpt > 0) out.push({ t: 'ref', rule: last });
  }

  function int(i: number): [number, number] {
    let j = i;
    while (isDigit(src[j])) j++;
    if (j === i) fail(i, 'expecting an integer');
    const v = Number(src.slice(i, j));
    if (v > MAX_REPETITION) fail(i, `repetition count above ${MAX_REPETITION}`, 'GBNF_TOO_LARGE');
    return [v, j];
  }

  function sequence(i: number, ruleName: string, out: Element[], nested: boolean): number {
    let lastStart = out.length;
    for (;;) {
      const c = src[i];
      if (c === '"') {
        i++;
        lastStart = out.length;
        while (src[i] !== '"') {
          if (i >= src.length) fail(i, 'unexpected end of input (unterminated string)');
          let cp: number;
          [cp, i] = char(i);
          out.push(charClass(false, [cp, cp]));
        }
        i = space(i + 1, nested);
      } else if (c === '[') {
        const open = i;
        i++;
        let negated = false;
        if (src[i] === '^') { negated = true; i++; }
        const ranges: number[] = [];
        while (src[i] !== ']') {
          if (i >= src.length) fail(open, 'unexpected end of input (unterminated character class)');
          let lo: number, hi: number;
          [lo, i] = char(i);
          hi = lo;
          if (src[i] === '-' && src[i + 1] !== undefined && src[i + 1] !== ']') {
            const at = i + 1;
            [hi, i] = char(i + 1);
            if (hi < lo) fail(at, 'character range end before its start');
          }
          ranges.push(lo, hi);
        }
        lastStart = out.length;
        out.push(charClass(negated, ranges));
        i = space(i + 1, nested);
      } else if (isWordChar(c)) {
        const e = nameEnd(i);
        lastStart = out.length;
        out.push({ t: 'ref', rule: symbol(src.slice(i, e), i) });
        i = space(e, nested);
      } else if (c === '(') {
        const open = i;
        i = space(i + 1, true);
        const id = generated(ruleName, open);
        const r = alternatives(i, ruleName, true);
        rules[id] = r.alts;
        i = r.i;
        lastStart = out.length;
        out.push({ t: 'ref', rule: id });
        if (src[i] !== ')') fail(i, `expecting ")" to close the group opened at column ${lineColumn(src, open).column}`);
        i = space(i + 1, nested);
      } else if (c === '.') {
        lastStart = out.length;
        out.push(charClass(true, []));
        i = space(i + 1, nested);
      } else if (c === '*' || c === '+' || c === '?') {
        repeat(out, lastStart, c === '+' ? 1 : 0, c === '?' ? 1 : -1, ruleName, i);
        i = space(i + 1, nested);
      } else if (c === '{') {
        const at = i;
        i = space(i + 1, nested);
        let min: number, max: number;
        [min, i] = int(i);
        i = space(i, nested);
        if (src[i] === '}') max = min;
        else if (src[i] === ',') {
          i = space(i + 1, nested);
          if (isDigit(src[i])) { [max, i] = int(i); i = space(i, nested); } else max = -1;
        } else return fail(i, 'expecting "," or "}" in a repetition');
        if (src[i] !== '}') fail(i, 'expecting "}" to close the repetition');
        repeat(out, lastStart, min, max, ruleName, at);
        i = space(i + 1, nested);
      } else if (c === '<' || c === '!') {
        fail(i, 'token references (<[id]>, <token>, !) are not supported; write the text instead', 'GBNF_UNSUPPORTED');
      } else {
        return i;
      }
    }
  }

  function alternatives(i: number, ruleName: string, nested: boolean): { alts: Element[][]; i: number } {
    const alts: Element[][] = [];
    let seq: Element[] = [];
    i = sequence(i, ruleName, seq, nested);
    alts.push(seq);
    while (src[i] === '|') {
      i = space(i + 1, true);
      seq = [];
      i = sequence(i, ruleName, seq, nested);
      alts.push(seq);
    }
    return { alts, i };
  }

  let i = space(0, true);
  while (i < src.length) {
    const e = nameEnd(i);
    const name = src.slice(i, e);
    i = space(e, false);
    if (!src.startsWith('::=', i)) fail(i, `expecting "::=" after the rule name "${name}"`);
    i = space(i + 3, true);
    const id = symbol(name, e);
    const r = alternatives(i, name, false);
    rules[id] = r.alts;
    i = r.i;
    if (src[i] === '\r') i += src[i + 1] === '\n' ? 2 : 1;
    else if (src[i] === '\n') i++;
    else if (i < src.length) fail(i, `expecting a newline or the end after the rule "${name}"`);
    i = space(i, true);
  }

  for (let r = 0; r < rules.length; r++) {
    if (!rules[r]) {
      const { line, column } = lineColumn(src, firstUse[r]!);
      throw new GrammarError('GBNF_UNDEFINED', `GBNF: undefined rule "${ruleNames[r]}" referenced at line ${line}, column ${column}`, { line, column });
    }
  }
  const root = ids.get('root');
  if (root === undefined) throw new GrammarError('GBNF_NO_ROOT', 'GBNF: the grammar has no "root" rule (the start of the output)');
  const g: Grammar = { ruleNames, rules: rules as Element[][][], classes, root };
  checkLeftRecursion(g);
  return g;
}

/** Rules that can match the empty string. */
export function nullableRules(g: Grammar): boolean[] {
  const nullable = g.rules.map(() => false);
  for (let changed = true; changed;) {
    changed = false;
    g.rules.forEach((alts, r) => {
      if (nullable[r]) return;
      if (alts.some((seq) => seq.every((e) => e.t === 'ref' && nullable[e.rule]))) { nullable[r] = true; changed = true; }
    });
  }
  return nullable;
}

// A rule that can reach itself without consuming a character would make the matcher loop (llama.cpp
// rejects such grammars too).
function checkLeftRecursion(g: Grammar): void {
  const nullable = nullableRules(g);
  const left: number[][] = g.rules.map((alts) => {
    const out: number[] = [];
    for (const seq of alts) {
      for (const e of seq) {
        if (e.t !== 'ref') break;
        out.push(e.rule);
        if (!nullable[e.rule]) break;
      }
    }
    return out;
  });
  const state = new Uint8Array(g.rules.length); // 0 new, 1 on the path, 2 done
  const visit = (r: number, path: number[]): void => {
    state[r] = 1;
    path.push(r);
    for (const n of left[r]!) {
      if (state[n] === 1) {
        const cycle = path.slice(path.indexOf(n)).map((x) => g.ruleNames[x]).join(' -> ');
        throw new GrammarError('GBNF_LEFT_RECURSION', `GBNF: left recursion in rule "${g.ruleNames[n]}" (${cycle} -> ${g.ruleNames[n]}): a rule may not reach itself before matching a character`);
      }
      if (state[n] === 0) visit(n, path);
    }
    path.pop();
    state[r] = 2;
  };
  for (let r = 0; r < g.rules.length; r++) if (state[r] === 0) visit(r, []);
}

/** Whether a code point belongs to a class. */
export function classHas(c: CharClass, cp: number): boolean {
  const r = c.ranges;
  let inside = false;
  for (let k = 0; k < r.length; k += 2) if (cp >= r[k]! && cp <= r[k + 1]!) { inside = true; break; }
  return inside !== c.negated;
}

/** Whether a class holds any code point in [lo, hi]. */
export function classHasIn(c: CharClass, lo: number, hi: number): boolean {
  const r = c.ranges;
  if (!c.negated) {
    for (let k = 0; k < r.length; k += 2) if (r[k]! <= hi && lo <= r[k + 1]!) return true;
    return false;
  }
  // negated: some point of [lo, hi] is outside every range; walk the uncovered gaps
  let p = lo;
  for (let again = true; again && p <= hi;) {
    again = false;
    for (let k = 0; k < r.length; k += 2) if (r[k]! <= p && p <= r[k + 1]!) { p = r[k + 1]! + 1; again = true; }
  }
  return p <= hi;
}

/** Whether a class holds every code point in [lo, hi]. */
export function classCovers(c: CharClass, lo: number, hi: number): boolean {
  const r = c.ranges;
  if (c.negated) {
    for (let k = 0; k < r.length; k += 2) if (r[k]! <= hi && lo <= r[k + 1]!) return false;
    return true;
  }
  let p = lo;
  for (let again = true; again && p <= hi;) {
    again = false;
    for (let k = 0; k < r.length; k += 2) if (r[k]! <= p && p <= r[k + 1]!) { p = r[k + 1]! + 1; again = true; }
  }
  return p > hi;
}

/** The smallest code point in a class, or -1 when it is empty. */
export function classMin(c: CharClass): number {
  if (!c.negated) {
    let m = -1;
    for (let k = 0; k < c.ranges.length; k += 2) if (m < 0 || c.ranges[k]! < m) m = c.ranges[k]!;
    return m;
  }
  return classHasIn(c, 0, 0x10ffff) ? firstOutside(c) : -1;
}
function firstOutside(c: CharClass): number {
  let p = 0;
  for (let again = true; again;) {
    again = false;
    for (let k = 0; k < c.ranges.length; k += 2) if (c.ranges[k]! <= p && p <= c.ranges[k + 1]!) { p = c.ranges[k + 1]! + 1; again = true; }
  }
  return p;
}
