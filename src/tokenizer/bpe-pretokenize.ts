// BPE pre-tokenization: the regex list per tokenizer.ggml.pre, applied the way llama.cpp's unicode_regex_split
// does it. Each regex further splits the pieces left by the previous one (text between matches becomes its own
// piece). The GPT-2 and Llama-3 regexes run as hand-written scanners over Unicode flags (as llama.cpp's custom
// splitters do); every other regex runs on a "collapsed" text where each non-ASCII code point is replaced by a
// proxy character for its category, so \p{L} etc. become small character classes, mirroring llama.cpp's
// std::regex fallback exactly (including its ASCII-only \s and its treatment of non-ASCII whitespace).
import {
  FLAG_ACCENT_MARK, FLAG_LETTER, FLAG_NUMBER, FLAG_PUNCTUATION, FLAG_SYMBOL, FLAG_WHITESPACE, MASK_CATEGORIES,
  byteEncode, codepoints, cptFlags, stringFromCodepoints, toLowerCpt,
} from './unicode.js';

const GPT2_RE = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)";
const LLAMA3_RE =
  "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const LLAMA3_RE_ORIG =
  "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const QWEN2_RE =
  "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

/** Regexes per canonical pre-tokenizer type (see vocab.ts bpePreInfo), as in llama.cpp's llm_tokenizer_bpe. */
export const PRE_REGEXES: Record<string, string[]> = {
  default: ['[\\p{P}\\$\\+<=>\\^~\\|]+', GPT2_RE, '\\p{N}+', '[0-9][0-9][0-9]'],
  llama3: [LLAMA3_RE],
  'deepseek-llm': [
    '[\r\n]',
    '\\s?[A-Za-zµÀ-ÖØ-öø-ƺƼ-ƿǄ-ʓʕ-ʯͰ-ͳͶͷͻ-ͽͿΆΈ-ΊΌΎ-ΡΣ-ϵϷ-ҁҊ-ԯԱ-ՖႠ-ჅᎠ-Ᏽᏸ-ᏽᲐ-ᲺᲽ-Ჿᴀ-ᴫᵫ-ᵷᵹ-ᶚḀ-ἕἘ-Ἕἠ-ὅὈ-Ὅὐ-ὗὙὛὝὟ-\u1F7Dᾀ-ᾴᾶ-ᾼ\u1FBEῂ-ῄῆ-ῌῐ-\u1FD3ῖ-\u1FDBῠ-Ῥῲ-ῴῶ-ῼℂℇℊ-ℓℕℙ-ℝℤ\u2126ℨ\u212A-ℭℯ-ℴℹℼ-ℿⅅ-ⅉⅎↃↄⰀ-ⱻⱾ-ⳤⳫ-ⳮⳲⳳꙀ-ꙭꚀ-ꚛꜢ-ꝯꝱ-ꞇꞋ-ꞎꭰ-ꮿﬀ-ﬆﬓ-ﬗＡ-Ｚａ-ｚ𐐀-𐑏𐒰-𐓓𐓘-𐓻𐲀-𐲲𐳀-𐳲𑢠-𑣟𞤀-𞥃]+',
    '\\s?[!-/:-~！-／：-～‘-‟　-。]+',
    '\\s+$',
    '[一-龥ࠀ-一가-퟿]+',
    '\\p{N}+',
  ],
  'deepseek-v3': [
    '\\p{N}{1,3}',
    '[一-龥぀-ゟ゠-ヿ]+',
    "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+",
  ],
  'deepseek-coder': ['[\r\n]', '\\s?\\p{L}+', '\\s?\\p{P}+', '[一-龥ࠀ-一가-퟿]+', '\\p{N}'],
  falcon: ['[\\p{P}\\$\\+<=>\\^~\\|`]+', GPT2_RE, '[0-9][0-9][0-9]'],
  starcoder: ['\\p{N}', GPT2_RE],
  gpt2: [GPT2_RE],
  qwen2: [QWEN2_RE],
  bloom: [' ?[^(\\s|.,!?…。，、।۔،)]+'],
  viking: [' ?[^(\\s|.,!?…。，、।۔،)]+', '\\p{N}'],
  chameleon: [
    '<sentinel:[0-9]+>', '(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z', '([\\t\\n]|    |  )', '\\p{N}',
    '[\\p{P}!-/:-@\\[-`{-~]', GPT2_RE,
  ],
  superbpe: ['\\p{N}+', '(?=(\\d{3})+(?!\\d))'],
  // llama.cpp's adaptation of the \p{Lu}/\p{Ll} classes: on collapsed text every non-ASCII letter is both
  // upper and lower case (as in llama.cpp)
  tekken: [
    '[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))*((?=[\\p{L}])([^A-Z]))+|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))+((?=[\\p{L}])([^A-Z]))*|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+',
  ],
  gpt4o: [
    "[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))*((?=[\\p{L}])([^A-Z]))+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))+((?=[\\p{L}])([^A-Z]))*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
  ],
  'seed-coder': [
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1}| ?[^\\s\\p{L}\\p{N}\\r\\n]+|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
  ],
};

type Offsets = number[];

// ---- custom scanners (llama.cpp unicode_regex_split_custom_gpt2 / _llama3) ----

function splitGpt2(cpts: number[], offsets: Offsets): Offsets {
  const out: Offsets = [];
  let start = 0;
  for (const offset of offsets) {
    const ini = start;
    const end = start + offset;
    start = end;
    const cpt = (p: number): number => (p >= ini && p < end ? cpts[p]! : -1);
    const flags = (p: number): number => (p >= ini && p < end ? cptFlags(cpts[p]!) : 0);
    let prevEnd = ini;
    const add = (e: number): number => {
      const len = e - prevEnd;
      if (len > 0) out.push(len);
      prevEnd = e;
      return len;
    };
    for (let pos = ini; pos < end; ) {
      const c = cpt(pos);
      const f = flags(pos);
      if (c === 0x27 && pos + 1 < end) {
        const n1 = cpt(pos + 1);
        if (n1 === 0x73 || n1 === 0x74 || n1 === 0x6d || n1 === 0x64) { pos += add(pos + 2); continue; }
        if (pos + 2 < end) {
          const n2 = cpt(pos + 2);
          if ((n1 === 0x72 && n2 === 0x65) || (n1 === 0x76 && n2 === 0x65) || (n1 === 0x6c && n2 === 0x6c)) { pos += add(pos + 3); continue; }
        }
      }
      let f2 = c === 0x20 ? flags(pos + 1) : f;
      if (f2 & FLAG_LETTER) {
        if (c === 0x20) pos++;
        while (f2 & FLAG_LETTER) f2 = flags(++pos);
        add(pos);
        continue;
      }
      if (f2 & FLAG_NUMBER) {
        if (c === 0x20) pos++;
        while (f2 & FLAG_NUMBER) f2 = flags(++pos);
        add(pos);
        continue;
      }
      if (!(f2 & (FLAG_WHITESPACE | FLAG_LETTER | FLAG_NUMBER)) && f2) {
        if (c === 0x20) pos++;
        while (!(f2 & (FLAG_WHITESPACE | FLAG_LETTER | FLAG_NUMBER)) && f2) f2 = flags(++pos);
        add(pos);
        continue;
      }
      let nws = 0;
      while (flags(pos + nws) & FLAG_WHITESPACE) nws++;
      if (nws > 1 && cpt(pos + nws) !== -1) { pos += nws - 1; add(pos); continue; }
      if (nws > 0) { pos += nws; add(pos); continue; }
      add(++pos);
    }
  }
  return out;
}

function splitLlama3(cpts: number[], offsets: Offsets): Offsets {
  const out: Offsets = [];
  let start = 0;
  for (const offset of offsets) {
    const ini = start;
    const end = start + offset;
    start = end;
    const cpt = (p: number): number => (p >= ini && p < end ? cpts[p]! : -1);
    const flags = (p: number): number => (p >= ini && p < end ? cptFlags(cpts[p]!) : 0);
    let prevEnd = ini;
    const add = (e: number): number => {
      const len = e - prevEnd;
      if (len > 0) out.push(len);
      prevEnd = e;
      return len;
    };
    for (let pos = ini; pos < end; ) {
      const c = cpt(pos);
      const f = flags(pos);
      if (c === 0x27 && pos + 1 < end) {
        const n1 = toLowerCpt(cpt(pos + 1));
        if (n1 === 0x73 || n1 === 0x74 || n1 === 0x6d || n1 === 0x64) { pos += add(pos + 2); continue; }
        if (pos + 2 < end) {
          const n2 = toLowerCpt(cpt(pos + 2));
          if ((n1 === 0x72 && n2 === 0x65) || (n1 === 0x76 && n2 === 0x65) || (n1 === 0x6c && n2 === 0x6c)) { pos += add(pos + 3); continue; }
        }
      }
      // [^\r\n\p{L}\p{N}]?\p{L}+
      if (!(c === 0x0d || c === 0x0a || f & FLAG_NUMBER)) {
        if (f & FLAG_LETTER || flags(pos + 1) & FLAG_LETTER) {
          pos++;
          while (flags(pos) & FLAG_LETTER) pos++;
          add(pos);
          continue;
        }
      }
      // \p{N}{1,3}
      if (f & FLAG_NUMBER) {
        let ini2 = pos;
        while (flags(pos) & FLAG_NUMBER) {
          if (++pos - ini2 >= 3) { add(pos); ini2 = pos; }
        }
        add(pos);
        continue;
      }
      // <space>?[^\s\p{L}\p{N}]+[\r\n]*
      let f2 = c === 0x20 ? flags(pos + 1) : f;
      if (!(f2 & (FLAG_WHITESPACE | FLAG_LETTER | FLAG_NUMBER)) && f) {
        if (c === 0x20) pos++;
        while (!(f2 & (FLAG_WHITESPACE | FLAG_LETTER | FLAG_NUMBER)) && f2) f2 = flags(++pos);
        let c2 = cpt(pos);
        while (c2 === 0x0d || c2 === 0x0a) c2 = cpt(++pos);
        add(pos);
        continue;
      }
      let nws = 0;
      let lastRN = 0;
      while (flags(pos + nws) & FLAG_WHITESPACE) {
        const c2 = cpt(pos + nws);
        if (c2 === 0x0d || c2 === 0x0a) lastRN = pos + nws + 1;
        nws++;
      }
      if (lastRN > 0) { pos = lastRN; add(pos); continue; }
      if (nws > 1 && cpt(pos + nws) !== -1) { pos += nws - 1; add(pos); continue; }
      if (nws > 0) { pos += nws; add(pos); continue; }
      add(++pos);
    }
  }
  return out;
}

// ---- general path: ECMAScript regex over collapsed or whitespace-normalized text ----

const UCAT: Record<string, { flag: number; proxy: string; ascii: string }> = {
  '\\p{N}': { flag: FLAG_NUMBER, proxy: '\u00d1', ascii: '0-9' },
  '\\p{L}': { flag: FLAG_LETTER, proxy: '\u00d2', ascii: 'A-Za-z' },
  '\\p{P}': { flag: FLAG_PUNCTUATION, proxy: '\u00d3', ascii: '!-#%-*,-/:-;?-@\\[-\\]_\\{\\}' },
  '\\p{M}': { flag: FLAG_ACCENT_MARK, proxy: '\u00d4', ascii: '' },
  '\\p{S}': { flag: FLAG_SYMBOL, proxy: '\u00d5', ascii: '\\$\\+<->\\^`\\|' },
};
const PROXY_BY_FLAG = new Map<number, string>(Object.values(UCAT).map((u) => [u.flag, u.proxy]));

const C_SPACE = '\\t\\n\\v\\f\\r ';

/** Rewrite \s and \S to C-locale (ASCII) classes, as std::regex has them. */
function asciiSpaces(re: string): string {
  let out = '';
  let inside = false;
  for (let i = 0; i < re.length; i++) {
    const ch = re[i]!;
    if (ch === '\\' && i + 1 < re.length) {
      const nx = re[i + 1]!;
      if (nx === 's') out += inside ? C_SPACE : `[${C_SPACE}]`;
      else if (nx === 'S') out += inside ? '\\S' : `[^${C_SPACE}]`;
      else out += ch + nx;
      i++;
      continue;
    }
    if (ch === '[') inside = true;
    else if (ch === ']') inside = false;
    out += ch;
  }
  return out;
}

function collapseRegex(re: string): string {
  let out = '';
  let inside = false;
  for (let i = 0; i < re.length; i++) {
    const ch = re[i]!;
    if (ch === '[' && (i === 0 || re[i - 1] !== '\\')) { out += '['; inside = true; continue; }
    if (inside && ch === ']' && re[i - 1] !== '\\') { out += ']'; inside = false; continue; }
    if (ch === '\\' && i + 4 < re.length && re[i + 1] === 'p' && re[i + 2] === '{' && re[i + 4] === '}') {
      const u = UCAT[re.slice(i, i + 5)];
      if (u) {
        out += (inside ? '' : '[') + u.proxy + u.ascii + (inside ? '' : ']');
        i += 4;
        continue;
      }
    }
    out += ch;
  }
  return out;
}

interface CompiledRegex {
  custom?: 'gpt2' | 'llama3';
  collapsed?: boolean;
  re?: RegExp;
}

const compiledCache = new Map<string, CompiledRegex>();

function compile(src: string, forceRegex = false): CompiledRegex {
  const key = forceRegex ? `regex:${src}` : src;
  let c = compiledCache.get(key);
  if (c) return c;
  if (!forceRegex && src === GPT2_RE) c = { custom: 'gpt2' };
  else if (!forceRegex && (src === LLAMA3_RE || src === LLAMA3_RE_ORIG)) c = { custom: 'llama3' };
  else if (Object.keys(UCAT).some((k) => src.includes(k))) {
    c = { collapsed: true, re: new RegExp(asciiSpaces(collapseRegex(src)), 'g') };
  } else {
    c = { collapsed: false, re: new RegExp(asciiSpaces(src), 'gu') };
  }
  compiledCache.set(key, c);
  return c;
}

function splitRegex(re: RegExp, text: string, unitToCpt: ((u: number) => number) | null, offsets: Offsets, cptStarts: number[] | null): Offsets {
  // `text` is indexed per code point when unitToCpt is null (collapsed: one UTF-16 unit per code point)
  const out: Offsets = [];
  let start = 0;
  for (const offset of offsets) {
    const sUnit = cptStarts ? cptStarts[start]! : start;
    const eUnit = cptStarts ? cptStarts[start + offset]! : start + offset;
    const chunk = text.slice(sUnit, eUnit);
    re.lastIndex = 0;
    let startIdx = 0; // in code points, relative to the chunk
    let m: RegExpExecArray | null;
    while ((m = re.exec(chunk)) !== null) {
      if (m[0].length === 0) {
        // an empty match still splits the text there (std::regex_iterator reports it)
        const ePos = unitToCpt ? unitToCpt(sUnit + m.index) - start : m.index;
        if (ePos > startIdx) {
          out.push(ePos - startIdx);
          startIdx = ePos;
        }
        re.lastIndex++;
        if (re.unicode && re.lastIndex < chunk.length) {
          const cc = chunk.charCodeAt(re.lastIndex - 1);
          if (cc >= 0xd800 && cc <= 0xdbff) re.lastIndex++;
        }
        continue;
      }
      const mPos = unitToCpt ? unitToCpt(sUnit + m.index) - start : m.index;
      const mEnd = unitToCpt ? unitToCpt(sUnit + m.index + m[0].length) - start : m.index + m[0].length;
      if (mPos > startIdx) out.push(mPos - startIdx);
      out.push(mEnd - mPos);
      startIdx = mEnd;
    }
    if (startIdx < offset) out.push(offset - startIdx);
    start += offset;
  }
  return out;
}

/** Split `text` into pre-tokens (each returned byte-level encoded, ready for BPE merges). */
export function preTokenize(text: string, regexes: string[], byteLevel = true, opts: { forceRegex?: boolean } = {}): string[] {
  const cpts = codepoints(text);
  let offsets: Offsets = [cpts.length];
  let collapsedText: string | null = null;
  let wideText: string | null = null;
  let cptStarts: number[] | null = null;
  let unitToCptTable: Int32Array | null = null;

  for (const src of regexes) {
    const c = compile(src, opts.forceRegex);
    if (c.custom === 'gpt2') { offsets = splitGpt2(cpts, offsets); continue; }
    if (c.custom === 'llama3') { offsets = splitLlama3(cpts, offsets); continue; }
    if (c.collapsed) {
      if (collapsedText === null) {
        let s = '';
        for (const cp of cpts) {
          if (cp < 128) { s += String.fromCharCode(cp); continue; }
          const f = cptFlags(cp);
          if (f & FLAG_WHITESPACE) s += '\u000b';
          else s += PROXY_BY_FLAG.get(f & MASK_CATEGORIES) ?? '\u00d0';
        }
        collapsedText = s;
      }
      offsets = splitRegex(c.re!, collapsedText, null, offsets, null);
    } else {
      if (wideText === null) {
        let s = '';
        cptStarts = new Array(cpts.length + 1);
        let u = 0;
        for (let i = 0; i < cpts.length; i++) {
          cptStarts[i] = u;
          let cp = cpts[i]!;
          if (cp > 0x7f && cptFlags(cp) & FLAG_WHITESPACE) cp = 0x0b;
          const ch = String.fromCodePoint(cp);
          s += ch;
          u += ch.length;
        }
        cptStarts[cpts.length] = u;
        unitToCptTable = new Int32Array(u + 1);
        for (let i = 0; i <= cpts.length; i++) unitToCptTable[cptStarts[i]!] = i;
        wideText = s;
      }
      const table = unitToCptTable!;
      offsets = splitRegex(c.re!, wideText, (x) => table[x]!, offsets, cptStarts);
    }
  }

  const words: string[] = [];
  let start = 0;
  for (const off of offsets) {
    const w = stringFromCodepoints(cpts, start, start + off);
    start += off;
    words.push(byteLevel ? byteEncode(w) : w);
  }
  return words;
}
