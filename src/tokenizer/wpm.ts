// WordPiece (BERT) as llama.cpp does it: normalize (lowercase, strip accents with its first-code-point NFD),
// split on whitespace and punctuation, then greedy longest-match of "▁word" against the vocab (the GGUF
// converter stores word-initial pieces with a ▁ prefix and continuation pieces bare). A word that cannot be
// fully matched becomes [UNK].
import {
  FLAG_ACCENT_MARK, FLAG_CONTROL, FLAG_PUNCTUATION, FLAG_SYMBOL, FLAG_WHITESPACE, codepoints, cptFlags, nfdFirst,
  toLowerCpt, utf8Encode,
} from './unicode.js';
import type { Vocab } from './vocab.js';

function isChineseChar(c: number): boolean {
  return (c >= 0x4e00 && c <= 0x9fff) || (c >= 0x3400 && c <= 0x4dbf) || (c >= 0x20000 && c <= 0x2a6df) ||
    (c >= 0x2a700 && c <= 0x2b73f) || (c >= 0x2b740 && c <= 0x2b81f) || (c >= 0x2b920 && c <= 0x2ceaf) ||
    (c >= 0xf900 && c <= 0xfaff) || (c >= 0x2f800 && c <= 0x2fa1f);
}

export function wpmPreprocess(text: string, lowercase = true, stripAccents = true): string[] {
  let cpts = codepoints(text);
  if (stripAccents) cpts = cpts.map(nfdFirst);
  const words: string[] = [''];
  for (const c of cpts) {
    const f = cptFlags(c);
    if (f & FLAG_WHITESPACE) {
      if (words[words.length - 1]!.length) words.push('');
      continue;
    }
    if (c === 0 || c === 0xfffd || f & FLAG_CONTROL) continue;
    if (stripAccents && f & FLAG_ACCENT_MARK) continue;
    const s = String.fromCodePoint(lowercase ? toLowerCpt(c) : c);
    if (f & FLAG_PUNCTUATION || (c < 0x7f && f & FLAG_SYMBOL) || isChineseChar(c)) {
      if (words[words.length - 1]!.length) words.push('');
      words[words.length - 1] = s;
      words.push('');
    } else {
      words[words.length - 1] += s;
    }
  }
  if (!words[words.length - 1]!.length) words.pop();
  return words;
}

export function wpmTokenize(vocab: Vocab, text: string, out: number[]): void {
  const unk = vocab.unk;
  for (const word of wpmPreprocess(text)) {
    if (word.length === 0) continue;
    const w = codepoints('\u2581' + word);
    const blen = w.map((c) => utf8Encode(String.fromCodePoint(c)).length);
    const n = w.length;
    const start = out.length;
    for (let i = 0; i < n; ) {
      // longest match first, limited to maxTokenLen bytes
      let j = i;
      let bytes = 0;
      while (j < n && bytes + blen[j]! <= vocab.maxTokenLen) bytes += blen[j++]!;
      let matched = -1;
      for (; j > i; j--) {
        let s = '';
        for (let k = i; k < j; k++) s += String.fromCodePoint(w[k]!);
        const id = vocab.tokenToId.get(s);
        if (id !== undefined) {
          out.push(id);
          matched = j;
          break;
        }
      }
      if (matched < 0) {
        out.length = start;
        break;
      }
      i = matched;
    }
    if (out.length === start && unk !== null) out.push(unk);
  }
}
