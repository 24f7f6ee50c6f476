// The grammar matcher: llama.cpp's parse stacks (llama_grammar_advance_stack / accept), run over UTF-8
// bytes as a lazily built automaton so a sampling step is table look-ups.
//
// A stack is a list of grammar positions still to match (top first), interned as (position, parent).
// A state is a set of stacks whose tops are terminals (or the empty stack: the grammar may end here),
// plus a partial UTF-8 character: a token may end in the middle of a character, and the next token's
// bytes complete it. As in llama.cpp, a partial character is kept only when some stack's terminal can
// match a code point it may complete to (llama_grammar_match_partial_char). Each state caches its 256
// byte transitions (-2 unknown, -1 rejected), so after warm-up advancing over a byte is one array read.
// A partial character whose every completion is valid UTF-8 and treated alike by every stack (inside a
// JSON string, any CJK character) is a "uniform" state keyed without its value, so a vocabulary full of
// multi-byte pieces does not multiply states by the thousands of possible prefixes.
//
// Every state also knows the fewest bytes that complete the grammar from it (dist), from the static
// shortest completion of every grammar position: the generation budget rule uses it.

import { GrammarError } from './errors.js';
import { classCovers, classHas, classHasIn, classMin, type Grammar } from './gbnf.js';

const END = 0, CHAR = 1, REF = 2;
export const REJECT = -1;
const UNKNOWN = -2;
/** an ambiguous grammar may multiply stacks: past this a state is refused with a typed error */
const MAX_STACKS_PER_STATE = 20_000;
const MIN_CP = [0, 0, 0x80, 0x800, 0x10000];

const utf8Len = (cp: number): number => (cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4);

/** A grammar flattened to positions: each alternative is a run of elements closed by END. */
export interface FlatGrammar {
  kind: Uint8Array;
  arg: Int32Array;
  /** alternatives of rule r: altPos[altOff[r] .. altOff[r+1]) */
  altOff: Int32Array;
  altPos: Int32Array;
  /** fewest bytes from a position to the end of its alternative (Infinity: cannot finish) */
  rest: Float64Array;
  /** fewest bytes of the character at a CHAR position */
  charBytes: Uint8Array;
  grammar: Grammar;
}

export function flatten(g: Grammar): FlatGrammar {
  let n = 0;
  for (const alts of g.rules) for (const seq of alts) n += seq.length + 1;
  const kind = new Uint8Array(n + 1), arg = new Int32Array(n + 1);
  const altOff = new Int32Array(g.rules.length + 1);
  const altPos: number[] = [];
  let p = 0;
  g.rules.forEach((alts, r) => {
    altOff[r] = altPos.length;
    for (const seq of alts) {
      altPos.push(p);
      for (const e of seq) { kind[p] = e.t === 'char' ? CHAR : REF; arg[p] = e.t === 'char' ? e.cls : e.rule; p++; }
      kind[p] = END; p++;
    }
  });
  altOff[g.rules.length] = altPos.length;
  kind[p] = END;
  const clsBytes = g.classes.map((c) => { const m = classMin(c); return m < 0 ? Infinity : utf8Len(m); });
  const charBytes = new Uint8Array(n + 1);
  for (let i = 0; i < n; i++) if (kind[i] === CHAR) charBytes[i] = Math.min(4, clsBytes[arg[i]!]!);
  // shortest completions: a fixed point over rules (Bellman-Ford style; rules that cannot finish stay Infinity)
  const ruleMin = new Float64Array(g.rules.length).fill(Infinity);
  const rest = new Float64Array(n + 1);
  const ap = Int32Array.from(altPos);
  const computeRest = () => {
    for (let r = 0; r < g.rules.length; r++) {
      for (let a = altOff[r]!; a < altOff[r + 1]!; a++) {
        let e = ap[a]!;
        while (kind[e] !== END) e++;
        rest[e] = 0;
        for (let q = e - 1; q >= ap[a]!; q--) rest[q] = rest[q + 1]! + (kind[q] === CHAR ? clsBytes[arg[q]!]! : ruleMin[arg[q]!]!);
      }
    }
  };
  for (let changed = true; changed;) {
    changed = false;
    computeRest();
    for (let r = 0; r < g.rules.length; r++) {
      let m = Infinity;
      for (let a = altOff[r]!; a < altOff[r + 1]!; a++) m = Math.min(m, rest[ap[a]!]!);
      if (m < ruleMin[r]!) { ruleMin[r] = m; changed = true; }
    }
  }
  return { kind, arg, altOff, altPos: ap, rest, charBytes, grammar: g };
}

export class GrammarMatcher {
  readonly flat: FlatGrammar;
  /** byte transitions, trans[state * 256 + byte]: a state id, REJECT, or UNKNOWN (computed on demand) */
  trans: Int32Array;
  /** per state: fewest bytes to a complete match */
  dist: Float64Array;
  nStates = 0;
  initial: number;

  // stacks
  private stPos = new Int32Array(1024);
  private stParent = new Int32Array(1024);
  private stDist = new Float64Array(1024);
  private nStacks = 1; // 0 is the empty stack
  private stackIds = new Map<number, number>();
  private expanded = new Map<number, number[]>();
  // states
  private sStacks: Int32Array[] = [];
  private sValue = new Int32Array(256);
  private sRemain = new Int8Array(256);
  private sLen = new Int8Array(256);
  private stateIds = new Map<string, number>();
  private readonly scratch = new Set<number>();

  constructor(g: Grammar) {
    this.flat = flatten(g);
    this.trans = new Int32Array(256 * 256).fill(UNKNOWN);
    this.dist = new Float64Array(256);
    this.stPos[0] = -1;
    this.initial = this.start();
    if (!Number.isFinite(this.dist[this.initial]!)) throw new GrammarError('GRAMMAR_BUDGET', 'the grammar can never complete: every path from root recurses forever or needs an empty character class');
  }

  private start(): number {
    const s = this.scratch;
    s.clear();
    const f = this.flat;
    for (let a = f.altOff[f.grammar.root]!; a < f.altOff[f.grammar.root + 1]!; a++) {
      const p = f.altPos[a]!;
      this.expand(f.kind[p] === END ? 0 : this.stack(p, 0), s);
    }
    return this.state(s, 0, 0, 0);
  }

  /** the state after one byte, or REJECT */
  step(state: number, byte: number): number {
    const t = this.trans[state * 256 + byte]!;
    return t !== UNKNOWN ? t : this.compute(state, byte);
  }

  /** the state after a byte string, or REJECT */
  walk(state: number, bytes: Uint8Array, from = 0, to = bytes.length): number {
    for (let i = from; i < to && state >= 0; i++) {
      const t = this.trans[state * 256 + bytes[i]!]!;
      state = t !== UNKNOWN ? t : this.compute(state, bytes[i]!);
    }
    return state;
  }

  /** the grammar may end here (an empty stack, no partial character) */
  isComplete(state: number): boolean {
    return this.sRemain[state] === 0 && this.sStacks[state]![0] === 0;
  }

  /** the grammar has ended and can accept nothing more */
  isDone(state: number): boolean {
    const st = this.sStacks[state]!;
    return this.sRemain[state] === 0 && st.length === 1 && st[0] === 0;
  }

  /** drops every cached state and stack but `keep` (re-interned); returns keep's new id */
  compact(keep: number): number {
    const stacks = [...this.sStacks[keep]!].map((id) => this.positions(id));
    const v = this.sValue[keep]!, r = this.sRemain[keep]!, len = this.sLen[keep]!;
    this.nStacks = 1; this.stackIds.clear(); this.expanded.clear();
    this.nStates = 0; this.sStacks = []; this.stateIds.clear();
    this.trans.fill(UNKNOWN);
    this.initial = this.start();
    const s = new Set<number>();
    for (const ps of stacks) { let id = 0; for (let k = ps.length - 1; k >= 0; k--) id = this.stack(ps[k]!, id); s.add(id); }
    return this.state(s, v, r, len);
  }

  get size(): { states: number; stacks: number } { return { states: this.nStates, stacks: this.nStacks }; }

  private positions(id: number): number[] {
    const out: number[] = [];
    for (; id !== 0; id = this.stParent[id]!) out.push(this.stPos[id]!);
    return out;
  }

  private stack(pos: number, parent: number): number {
    const key = pos * 4294967296 + parent;
    let id = this.stackIds.get(key);
    if (id !== undefined) return id;
    id = this.nStacks++;
    if (id >= this.stPos.length) {
      const grow = <T extends Int32Array | Float64Array>(a: T): T => { const b = new (a.constructor as new (n: number) => T)(a.length * 2); b.set(a); return b; };
      this.stPos = grow(this.stPos); this.stParent = grow(this.stParent); this.stDist = grow(this.stDist);
    }
    this.stPos[id] = pos; this.stParent[id] = parent;
    this.stDist[id] = this.flat.rest[pos]! + this.stDist[parent]!;
    this.stackIds.set(key, id);
    return id;
  }

  // llama_grammar_advance_stack: resolve rule references until every stack's top is a terminal
  private expand(id: number, out: Set<number>): void {
    if (id === 0) { out.add(0); return; }
    const f = this.flat;
    const pos = this.stPos[id]!;
    if (f.kind[pos] === CHAR) { out.add(id); return; }
    let list = this.expanded.get(id);
    if (!list) {
      const acc = new Set<number>();
      const parent = this.stParent[id]!;
      const base = f.kind[pos + 1] === END ? parent : this.stack(pos + 1, parent);
      const r = f.arg[pos]!;
      for (let a = f.altOff[r]!; a < f.altOff[r + 1]!; a++) {
        const p = f.altPos[a]!;
        this.expand(f.kind[p] === END ? base : this.stack(p, base), acc);
        if (acc.size > MAX_STACKS_PER_STATE) throw new GrammarError('GRAMMAR_STACK_LIMIT', `the grammar is too ambiguous: more than ${MAX_STACKS_PER_STATE} parse stacks at once (rule "${f.grammar.ruleNames[r]}")`);
      }
      list = [...acc];
      this.expanded.set(id, list);
    }
    for (const x of list) out.add(x);
  }

  private state(set: Set<number>, value: number, remain: number, len: number): number {
    const ids = Int32Array.from(set).sort();
    if (ids.length > MAX_STACKS_PER_STATE) throw new GrammarError('GRAMMAR_STACK_LIMIT', `the grammar is too ambiguous: more than ${MAX_STACKS_PER_STATE} parse stacks at once`);
    const key = len === 0 && remain > 0 ? `${remain}:u:${ids.join(',')}` : `${remain}:${len}:${value}:${ids.join(',')}`;
    const hit = this.stateIds.get(key);
    if (hit !== undefined) return hit;
    const id = this.nStates++;
    if (id >= this.sValue.length) {
      const n = this.sValue.length * 2;
      const v = new Int32Array(n); v.set(this.sValue); this.sValue = v;
      const r = new Int8Array(n); r.set(this.sRemain); this.sRemain = r;
      const l = new Int8Array(n); l.set(this.sLen); this.sLen = l;
      const d = new Float64Array(n); d.set(this.dist); this.dist = d;
    }
    if ((id + 1) * 256 > this.trans.length) {
      const t = new Int32Array(this.trans.length * 2).fill(UNKNOWN);
      t.set(this.trans);
      this.trans = t;
    }
    this.sStacks.push(ids);
    this.sValue[id] = value; this.sRemain[id] = remain; this.sLen[id] = len;
    let d = Infinity;
    const f = this.flat;
    for (const s of ids) {
      const x = remain === 0 ? this.stDist[s]! : remain + this.stDist[s]! - f.charBytes[this.stPos[s]!]!;
      if (x < d) d = x;
    }
    this.dist[id] = d;
    this.stateIds.set(key, id);
    return id;
  }

  private compute(state: number, b: number): number {
    const remain = this.sRemain[state]!;
    let next: number;
    if (remain === 0) {
      if (b < 0x80) next = this.advance(state, b);
      else if (b >= 0xc2 && b < 0xe0) next = this.partial(state, b & 0x1f, 1, 2);
      else if (b >= 0xe0 && b < 0xf0) next = this.partial(state, b & 0x0f, 2, 3);
      else if (b >= 0xf0 && b < 0xf5) next = this.partial(state, b & 0x07, 3, 4);
      else next = REJECT; // a continuation byte without a lead, an overlong lead, or past U+10FFFF
    } else if ((b & 0xc0) !== 0x80) {
      next = REJECT;
    } else if (this.sLen[state] === 0) {
      // uniform: the continuation byte cannot change the outcome; sValue is a representative code point
      const rep = this.sValue[state]!;
      next = remain > 1 ? this.state(new Set(this.sStacks[state]!), rep, remain - 1, 0) : this.advance(state, rep);
    } else {
      const v = (this.sValue[state]! << 6) | (b & 0x3f);
      const len = this.sLen[state]!;
      if (remain > 1) next = this.partial(state, v, remain - 1, len);
      else next = v < MIN_CP[len]! || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff) ? REJECT : this.advance(state, v);
    }
    // the state tables may have grown while computing
    this.trans[state * 256 + b] = next;
    return next;
  }

  // llama_grammar_accept: the stacks whose terminal matches cp move past it
  private advance(state: number, cp: number): number {
    const f = this.flat;
    const out = new Set<number>();
    for (const s of this.sStacks[state]!) {
      if (s === 0) continue;
      const pos = this.stPos[s]!;
      if (!classHas(f.grammar.classes[f.arg[pos]!]!, cp)) continue;
      const parent = this.stParent[s]!;
      this.expand(f.kind[pos + 1] === END ? parent : this.stack(pos + 1, parent), out);
    }
    return out.size === 0 ? REJECT : this.state(out, 0, 0, 0);
  }

  // a character in progress: keep the stacks whose terminal can match some completion of it
  private partial(state: number, value: number, remain: number, len: number): number {
    const lo0 = value << (6 * remain);
    const hi0 = lo0 | ((1 << (6 * remain)) - 1);
    const lo = Math.max(lo0, MIN_CP[len]!);
    const hi = Math.min(hi0, 0x10ffff);
    if (lo > hi) return REJECT;
    // every completion is a valid scalar value: no overlong form, nothing past U+10FFFF, no surrogate
    let uniform = lo === lo0 && hi === hi0 && (hi < 0xd800 || lo > 0xdfff);
    const f = this.flat;
    const out = new Set<number>();
    for (const s of this.sStacks[state]!) {
      if (s === 0) continue;
      const cls = f.grammar.classes[f.arg[this.stPos[s]!]!]!;
      if (!classHasIn(cls, lo, hi)) continue;
      out.add(s);
      if (uniform && !classCovers(cls, lo, hi)) uniform = false;
    }
    if (out.size === 0) return REJECT;
    return uniform ? this.state(out, lo, remain, 0) : this.state(out, value, remain, len);
  }
}
