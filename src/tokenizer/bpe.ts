// Byte-level BPE (GPT-2 style, llama.cpp's llm_tokenizer_bpe): pre-tokenize, then within each pre-token merge
// adjacent symbols by merge rank (lowest first, leftmost on ties), and map the final symbols to ids.
import { Heap } from './heap.js';
import { PRE_REGEXES, preTokenize } from './bpe-pretokenize.js';
import { bpeRankKey, TokenizerError, type Vocab } from './vocab.js';

interface Bigram {
  left: number;
  right: number;
  text: string;
  rank: number;
}

const byRank = (a: Bigram, b: Bigram): boolean => a.rank < b.rank || (a.rank === b.rank && a.left < b.left);

export function bpeRegexes(vocab: Vocab): string[] {
  const r = Object.hasOwn(PRE_REGEXES, vocab.pre) ? PRE_REGEXES[vocab.pre] : undefined;
  if (!r) throw new TokenizerError('E_TOKENIZER_PRE', `no pre-tokenizer regexes for '${vocab.pre}'`);
  return r;
}

/** Merge one byte-level-encoded word, appending the resulting token ids. */
export function bpeWord(vocab: Vocab, word: string, out: number[]): void {
  const { tokenToId, bpeRanks } = vocab;
  if (vocab.ignoreMerges) {
    const id = tokenToId.get(word);
    if (id !== undefined) {
      out.push(id);
      return;
    }
  }
  // symbols are the characters of the encoded word (all in the BMP)
  const n = word.length;
  if (n === 0) return;
  const texts: string[] = new Array(n);
  const prev = new Int32Array(n);
  const next = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    texts[i] = word[i]!;
    prev[i] = i - 1;
    next[i] = i + 1 < n ? i + 1 : -1;
  }
  const queue = new Heap<Bigram>(byRank);
  const add = (left: number, right: number): void => {
    if (left === -1 || right === -1) return;
    const l = texts[left]!;
    const r = texts[right]!;
    const rank = bpeRanks.get(bpeRankKey(l, r));
    if (rank === undefined) return;
    queue.push({ left, right, text: l + r, rank });
  };
  for (let i = 1; i < n; i++) add(i - 1, i);
  for (;;) {
    const b = queue.pop();
    if (b === undefined) break;
    const l = texts[b.left]!;
    const r = texts[b.right]!;
    if (l.length === 0 || r.length === 0 || l + r !== b.text) continue;
    texts[b.left] = b.text;
    texts[b.right] = '';
    next[b.left] = next[b.right]!;
    if (next[b.right]! >= 0) prev[next[b.right]!] = b.left;
    add(prev[b.left]!, b.left);
    add(b.left, next[b.left]!);
  }
  for (let i = 0; i !== -1; i = next[i]!) {
    const s = texts[i]!;
    if (s.length === 0) continue;
    const id = tokenToId.get(s);
    if (id !== undefined) {
      out.push(id);
      continue;
    }
    // unknown symbol: emit each UTF-8 byte of it as a one-byte token when the vocab has one
    const bytes = new TextEncoder().encode(s);
    for (let j = 0; j < bytes.length; j++) {
      if (bytes[j]! < 0x80) {
        const bid = tokenToId.get(String.fromCharCode(bytes[j]!));
        if (bid !== undefined) out.push(bid);
      }
    }
  }
}

export function bpeTokenize(vocab: Vocab, regexes: string[], text: string, out: number[]): void {
  for (const w of preTokenize(text, regexes, true)) bpeWord(vocab, w, out);
}
