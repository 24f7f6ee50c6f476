// Special-token partitioning (llama.cpp tokenizer_st_partition): before the model's algorithm runs, the text is
// split around occurrences of special tokens, longest token text first. With parseSpecial = false only
// USER_DEFINED tokens are split out (CONTROL and UNKNOWN tokens stay plain text).
import { ATTR_CONTROL, ATTR_LSTRIP, ATTR_RSTRIP, ATTR_UNKNOWN, type Vocab } from './vocab.js';

/** A fragment is either raw text or a token id. */
export type Fragment = string | number;

const isCSpace = (c: number): boolean => c === 0x20 || (c >= 0x09 && c <= 0x0d);

export function partitionSpecial(vocab: Vocab, text: string, parseSpecial: boolean): Fragment[] {
  if (text.length === 0) return [];
  let frags: Fragment[] = [text];
  for (const id of vocab.specialCache) {
    const attr = vocab.attrs[id]!;
    if (!parseSpecial && attr & (ATTR_CONTROL | ATTR_UNKNOWN)) continue;
    const tok = vocab.tokens[id]!;
    let changed = false;
    const next: Fragment[] = [];
    for (const f of frags) {
      if (typeof f !== 'string' || f.indexOf(tok) < 0) {
        next.push(f);
        continue;
      }
      changed = true;
      let base = 0;
      let end = f.length;
      for (;;) {
        const m = f.indexOf(tok, base);
        if (m < 0 || m + tok.length > end) {
          if (base < end) next.push(f.slice(base, end));
          break;
        }
        if (m > base) {
          let len = m - base;
          if (attr & ATTR_LSTRIP) while (len > 0 && isCSpace(f.charCodeAt(base + len - 1))) len--;
          if (len > 0) next.push(f.slice(base, base + len));
        }
        next.push(id);
        base = m + tok.length;
        if (base < end) {
          if (attr & ATTR_RSTRIP) while (base < end && isCSpace(f.charCodeAt(base))) base++;
          if (base >= end) break;
        } else break;
      }
    }
    if (changed) frags = next;
  }
  return frags;
}
