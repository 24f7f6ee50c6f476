// Unicode helpers with llama.cpp's semantics (src/unicode.cpp): code point flags by general category,
// the GPT-2 byte<->unicode mapping, simple lowercase, and the single-code-point NFD llama.cpp uses for WPM.
// Tables are computed lazily from the JS engine's Unicode data (llama.cpp generates its own from UnicodeData.txt).

export const FLAG_UNDEFINED = 0x0001; // Cn (unassigned)
export const FLAG_NUMBER = 0x0002; // \p{N}
export const FLAG_LETTER = 0x0004; // \p{L}
export const FLAG_SEPARATOR = 0x0008; // \p{Z}
export const FLAG_ACCENT_MARK = 0x0010; // \p{M}
export const FLAG_PUNCTUATION = 0x0020; // \p{P}
export const FLAG_SYMBOL = 0x0040; // \p{S}
export const FLAG_CONTROL = 0x0080; // \p{C} other than Cn
export const MASK_CATEGORIES = 0x00ff;
export const FLAG_WHITESPACE = 0x0100;

const MAX_CODEPOINTS = 0x110000;
let flagTable: Uint16Array | null = null;

const reN = /^\p{N}$/u;
const reL = /^\p{L}$/u;
const reZ = /^\p{Z}$/u;
const reM = /^\p{M}$/u;
const reP = /^\p{P}$/u;
const reS = /^\p{S}$/u;
const reCn = /^\p{Cn}$/u;
const reWs = /^\p{White_Space}$/u;

function computeFlags(cpt: number): number {
  const s = String.fromCodePoint(cpt);
  let f: number;
  if (reL.test(s)) f = FLAG_LETTER;
  else if (reN.test(s)) f = FLAG_NUMBER;
  else if (reP.test(s)) f = FLAG_PUNCTUATION;
  else if (reZ.test(s)) f = FLAG_SEPARATOR;
  else if (reM.test(s)) f = FLAG_ACCENT_MARK;
  else if (reS.test(s)) f = FLAG_SYMBOL;
  else if (reCn.test(s)) f = FLAG_UNDEFINED;
  else f = FLAG_CONTROL; // Cc Cf Co Cs
  if (reWs.test(s)) f |= FLAG_WHITESPACE;
  return f;
}

/** Flags of one code point; 0 for values outside the Unicode range (llama.cpp's "out of range"). */
export function cptFlags(cpt: number): number {
  if (cpt < 0 || cpt >= MAX_CODEPOINTS) return 0;
  if (flagTable === null) flagTable = new Uint16Array(MAX_CODEPOINTS);
  let f = flagTable[cpt]!;
  if (f === 0) {
    f = computeFlags(cpt);
    flagTable[cpt] = f;
  }
  return f;
}

export const isWhitespace = (cpt: number): boolean => (cptFlags(cpt) & FLAG_WHITESPACE) !== 0;
export const isLetter = (cpt: number): boolean => (cptFlags(cpt) & FLAG_LETTER) !== 0;
export const isNumber = (cpt: number): boolean => (cptFlags(cpt) & FLAG_NUMBER) !== 0;

/** Simple (single code point) lowercase mapping, as UnicodeData.txt field 13. */
export function toLowerCpt(cpt: number): number {
  if (cpt < 0x41) return cpt;
  if (cpt <= 0x5a) return cpt + 32;
  if (cpt < 0x80) return cpt;
  if (cpt === 0x130) return 0x69; // the one code point whose full lowercase has two code points
  const l = String.fromCodePoint(cpt).toLowerCase();
  const c = l.codePointAt(0)!;
  return l.length === (c > 0xffff ? 2 : 1) ? c : cpt;
}

/** llama.cpp's WPM "NFD": each code point maps to the first code point of its canonical decomposition. */
export function nfdFirst(cpt: number): number {
  if (cpt < 0xc0) return cpt;
  const d = String.fromCodePoint(cpt).normalize('NFD');
  return d.codePointAt(0)!;
}

/** Code points of a JS string; lone surrogates become U+FFFD (as invalid UTF-8 does in llama.cpp). */
export function codepoints(text: string): number[] {
  const out: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        out.push(((c - 0xd800) << 10) + (d - 0xdc00) + 0x10000);
        i++;
        continue;
      }
    }
    out.push(c >= 0xd800 && c <= 0xdfff ? 0xfffd : c);
  }
  return out;
}

export function stringFromCodepoints(cpts: ArrayLike<number>, start = 0, end = cpts.length): string {
  let s = '';
  const CHUNK = 4096;
  for (let i = start; i < end; i += CHUNK) {
    const n = Math.min(CHUNK, end - i);
    const part: number[] = new Array(n);
    for (let j = 0; j < n; j++) part[j] = cpts[i + j]!;
    s += String.fromCodePoint(...part);
  }
  return s;
}

// ---- GPT-2 byte-level mapping (bytes_to_unicode) ----

const byteToChar: string[] = new Array(256);
const charToByte = new Map<string, number>();
{
  let n = 0;
  for (let b = 0; b < 256; b++) {
    const printable = (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
    const cpt = printable ? b : 256 + n++;
    const ch = String.fromCharCode(cpt);
    byteToChar[b] = ch;
    charToByte.set(ch, b);
  }
}

export function byteToUnicodeChar(b: number): string {
  return byteToChar[b]!;
}

const utf8enc = new TextEncoder();

export function utf8Encode(s: string): Uint8Array {
  return utf8enc.encode(s);
}

/** UTF-8 bytes of `s`, each mapped to its GPT-2 printable character. */
export function byteEncode(s: string): string {
  const bytes = utf8enc.encode(s);
  let out = '';
  for (let i = 0; i < bytes.length; i++) out += byteToChar[bytes[i]!];
  return out;
}

/** Inverse of byteEncode, per character; characters outside the 256-entry table give null. */
export function unicodeCharToByte(ch: string): number | undefined {
  return charToByte.get(ch);
}
