// SentencePiece-style BPE (llama.cpp's SPM tokenizer): start from UTF-8 characters, repeatedly merge the adjacent
// pair whose concatenation is a vocab token with the highest score (leftmost on ties), then emit each final
// symbol as its token, or re-split it along the merges that built it, or fall back to <0xNN> byte tokens.
import { Heap } from './heap.js';
import { TokenizerError } from './vocab.js';
import { utf8Encode } from './unicode.js';
import type { Vocab } from './vocab.js';

interface Bigram {
  left: number;
  right: number;
  score: number;
  size: number;
}

const byBigram = (a: Bigram, b: Bigram): boolean => a.score > b.score || (a.score === b.score && a.left < b.left);

const HEX = '0123456789ABCDEF';

/** Token for one byte: "<0xNN>", else the single-character token (llama_vocab::byte_to_token for SPM). */
export function spmByteToken(vocab: Vocab, byte: number): number {
  const id = vocab.tokenToId.get(`<0x${HEX[byte >> 4]}${HEX[byte & 15]}>`);
  if (id !== undefined) return id;
  const id2 = vocab.tokenToId.get(String.fromCharCode(byte));
  if (id2 !== undefined && byte < 0x80) return id2;
  throw new TokenizerError('E_TOKENIZER_BYTE', `SPM vocabulary has no token for byte 0x${byte.toString(16)}`);
}

/** Tokenize already-escaped text (spaces replaced by U+2581) and append ids to `out`. */
export function spmTokenize(vocab: Vocab, text: string, out: number[]): void {
  if (text.length === 0) return;
  // symbols: start offset (UTF-16), length, prev, next
  const starts: number[] = [];
  const lens: number[] = [];
  for (let i = 0; i < text.length; ) {
    const c = text.charCodeAt(i);
    const l = c >= 0xd800 && c <= 0xdbff && i + 1 < text.length ? 2 : 1;
    starts.push(i);
    lens.push(l);
    i += l;
  }
  const n = starts.length;
  const prev = new Int32Array(n);
  const next = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    prev[i] = i - 1;
    next[i] = i + 1 < n ? i + 1 : -1;
  }
  const queue = new Heap<Bigram>(byBigram);
  const revMerge = new Map<string, [number, number]>();
  const { tokenToId, scores } = vocab;
  const nVocab = vocab.tokens.length;

  const tryAdd = (left: number, right: number): void => {
    if (left === -1 || right === -1) return;
    const s = text.substr(starts[left]!, lens[left]! + lens[right]!);
    const id = tokenToId.get(s);
    if (id === undefined || id >= nVocab) return;
    queue.push({ left, right, score: scores[id]!, size: s.length });
    revMerge.set(s, [left, right]);
  };

  for (let i = 1; i < n; i++) tryAdd(i - 1, i);
  for (;;) {
    const b = queue.pop();
    if (b === undefined) break;
    const ln = lens[b.left]!;
    const rn = lens[b.right]!;
    if (ln === 0 || rn === 0 || ln + rn !== b.size) continue;
    lens[b.left] = ln + rn;
    lens[b.right] = 0;
    next[b.left] = next[b.right]!;
    if (next[b.right]! >= 0) prev[next[b.right]!] = b.left;
    tryAdd(prev[b.left]!, b.left);
    tryAdd(b.left, next[b.left]!);
  }

  const resegment = (sym: number): void => {
    const s = text.substr(starts[sym]!, lens[sym]!);
    const id = tokenToId.get(s);
    if (id !== undefined) {
      out.push(id);
      return;
    }
    const p = revMerge.get(s);
    if (p === undefined) {
      const bytes = utf8Encode(s);
      for (let j = 0; j < bytes.length; j++) out.push(spmByteToken(vocab, bytes[j]!));
      return;
    }
    resegment(p[0]);
    resegment(p[1]);
  };
  for (let i = 0; i !== -1; i = next[i]!) resegment(i);
}
