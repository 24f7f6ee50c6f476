// Hugging Face tokenizer.json (+ tokenizer_config.json) -> GGUF tokenizer metadata, following what llama.cpp's
// convert_hf_to_gguf.py writes for the vocab:
//  - byte-level BPE (GPT-2 / Llama 3 / Qwen): tokenizer.ggml.model = "gpt2", tokens as stored in the BPE vocab,
//    merges, token types (added tokens: CONTROL when special or special-looking, else USER_DEFINED), and a
//    tokenizer.ggml.pre chosen from the pre-tokenizer regex (llama.cpp picks it by hashing a tokenization of a
//    probe text; the regex identifies the same families);
//  - SentencePiece-style BPE with byte fallback (Gemma, Llama 2 HF exports): tokenizer.ggml.model = "llama",
//    with scores that reproduce the merge order (a merged piece scores minus the rank of the first merge that
//    makes it), <0xNN> pieces typed BYTE.
import type { GgufWriteValue } from '../gguf/writer.js';
import { TokenizerError } from './vocab.js';

interface HfAddedToken {
  id: number;
  content: string;
  special?: boolean;
  normalized?: boolean;
  lstrip?: boolean;
  rstrip?: boolean;
}

interface HfTokenizerJson {
  added_tokens?: HfAddedToken[];
  normalizer?: unknown;
  pre_tokenizer?: unknown;
  post_processor?: unknown;
  decoder?: unknown;
  model: {
    type?: string;
    vocab: Record<string, number>;
    merges?: (string | [string, string])[];
    byte_fallback?: boolean;
    ignore_merges?: boolean;
    unk_token?: string | null;
  };
}

type TokenRef = string | { content?: string } | null | undefined;

interface HfTokenizerConfig {
  bos_token?: TokenRef;
  eos_token?: TokenRef;
  unk_token?: TokenRef;
  pad_token?: TokenRef;
  sep_token?: TokenRef;
  cls_token?: TokenRef;
  mask_token?: TokenRef;
  add_bos_token?: boolean;
  add_eos_token?: boolean;
  chat_template?: string | { name: string; template: string }[];
}

export interface ConvertOptions {
  /** override the detected tokenizer.ggml.pre */
  pre?: string;
  /** general.architecture to write (default: llama) */
  arch?: string;
  name?: string;
}

export interface ConvertResult {
  metadata: [string, GgufWriteValue][];
  kind: 'bpe' | 'spm';
  pre: string;
  nTokens: number;
}

const TOKEN_TYPE = { NORMAL: 1, UNKNOWN: 2, CONTROL: 3, USER_DEFINED: 4, UNUSED: 5, BYTE: 6 } as const;

/** llama.cpp's does_token_look_special */
export function looksSpecial(t: string): boolean {
  return (
    t === '<pad>' || t === '<mask>' || t === '<2mass>' || t === '[@BOS@]' ||
    (t.startsWith('<|') && t.endsWith('|>')) ||
    (t.startsWith('<｜') && t.endsWith('｜>')) ||
    (t.startsWith('<unused') && t.endsWith('>'))
  );
}

function collect(node: unknown, type: string, out: Record<string, unknown>[] = []): Record<string, unknown>[] {
  if (node && typeof node === 'object') {
    const o = node as Record<string, unknown>;
    if (o.type === type) out.push(o);
    for (const v of Object.values(o)) if (v && typeof v === 'object') collect(v, type, out);
  }
  return out;
}

const PRE_BY_REGEX: [string, string][] = [
  ["(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+", 'llama-bpe'],
  ["(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+", 'qwen2'],
  ["'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+", 'gpt-2'],
  ["'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)", 'gpt-2'],
];

/** Pick tokenizer.ggml.pre from the pre-tokenizer description. */
export function detectPre(json: HfTokenizerJson): string {
  const splits = collect(json.pre_tokenizer, 'Split');
  const regexes = splits.map((s) => (s.pattern as { Regex?: string } | undefined)?.Regex).filter((r): r is string => !!r);
  const digits = collect(json.pre_tokenizer, 'Digits');
  const byteLevel = collect(json.pre_tokenizer, 'ByteLevel');
  for (const [re, pre] of PRE_BY_REGEX) {
    if (regexes.includes(re)) {
      if (pre === 'gpt-2' && digits.some((d) => d.individual_digits)) return 'starcoder';
      return pre;
    }
  }
  if (regexes.length === 0 && byteLevel.some((b) => b.use_regex !== false)) {
    return digits.some((d) => d.individual_digits) ? 'starcoder' : 'gpt-2';
  }
  throw new TokenizerError('E_CONVERT_PRE', `cannot tell the pre-tokenizer type from tokenizer.json (regexes: ${JSON.stringify(regexes)}); pass --pre`);
}

function tokenContent(t: TokenRef): string | undefined {
  if (t === null || t === undefined) return undefined;
  if (typeof t === 'string') return t;
  return t.content;
}

export function convertHfTokenizer(json: HfTokenizerJson, config: HfTokenizerConfig = {}, opts: ConvertOptions = {}): ConvertResult {
  const model = json.model;
  if (!model || (model.type !== undefined && model.type !== 'BPE') || !model.vocab) {
    throw new TokenizerError('E_CONVERT_MODEL', `only BPE tokenizer.json models are supported (got ${model?.type})`);
  }
  const byteLevel = collect(json.pre_tokenizer, 'ByteLevel').length > 0 || collect(json.decoder, 'ByteLevel').length > 0;
  const kind: 'bpe' | 'spm' = byteLevel ? 'bpe' : 'spm';
  if (kind === 'spm' && !model.byte_fallback) {
    throw new TokenizerError('E_CONVERT_MODEL', 'BPE tokenizer.json is neither byte-level nor SentencePiece-style with byte fallback');
  }

  // id -> token text
  const byId = new Map<number, string>();
  for (const [t, id] of Object.entries(model.vocab)) byId.set(id, t);
  const added = new Map<number, HfAddedToken>();
  for (const a of json.added_tokens ?? []) {
    added.set(a.id, a);
    byId.set(a.id, a.content);
  }
  let n = 0;
  for (const id of byId.keys()) n = Math.max(n, id + 1);

  const merges: string[] = (model.merges ?? []).map((m) => (Array.isArray(m) ? `${m[0]} ${m[1]}` : m));

  // SPM-style scores: minus the rank of the first merge that produces the piece
  let firstRank: Map<string, number> | null = null;
  if (kind === 'spm') {
    firstRank = new Map();
    for (let r = 0; r < merges.length; r++) {
      const m = merges[r]!;
      const p = m.indexOf(' ', 1);
      const piece = m.slice(0, p) + m.slice(p + 1);
      if (!firstRank.has(piece)) firstRank.set(piece, r);
    }
  }

  const tokens: string[] = new Array(n);
  const types = new Int32Array(n);
  const scores = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    const t = byId.get(i);
    if (t === undefined) {
      tokens[i] = `[PAD${i}]`;
      types[i] = TOKEN_TYPE.UNUSED;
      continue;
    }
    const a = added.get(i);
    let text = t;
    let type: number = TOKEN_TYPE.NORMAL;
    if (a) {
      if (a.special || looksSpecial(t)) type = TOKEN_TYPE.CONTROL;
      else {
        type = TOKEN_TYPE.USER_DEFINED;
        text = text.replaceAll('\u2581', ' ');
      }
    } else if (kind === 'spm' && /^<0x[0-9A-Fa-f]{2}>$/.test(t)) {
      type = TOKEN_TYPE.BYTE;
    } else if (kind === 'spm' && t === (model.unk_token ?? '<unk>')) {
      type = TOKEN_TYPE.UNKNOWN;
    }
    tokens[i] = text;
    types[i] = type;
    if (firstRank) {
      const r = firstRank.get(t);
      scores[i] = type === TOKEN_TYPE.NORMAL ? (r === undefined ? 0 : -(r + 1)) : 0;
    }
  }

  const idOf = (ref: TokenRef): number | undefined => {
    const c = tokenContent(ref);
    if (c === undefined) return undefined;
    for (const a of json.added_tokens ?? []) if (a.content === c) return a.id;
    return Object.hasOwn(model.vocab, c) ? model.vocab[c] : undefined;
  };

  const pre = opts.pre ?? (kind === 'bpe' ? detectPre(json) : 'default');
  const md: [string, GgufWriteValue][] = [];
  md.push(['general.architecture', { type: 'string', value: opts.arch ?? 'llama' }]);
  if (opts.name) md.push(['general.name', { type: 'string', value: opts.name }]);
  md.push(['tokenizer.ggml.model', { type: 'string', value: kind === 'bpe' ? 'gpt2' : 'llama' }]);
  md.push(['tokenizer.ggml.pre', { type: 'string', value: pre }]);
  md.push(['tokenizer.ggml.tokens', { type: 'array', itemType: 'string', value: tokens }]);
  if (kind === 'spm') md.push(['tokenizer.ggml.scores', { type: 'array', itemType: 'f32', value: scores }]);
  md.push(['tokenizer.ggml.token_type', { type: 'array', itemType: 'i32', value: types }]);
  if (kind === 'bpe') md.push(['tokenizer.ggml.merges', { type: 'array', itemType: 'string', value: merges }]);

  const ids: [string, TokenRef][] = [
    ['bos_token_id', config.bos_token], ['eos_token_id', config.eos_token], ['unknown_token_id', config.unk_token],
    ['seperator_token_id', config.sep_token], ['padding_token_id', config.pad_token],
  ];
  if (kind === 'spm' && config.unk_token === undefined && model.unk_token) ids.push(['unknown_token_id', model.unk_token]);
  // Qwen-style configs leave bos_token null; llama.cpp's GGUFs of those models carry <|endoftext|> as BOS
  if (kind === 'bpe' && idOf(config.bos_token) === undefined && !Object.hasOwn(model.vocab, '<|endoftext|>')) {
    const eot = (json.added_tokens ?? []).find((a) => a.content === '<|endoftext|>');
    if (eot) ids[0] = ['bos_token_id', eot.content];
  }
  for (const [key, ref] of ids) {
    const id = idOf(ref);
    if (id !== undefined) md.push([`tokenizer.ggml.${key}`, { type: 'u32', value: id }]);
  }

  // add_bos / add_eos: tokenizer_config first, else the post-processor template
  let addBos = config.add_bos_token;
  let addEos = config.add_eos_token;
  const tp = collect(json.post_processor, 'TemplateProcessing')[0];
  if (tp && Array.isArray(tp.single)) {
    const single = tp.single as Record<string, unknown>[];
    if (addBos === undefined) addBos = single.length > 0 && 'SpecialToken' in single[0]!;
    if (addEos === undefined) addEos = single.length > 1 && 'SpecialToken' in single[single.length - 1]!;
  }
  if (addBos !== undefined && (addBos === false || idOf(config.bos_token) !== undefined)) md.push(['tokenizer.ggml.add_bos_token', { type: 'bool', value: addBos }]);
  if (addEos !== undefined && (addEos === false || idOf(config.eos_token) !== undefined)) md.push(['tokenizer.ggml.add_eos_token', { type: 'bool', value: addEos }]);
  if (kind === 'spm') {
    const prepend = collect(json.normalizer, 'Prepend').length > 0 || collect(json.pre_tokenizer, 'Metaspace').some((m) => m.prepend_scheme !== 'never' && m.add_prefix_space !== false);
    md.push(['tokenizer.ggml.add_space_prefix', { type: 'bool', value: prepend }]);
  }
  let tmpl: string | undefined;
  if (typeof config.chat_template === 'string') tmpl = config.chat_template;
  else if (Array.isArray(config.chat_template)) tmpl = config.chat_template.find((t) => t.name === 'default')?.template ?? config.chat_template[0]?.template;
  if (tmpl) md.push(['tokenizer.chat_template', { type: 'string', value: tmpl }]);

  return { metadata: md, kind, pre, nTokens: n };
}

/** The converted keys as a metadata map (what tokenizerFromGguf reads), without writing a file. */
export function metadataMap(md: [string, GgufWriteValue][]): Map<string, unknown> {
  const m = new Map<string, unknown>();
  for (const [k, v] of md) m.set(k, v.value);
  return m;
}
