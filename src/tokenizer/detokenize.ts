// Token -> bytes (llama_vocab::token_to_piece) and ids -> text (llama_vocab::detokenize), plus a streaming
// decoder that only emits complete UTF-8 sequences.
import { unicodeCharToByte, utf8Encode } from './unicode.js';
import { ATTR_BYTE, ATTR_CONTROL, ATTR_NORMAL, ATTR_UNKNOWN, ATTR_USER_DEFINED, type Vocab } from './vocab.js';

const ATTR_SPECIAL = ATTR_UNKNOWN | ATTR_CONTROL;

function byteOfByteToken(text: string): number {
  return parseInt(text.slice(3, 5), 16);
}

/** GPT-2 byte-level text back to bytes; characters outside the byte table keep their UTF-8 (llama.cpp prints a marker). */
function decodeByteLevel(text: string): Uint8Array {
  const out: number[] = [];
  for (const ch of text) {
    const b = unicodeCharToByte(ch);
    if (b !== undefined) out.push(b);
    else for (const x of utf8Encode(ch)) out.push(x);
  }
  return Uint8Array.from(out);
}

const EMPTY = new Uint8Array(0);

/** Raw bytes of one token's piece. With special = false, CONTROL and UNKNOWN tokens render as nothing. */
export function tokenPiece(vocab: Vocab, id: number, special: boolean): Uint8Array {
  if (id < 0 || id >= vocab.tokens.length) return EMPTY;
  const attr = vocab.attrs[id]!;
  if (!special && attr & ATTR_SPECIAL) return EMPTY;
  const text = vocab.tokens[id]!;
  if (attr & (ATTR_SPECIAL | ATTR_USER_DEFINED)) return utf8Encode(text);
  if (attr & ATTR_NORMAL) {
    if (vocab.type === 'bpe') return decodeByteLevel(text);
    return utf8Encode(text.replaceAll('\u2581', ' '));
  }
  if (attr & ATTR_BYTE) return Uint8Array.of(byteOfByteToken(text));
  return EMPTY;
}

function concat(parts: Uint8Array[]): Uint8Array {
  let n = 0;
  for (const p of parts) n += p.length;
  const out = new Uint8Array(n);
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

/** llama.cpp's clean_up_tokenization_spaces passes over the byte string. */
export function cleanSpaces(t: Uint8Array): Uint8Array {
  const SP = 0x20, Q = 0x27;
  let text = Array.from(t);
  // pass 1: " ?", " !", " .", " ,"
  {
    const n = text.length;
    let total = n ? 1 : 0;
    for (let i = 1; i < n; i++) {
      const x = text[i]!;
      if (text[i - 1] === SP && (x === 0x3f || x === 0x21 || x === 0x2e || x === 0x2c)) total--;
      text[total++] = x;
    }
    text.length = total;
  }
  // pass 2: " ' " -> "'"
  {
    const n = text.length;
    let total = n ? 1 : 0;
    for (let i = 1; i < n; i++) {
      const x = text[i]!;
      if (x === Q && i + 1 < n && text[i - 1] === SP && text[i + 1] === SP) {
        total--;
        text[++i] = 0;
      }
      text[total++] = x;
    }
    text.length = total;
    // llama.cpp writes a NUL over the skipped space and keeps going; the NUL is then copied as a byte
  }
  // pass 3: " 's", " 'm", " 're", " 've"
  {
    const n = text.length;
    let total = n ? 1 : 0;
    for (let i = 1; i < n; i++) {
      const x = text[i]!;
      if (text[i - 1] === SP && x === Q && i + 1 < n) {
        const x1 = text[i + 1]!;
        if (x1 === 0x73 || x1 === 0x6d) total--;
        else if (i + 2 < n) {
          const x2 = text[i + 2]!;
          if ((x1 === 0x72 && x2 === 0x65) || (x1 === 0x76 && x2 === 0x65)) total--;
        }
      }
      text[total++] = x;
    }
    text.length = total;
  }
  return Uint8Array.from(text);
}

export interface DetokenizeOptions {
  /** render CONTROL/UNKNOWN tokens as their text (llama.cpp unparse_special) */
  special?: boolean;
  /** drop a leading BOS / trailing EOS added by add_bos / add_eos (llama.cpp remove_special) */
  removeSpecial?: boolean;
}

export function detokenizeBytes(vocab: Vocab, ids: number[], opts: DetokenizeOptions = {}): Uint8Array {
  let list = ids;
  let removeSpace = vocab.addSpacePrefix;
  if (opts.removeSpecial && vocab.addBos && list.length > 0 && list[0] === vocab.bos) {
    removeSpace = false;
    list = list.slice(1);
  }
  if (opts.removeSpecial && vocab.addEos && list.length > 0 && list[list.length - 1] === vocab.eos) list = list.slice(0, -1);
  const parts: Uint8Array[] = [];
  for (const id of list) {
    let p = tokenPiece(vocab, id, opts.special ?? false);
    if (removeSpace && p.length > 0 && p[0] === 0x20) p = p.subarray(1);
    removeSpace = false;
    parts.push(p);
  }
  const bytes = concat(parts);
  return vocab.cleanSpaces ? cleanSpaces(bytes) : bytes;
}

const decoder = new TextDecoder('utf-8');

export function detokenize(vocab: Vocab, ids: number[], opts: DetokenizeOptions = {}): string {
  return decoder.decode(detokenizeBytes(vocab, ids, opts));
}

/**
 * Incremental detokenizer for streaming generation: push ids one at a time and get back only text made of
 * complete UTF-8 sequences; bytes of an unfinished character wait for the next token.
 */
export class StreamingDetokenizer {
  private pending: number[] = [];
  private first = true;
  constructor(
    private readonly piece: (id: number) => Uint8Array,
    private readonly opts: { stripLeadingSpace?: boolean } = {},
  ) {}

  push(id: number): string {
    let p = this.piece(id);
    if (this.first && p.length > 0) {
      this.first = false;
      if (this.opts.stripLeadingSpace && p[0] === 0x20) p = p.subarray(1);
    }
    for (const b of p) this.pending.push(b);
    return this.drain(false);
  }

  flush(): string {
    return this.drain(true);
  }

  private drain(final: boolean): string {
    const buf = this.pending;
    let end = buf.length;
    if (!final) {
      // hold back an incomplete trailing UTF-8 sequence
      let i = buf.length - 1;
      let k = 0;
      while (i >= 0 && k < 4 && (buf[i]! & 0xc0) === 0x80) { i--; k++; }
      if (i >= 0) {
        const lead = buf[i]!;
        const need = lead >= 0xf0 && lead < 0xf8 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
        if (need > 1 && buf.length - i < need) end = i;
      }
    }
    if (end === 0) return '';
    const out = decoder.decode(Uint8Array.from(buf.slice(0, end)));
    this.pending = buf.slice(end);
    return out;
  }
}
