// A regular-expression subset (JSON Schema `pattern`, ECMAScript flavour as ajv runs it) to a GBNF
// expression over the JSON-encoded string body: literals, escapes (\d \w \s and their negations,
// \t \n \r \f \v \xHH \uHHHH, escaped metacharacters), `.`, classes with ranges and negation,
// groups (capturing or (?:...)), `|`, and the quantifiers ? * + {m} {m,} {m,n} (lazy forms match
// the same strings). Anchors: `^` only at the start and `$` only at the end; a missing one means
// any text may come before/after, as llama.cpp does. Lookarounds, backreferences and other anchors
// are rejected.
//
// Characters the JSON text must escape are produced escaped: `"` as \", `\` as \\; control
// characters are never produced (a subset of the matching strings is still all valid).

import { GrammarError } from './errors.js';

type Ranges = number[]; // sorted, disjoint, inclusive pairs

const MAXCP = 0x10ffff;
const DIGIT: Ranges = [0x30, 0x39];
const WORD: Ranges = [0x30, 0x39, 0x41, 0x5a, 0x5f, 0x5f, 0x61, 0x7a];
const SPACE: Ranges = [0x09, 0x0d, 0x20, 0x20, 0xa0, 0xa0, 0x1680, 0x1680, 0x2000, 0x200a, 0x2028, 0x2029, 0x202f, 0x202f, 0x205f, 0x205f, 0x3000, 0x3000, 0xfeff, 0xfeff];
const LINE_TERMINATORS: Ranges = [0x0a, 0x0a, 0x0d, 0x0d, 0x2028, 0x2029];

function normalize(r: Ranges): Ranges {
  const pairs: [number, number][] = [];
  for (let i = 0; i < r.length; i += 2) pairs.push([r[i]!, r[i + 1]!]);
  pairs.sort((a, b) => a[0] - b[0]);
  const out: Ranges = [];
  for (const [lo, hi] of pairs) {
    if (out.length && lo <= out[out.length - 1]! + 1) out[out.length - 1] = Math.max(out[out.length - 1]!, hi);
    else out.push(lo, hi);
  }
  return out;
}
function complement(r: Ranges): Ranges {
  const n = normalize(r);
  const out: Ranges = [];
  let p = 0;
  for (let i = 0; i < n.length; i += 2) { if (n[i]! > p) out.push(p, n[i]! - 1); p = n[i + 1]! + 1; }
  if (p <= MAXCP) out.push(p, MAXCP);
  return out;
}
function intersect(a: Ranges, b: Ranges): Ranges {
  return complement([...complement(a), ...complement(b)]);
}
const has = (r: Ranges, cp: number): boolean => { for (let i = 0; i < r.length; i += 2) if (cp >= r[i]! && cp <= r[i + 1]!) return true; return false; };

const hex = (cp: number): string => (cp <= 0xff ? `\\x${cp.toString(16).padStart(2, '0')}` : cp <= 0xffff ? `\\u${cp.toString(16).padStart(4, '0')}` : `\\U${cp.toString(16).padStart(8, '0')}`);
const classChar = (cp: number): string => (/[0-9A-Za-z]/.test(String.fromCodePoint(cp)) ? String.fromCodePoint(cp) : hex(cp));

/** GBNF for one JSON-encoded character of a code-point set */
export function jsonCharSet(r: Ranges): string {
  const safe = intersect(normalize(r), complement([0x00, 0x1f, 0x22, 0x22, 0x5c, 0x5c]));
  const alts: string[] = [];
  if (safe.length) {
    let s = '[';
    for (let i = 0; i < safe.length; i += 2) s += safe[i] === safe[i + 1] ? classChar(safe[i]!) : `${classChar(safe[i]!)}-${classChar(safe[i + 1]!)}`;
    alts.push(s + ']');
  }
  if (has(r, 0x22)) alts.push('"\\\\\\""');
  if (has(r, 0x5c)) alts.push('"\\\\\\\\"');
  if (alts.length === 0) return '[^\\x00-\\U0010ffff]'; // matches nothing: the pattern needs a control character
  return alts.length === 1 ? alts[0]! : `(${alts.join(' | ')})`;
}

/** The GBNF expression matching the JSON string body (without the quotes) of strings that match `pattern`. */
export function patternToGbnf(pattern: string, path: string): string {
  let i = 0;
  const src = [...pattern];
  const fail = (msg: string): never => { throw new GrammarError('SCHEMA_UNSUPPORTED', `pattern /${pattern}/ at ${path}: ${msg} (at index ${i})`, { path }); };
  const dot = complement(LINE_TERMINATORS);

  const escape = (inClass: boolean): Ranges => {
    const c = src[i++];
    if (c === undefined) return fail('a trailing backslash');
    switch (c) {
      case 'd': return DIGIT;
      case 'D': return complement(DIGIT);
      case 'w': return WORD;
      case 'W': return complement(WORD);
      case 's': return SPACE;
      case 'S': return complement(SPACE);
      case 't': return [9, 9];
      case 'n': return [10, 10];
      case 'r': return [13, 13];
      case 'f': return [12, 12];
      case 'v': return [11, 11];
      case '0': return [0, 0];
      case 'x': case 'u': {
        const n = c === 'x' ? 2 : 4;
        const h = src.slice(i, i + n).join('');
        if (!/^[0-9a-fA-F]+$/.test(h) || h.length !== n) return fail(`\\${c} needs ${n} hex digits`);
        i += n;
        const v = parseInt(h, 16);
        return [v, v];
      }
      case 'b': if (inClass) return [8, 8]; return fail('word boundaries (\\b) are not supported');
      default:
        if (/[0-9A-Za-z]/.test(c)) return fail(`the escape \\${c} is not supported`);
        return [c.codePointAt(0)!, c.codePointAt(0)!];
    }
  };

  const bracket = (): Ranges => {
    i++; // [
    let neg = false;
    if (src[i] === '^') { neg = true; i++; }
    const r: Ranges = [];
    let first = true;
    while (src[i] !== ']' || (first && false)) {
      if (i >= src.length) fail('an unterminated character class');
      const single = (): Ranges => {
        if (src[i] === '\\') { i++; return escape(true); }
        const cp = src[i++]!.codePointAt(0)!;
        return [cp, cp];
      };
      const a = single();
      if (src[i] === '-' && src[i + 1] !== undefined && src[i + 1] !== ']') {
        i++;
        const b = single();
        if (a.length !== 2 || b.length !== 2 || a[0] !== a[1] || b[0] !== b[1]) fail('a range with a class escape as an end');
        if (b[0]! < a[0]!) fail('a character range out of order');
        r.push(a[0]!, b[0]!);
      } else r.push(...a);
      first = false;
    }
    i++; // ]
    return neg ? complement(r) : normalize(r);
  };

  // alternation := sequence ('|' sequence)*
  const alternation = (depth: number): string => {
    const alts = [sequence(depth)];
    while (src[i] === '|') { i++; alts.push(sequence(depth)); }
    return alts.length === 1 ? alts[0]! : alts.map((a) => a || '""').join(' | ');
  };
  const sequence = (depth: number): string => {
    const items: string[] = [];
    while (i < src.length && src[i] !== '|' && src[i] !== ')') {
      let atom: string;
      const c = src[i]!;
      if (c === '(') {
        i++;
        if (src[i] === '?') {
          if (src[i + 1] === ':') i += 2;
          else fail('lookarounds and named groups are not supported');
        }
        const inner = alternation(depth + 1);
        if (src[i] !== ')') fail('an unbalanced "("');
        i++;
        atom = `(${inner || '""'})`;
      } else if (c === '[') atom = jsonCharSet(bracket());
      else if (c === '.') { i++; atom = jsonCharSet(dot); }
      else if (c === '\\') {
        i++;
        if (/[1-9]/.test(src[i] ?? '')) fail('backreferences are not supported');
        atom = jsonCharSet(escape(false));
      } else if (c === '^' || c === '$') return fail('anchors are supported only at the start (^) and the end ($)');
      else if (c === '*' || c === '+' || c === '?' || c === '{') return fail(`a quantifier "${c}" with nothing to repeat`);
      else { i++; const cp = c.codePointAt(0)!; atom = jsonCharSet([cp, cp]); }
      // quantifiers
      for (;;) {
        const q = src[i];
        let suffix = '';
        if (q === '*' || q === '+' || q === '?') { i++; suffix = q; }
        else if (q === '{') {
          const m = /^\{(\d+)(,(\d*))?\}/.exec(src.slice(i).join(''));
          if (!m) break; // a literal "{"
          i += m[0].length;
          const lo = Number(m[1]);
          const hi = m[2] === undefined ? lo : m[3] === '' ? -1 : Number(m[3]);
          if (hi >= 0 && hi < lo) fail('a quantifier {m,n} with n < m');
          if (lo > 2000 || hi > 2000) fail('a quantifier above 2000');
          suffix = hi === lo ? `{${lo}}` : hi < 0 ? `{${lo},}` : `{${lo},${hi}}`;
        } else break;
        if (src[i] === '?') i++; // lazy: same language
        atom = `(${atom})${suffix}`;
      }
      items.push(atom);
    }
    return items.join(' ');
  };

  const anyText = `${jsonCharSet(dot)}*`;
  let head = anyText, tail = anyText;
  if (src[0] === '^') { i = 1; head = ''; }
  let end = src.length;
  if (src[end - 1] === '$' && src[end - 2] !== '\\') { end--; tail = ''; src.length = end; }
  const body = alternation(0);
  if (i < src.length) fail('an unbalanced ")"');
  return [head, `(${body || '""'})`, tail].filter(Boolean).join(' ');
}
