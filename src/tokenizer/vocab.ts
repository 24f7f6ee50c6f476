// Vocabulary loading from GGUF metadata (the tokenizer.ggml.* keys), with llama.cpp's defaults and
// its text-based detection of end-of-generation and FIM tokens (llama-vocab.cpp, llama_vocab::impl::load).

/** What the tokenizer needs from a GGUF file: its metadata map (satisfied by src/gguf's GgufFile). */
export interface GgufMetadataSource {
  readonly metadata: Map<string, unknown>;
}

export class TokenizerError extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.name = 'TokenizerError';
    this.code = code;
  }
}

// GGUF token types (tokenizer.ggml.token_type)
export const TOKEN_TYPE_UNDEFINED = 0;
export const TOKEN_TYPE_NORMAL = 1;
export const TOKEN_TYPE_UNKNOWN = 2;
export const TOKEN_TYPE_CONTROL = 3;
export const TOKEN_TYPE_USER_DEFINED = 4;
export const TOKEN_TYPE_UNUSED = 5;
export const TOKEN_TYPE_BYTE = 6;

// llama.cpp token attributes (bit set)
export const ATTR_UNDEFINED = 0;
export const ATTR_UNKNOWN = 1 << 0;
export const ATTR_UNUSED = 1 << 1;
export const ATTR_NORMAL = 1 << 2;
export const ATTR_CONTROL = 1 << 3;
export const ATTR_USER_DEFINED = 1 << 4;
export const ATTR_BYTE = 1 << 5;
export const ATTR_NORMALIZED = 1 << 6;
export const ATTR_LSTRIP = 1 << 7;
export const ATTR_RSTRIP = 1 << 8;
export const ATTR_SINGLE_WORD = 1 << 9;

export type VocabType = 'spm' | 'bpe' | 'wpm';

export interface Vocab {
  readonly type: VocabType;
  readonly model: string; // tokenizer.ggml.model
  readonly pre: string; // tokenizer.ggml.pre ('' when absent)
  readonly tokens: string[];
  readonly scores: Float32Array;
  readonly attrs: Uint16Array;
  readonly tokenToId: Map<string, number>;
  /** BPE merges: key `${first.length}:${first}${second}` -> rank */
  readonly bpeRanks: Map<string, number>;
  readonly maxTokenLen: number; // longest token in UTF-8 bytes (computed for WPM, which needs it; 0 otherwise)
  bos: number | null;
  eos: number | null;
  eot: number | null;
  eom: number | null;
  unk: number | null;
  sep: number | null;
  pad: number | null;
  mask: number | null;
  fimPre: number | null;
  fimSuf: number | null;
  fimMid: number | null;
  fimPad: number | null;
  fimRep: number | null;
  fimSep: number | null;
  addBos: boolean;
  addEos: boolean;
  addSep: boolean;
  addSpacePrefix: boolean;
  cleanSpaces: boolean;
  ignoreMerges: boolean;
  readonly eogIds: Set<number>;
  /** special-token partitioning candidates (CONTROL | USER_DEFINED | UNKNOWN), longest text first */
  readonly specialCache: number[];
  readonly chatTemplate: string | undefined;
  readonly name: string;
  readonly arch: string;
}

export function bpeRankKey(first: string, second: string): string {
  return `${first.length}:${first}${second}`;
}

function get(meta: Map<string, unknown>, key: string): unknown {
  return meta.get(key);
}

function getString(meta: Map<string, unknown>, key: string): string | undefined {
  const v = get(meta, key);
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw new TokenizerError('E_TOKENIZER_META', `metadata ${key}: expected a string`);
  return v;
}

function getBool(meta: Map<string, unknown>, key: string): boolean | undefined {
  const v = get(meta, key);
  if (v === undefined) return undefined;
  if (typeof v === 'boolean') return v;
  if (typeof v === 'number') return v !== 0;
  throw new TokenizerError('E_TOKENIZER_META', `metadata ${key}: expected a boolean`);
}

function getUint(meta: Map<string, unknown>, key: string): number | undefined {
  const v = get(meta, key);
  if (v === undefined) return undefined;
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  throw new TokenizerError('E_TOKENIZER_META', `metadata ${key}: expected an integer`);
}

function getNumArray(meta: Map<string, unknown>, key: string): ArrayLike<number> | undefined {
  const v = get(meta, key);
  if (v === undefined) return undefined;
  if (ArrayBuffer.isView(v) && !(v instanceof DataView)) return v as unknown as ArrayLike<number>;
  if (Array.isArray(v)) return v.map((x) => Number(x));
  throw new TokenizerError('E_TOKENIZER_META', `metadata ${key}: expected a numeric array`);
}

function getStringArray(meta: Map<string, unknown>, key: string): string[] | undefined {
  const v = get(meta, key);
  if (v === undefined) return undefined;
  if (Array.isArray(v) && v.every((x) => typeof x === 'string')) return v as string[];
  throw new TokenizerError('E_TOKENIZER_META', `metadata ${key}: expected a string array`);
}

export interface PreInfo {
  pre: string; // canonical pre-tokenizer type used by bpe-pretokenize
  ignoreMerges?: boolean;
  addBos?: boolean;
  cleanSpaces?: boolean;
}

/** tokenizer.ggml.pre -> llama.cpp pre-tokenizer type and its vocab flag overrides. */
export function bpePreInfo(pre: string): PreInfo {
  switch (pre) {
    case '':
    case 'default':
      return { pre: 'default' };
    case 'llama3': case 'llama-v3': case 'llama-bpe': case 'falcon3': case 'falcon-h1': case 'pixtral':
    case 'midm-2.0': case 'lfm2':
      return { pre: 'llama3', ignoreMerges: true, addBos: true };
    case 'dbrx': return { pre: 'llama3' };
    case 'smaug-bpe': return { pre: 'llama3' };
    case 'deepseek-llm': return { pre: 'deepseek-llm', cleanSpaces: false };
    case 'deepseek-coder': return { pre: 'deepseek-coder', cleanSpaces: false };
    case 'deepseek-v3': return { pre: 'deepseek-v3', cleanSpaces: false };
    case 'falcon': return { pre: 'falcon' };
    case 'mpt': case 'olmo': case 'jais': case 'gpt-2': case 'phi-2': case 'jina-es': case 'jina-de': case 'gigachat':
    case 'jina-v2-es': case 'jina-v2-de': case 'a.x-4.0': case 'mellum': case 'exaone4': case 'jina-v1-en':
    case 'jina-v2-code': case 'roberta-bpe': case 'trillion': case 'granite-docling':
      return { pre: 'gpt2' };
    case 'starcoder': case 'refact': case 'codeshell': case 'exaone': case 'minerva-7b':
      return { pre: 'starcoder' };
    case 'command-r': case 'smollm':
      return { pre: 'starcoder', cleanSpaces: false };
    case 'qwen2': case 'deepseek-r1-qwen': case 'megrez': case 'stablelm2': case 'hunyuan':
      return { pre: 'qwen2', cleanSpaces: pre === 'megrez' || pre === 'stablelm2' ? undefined : false };
    case 'poro-chat': case 'bloom': case 'gpt3-finnish':
      return { pre: 'bloom', cleanSpaces: pre === 'poro-chat' ? false : undefined };
    case 'chatglm-bpe': case 'glm4': return { pre: 'llama3' };
    case 'viking': return { pre: 'viking', cleanSpaces: false };
    case 'tekken': return { pre: 'tekken', cleanSpaces: false, ignoreMerges: true, addBos: true };
    case 'chameleon': return { pre: 'chameleon', addBos: true, cleanSpaces: false };
    case 'gpt-4o': case 'llama4': return { pre: 'gpt4o', cleanSpaces: false };
    case 'superbpe': return { pre: 'superbpe', cleanSpaces: false };
    case 'seed-coder': return { pre: 'seed-coder', cleanSpaces: false };
    case 'grok-2': return { pre: 'qwen2', cleanSpaces: false };
    case 'kimi-k2': case 'hunyuan-dense':
      throw new TokenizerError('E_TOKENIZER_PRE', `pre-tokenizer '${pre}' is not supported`);
    default:
      throw new TokenizerError('E_TOKENIZER_PRE', `unknown pre-tokenizer type: '${pre}'`);
  }
}

// The token texts llama.cpp recognises (src/llama-vocab.cpp, llama_vocab::impl::load, "auto-detect
// special tokens by text" and "maintain a list of tokens that cause end-of-generation"), as of the
// release our references come from (ggml-org/llama.cpp v0.4.0, bundled by node-llama-cpp 3.21.1).
// A token found this way gets the CONTROL attribute OR-ed in when the file marks it otherwise, so
// with special-token parsing off its text is plain text (phi-3's `</s>` is USER_DEFINED in the file).
const EOT_TEXTS = new Set([
  '<|eot_id|>', '<|im_end|>', '<|end|>', '<end_of_turn>', '<|endoftext|>', '<|end_of_text|>', '<EOT>', '_<EOT>',
  '[EOT]', '<｜end▁of▁sentence｜>', '<end_of_utterance>',
]);
export const EOG_TEXTS: ReadonlySet<string> = new Set([
  '<|eot_id|>', '<|im_end|>', '<|end|>', '<|return|>', '<|call|>', '<|flush|>', '<|calls|>', '<end_of_turn>',
  '<|endoftext|>', '</s>', '<|eom_id|>', '<EOT>', '_<EOT>', '[EOT]', '[EOS]', '<|end_of_text|>', '<end_of_utterance>',
  '<eos>', '<turn|>', '<|tool_response>', '<｜end▁of▁sentence｜>', '[e~[',
]);
const FIM_TEXTS: Record<'fimPre' | 'fimSuf' | 'fimMid' | 'fimPad' | 'fimRep' | 'fimSep', string[]> = {
  fimPre: ['<|fim_prefix|>', '<fim-prefix>', '<fim_prefix>', '<｜fim▁begin｜>', '<PRE>', '▁<PRE>', '<|code_prefix|>', '<|prefix|>'],
  fimSuf: ['<|fim_suffix|>', '<fim-suffix>', '<fim_suffix>', '<｜fim▁hole｜>', '<SUF>', '▁<SUF>', '<|code_suffix|>', '<|suffix|>'],
  fimMid: ['<|fim_middle|>', '<fim-middle>', '<fim_middle>', '<｜fim▁end｜>', '<MID>', '▁<MID>', '<|code_middle|>', '<|middle|>'],
  fimPad: ['<|fim_pad|>', '<fim-pad>', '<fim_pad>', '<PAD>', '[PAD]'],
  fimRep: ['<|fim_repo|>', '<|repo_name|>', '<fim-repo>', '<REPO>', '<reponame>'],
  fimSep: ['<|file_sep|>'],
};

function typeToAttr(t: number): number {
  switch (t) {
    case TOKEN_TYPE_UNKNOWN: return ATTR_UNKNOWN;
    case TOKEN_TYPE_UNUSED: return ATTR_UNUSED;
    case TOKEN_TYPE_NORMAL: return ATTR_NORMAL;
    case TOKEN_TYPE_CONTROL: return ATTR_CONTROL;
    case TOKEN_TYPE_USER_DEFINED: return ATTR_USER_DEFINED;
    case TOKEN_TYPE_BYTE: return ATTR_BYTE;
    default: return ATTR_UNDEFINED;
  }
}

const utf8 = new TextEncoder();

export function loadVocab(file: GgufMetadataSource): Vocab {
  const meta = file.metadata;
  const model = getString(meta, 'tokenizer.ggml.model');
  if (model === undefined) throw new TokenizerError('E_TOKENIZER_MISSING', 'no tokenizer.ggml.model in metadata');
  let pre = getString(meta, 'tokenizer.ggml.pre') ?? '';

  let type: VocabType;
  let bos: number | null, eos: number | null, unk: number | null, sep: number | null, pad: number | null, mask: number | null;
  let addBos = false, addEos = false, addSep = false, addSpacePrefix = true, cleanSpaces = true, ignoreMerges = false;
  const bpeRanks = new Map<string, number>();
  let canonicalPre = 'default';

  if (model === 'llama') {
    type = 'spm';
    bos = 1; eos = 2; unk = 0; sep = null; pad = null; mask = null;
    addSpacePrefix = true; cleanSpaces = false; addBos = true; addEos = false;
  } else if (model === 'bert') {
    type = 'wpm';
    bos = 101; eos = null; unk = 100; sep = 102; pad = 0; mask = 103;
    addSpacePrefix = false; cleanSpaces = true; addBos = true; addEos = false; addSep = true;
  } else if (model === 'gpt2') {
    type = 'bpe';
    const merges = getStringArray(meta, 'tokenizer.ggml.merges');
    if (merges === undefined) throw new TokenizerError('E_TOKENIZER_MISSING', 'cannot find tokenizer merges in model file');
    for (let i = 0; i < merges.length; i++) {
      const w = merges[i]!;
      const pos = w.indexOf(' ', 1);
      const first = pos >= 0 ? w.slice(0, pos) : '';
      const second = pos >= 0 ? w.slice(pos + 1) : '';
      const key = bpeRankKey(first, second);
      if (!bpeRanks.has(key)) bpeRanks.set(key, i);
    }
    bos = 11; eos = 11; unk = null; sep = null; pad = null; mask = null;
    addSpacePrefix = false; cleanSpaces = true;
    const info = bpePreInfo(pre);
    canonicalPre = info.pre;
    if (info.ignoreMerges) ignoreMerges = true;
    if (info.addBos) addBos = true;
    if (info.cleanSpaces !== undefined) cleanSpaces = info.cleanSpaces;
    if (pre === 'chatglm-bpe' || pre === 'glm4') bos = null;
  } else {
    throw new TokenizerError('E_TOKENIZER_MODEL', `unsupported tokenizer model: '${model}'`);
  }
  if (type !== 'bpe') canonicalPre = 'default';
  pre = pre || '';
  const asp = getBool(meta, 'tokenizer.ggml.add_space_prefix');
  if (asp !== undefined) addSpacePrefix = asp;

  const tokens = getStringArray(meta, 'tokenizer.ggml.tokens');
  if (tokens === undefined) throw new TokenizerError('E_TOKENIZER_MISSING', 'cannot find tokenizer vocab in model file');
  const n = tokens.length;
  const rawScores = getNumArray(meta, 'tokenizer.ggml.scores');
  const types = getNumArray(meta, 'tokenizer.ggml.token_type');
  if (rawScores && rawScores.length < n) throw new TokenizerError('E_TOKENIZER_META', 'fewer scores than tokens');
  if (types && types.length < n) throw new TokenizerError('E_TOKENIZER_META', 'fewer token types than tokens');

  const scores = new Float32Array(n);
  const attrs = new Uint16Array(n);
  const tokenToId = new Map<string, number>();
  const texts: string[] = new Array(n);
  let maxTokenLen = 0;
  for (let i = 0; i < n; i++) {
    let w = tokens[i]!;
    if (w.length === 0) w = `[EMPTY_${i}]`;
    texts[i] = w;
    tokenToId.set(w, i); // a later duplicate wins, as std::map operator[] did
    if (type === 'wpm') {
      const bl = utf8.encode(w).length;
      if (bl > maxTokenLen) maxTokenLen = bl;
    }
    scores[i] = rawScores ? rawScores[i]! : 0;
    attrs[i] = types ? typeToAttr(types[i]!) : ATTR_NORMAL;
  }

  // special token ids
  const inRange = (id: number | null): number | null => (id !== null && id >= 0 && id < n ? id : null);
  bos = inRange(bos); eos = inRange(eos); unk = inRange(unk); sep = inRange(sep); pad = inRange(pad); mask = inRange(mask);
  const ids = {
    bos, eos, eot: null as number | null, eom: null as number | null, unk, sep, pad, mask,
    fimPre: null as number | null, fimSuf: null as number | null, fimMid: null as number | null,
    fimPad: null as number | null, fimRep: null as number | null, fimSep: null as number | null,
  };
  const keyed: [keyof typeof ids, string][] = [
    ['bos', 'bos_token_id'], ['eos', 'eos_token_id'], ['eot', 'eot_token_id'], ['eom', 'eom_token_id'],
    ['unk', 'unknown_token_id'], ['sep', 'seperator_token_id'], ['pad', 'padding_token_id'], ['mask', 'mask_token_id'],
    ['fimPre', 'fim_pre_token_id'], ['fimSuf', 'fim_suf_token_id'], ['fimMid', 'fim_mid_token_id'],
    ['fimPad', 'fim_pad_token_id'], ['fimRep', 'fim_rep_token_id'], ['fimSep', 'fim_sep_token_id'],
    ['fimPre', 'prefix_token_id'], ['fimSuf', 'suffix_token_id'], ['fimMid', 'middle_token_id'],
  ];
  if (type === 'wpm') keyed.push(['bos', 'cls_token_id']);
  for (const [field, key] of keyed) {
    const v = getUint(meta, `tokenizer.ggml.${key}`);
    if (v === undefined) continue;
    if (v >= 0 && v < n) ids[field] = v; // out of range (e.g. 0xFFFFFFFF = unset) keeps the default
  }

  const ab = getBool(meta, 'tokenizer.ggml.add_bos_token');
  if (ab !== undefined) addBos = ab;
  const ae = getBool(meta, 'tokenizer.ggml.add_eos_token');
  if (ae !== undefined) addEos = ae;
  const as = getBool(meta, 'tokenizer.ggml.add_sep_token');
  if (as !== undefined) addSep = as;

  // text-based auto-detection of EOT / EOM / FIM tokens (forces CONTROL on them)
  const forceControl = (id: number): void => {
    attrs[id] = attrs[id]! | ATTR_CONTROL;
  };
  // llama.cpp iterates its std::map (sorted by text bytes); the first match wins. Only tokens whose text is one of
  // the looked-for strings (or contains "unused") matter, so only those are collected and sorted.
  const wanted = new Set<string>([...EOT_TEXTS, ...EOG_TEXTS, '<|eom_id|>', ...Object.values(FIM_TEXTS).flat(),
    '<|channel|>', '<|message|>', '<|start|>', '<|constrain|>']);
  const sortedEntries: [string, number][] = [];
  for (const t of wanted) {
    const id = tokenToId.get(t);
    if (id !== undefined) sortedEntries.push([t, id]);
  }
  for (let i = 0; i < n; i++) {
    const t = texts[i]!;
    if (t.includes('unused') && !wanted.has(t) && tokenToId.get(t) === i) sortedEntries.push([t, i]);
  }
  sortedEntries.sort((a, b) => compareUtf8(a[0], b[0]));
  for (const [text, id] of sortedEntries) {
    if (ids.eot === null && EOT_TEXTS.has(text)) { ids.eot = id; forceControl(id); }
    if (ids.eom === null && text === '<|eom_id|>') { ids.eom = id; forceControl(id); }
    for (const f of Object.keys(FIM_TEXTS) as (keyof typeof FIM_TEXTS)[]) {
      if (ids[f] === null && FIM_TEXTS[f].includes(text)) { ids[f] = id; forceControl(id); }
    }
  }
  // unused detection: control tokens whose text contains "unused"
  for (const [text, id] of sortedEntries) {
    if ((attrs[id]! & ATTR_CONTROL) && !(attrs[id]! & ATTR_UNUSED) && text.includes('unused')) attrs[id] = attrs[id]! | ATTR_UNUSED;
  }
  const eogIds = new Set<number>();
  for (const id of [ids.fimPad, ids.fimRep, ids.fimSep]) if (id !== null) eogIds.add(id);
  for (const [text, id] of sortedEntries) {
    if (EOG_TEXTS.has(text)) { eogIds.add(id); forceControl(id); }
  }
  for (const [text, id] of sortedEntries) {
    if (text === '<|channel|>' || text === '<|message|>' || text === '<|start|>' || text === '<|constrain|>') attrs[id] = ATTR_USER_DEFINED;
  }
  for (const id of [ids.eos, ids.eot, ids.eom]) if (id !== null) eogIds.add(id);
  {
    // o200k_harmony (<|return|> + <|call|>) and solar-open (<|calls|> + <|flush|>): <|end|> is not end-of-generation
    let hasReturn = false, hasCall = false, hasFlush = false, endId: number | null = null;
    for (const id of eogIds) {
      const t = texts[id];
      if (t === '<|return|>') hasReturn = true;
      else if (t === '<|call|>' || t === '<|calls|>') hasCall = true;
      else if (t === '<|flush|>') hasFlush = true;
      else if (t === '<|end|>') endId = id;
    }
    if (endId !== null && hasCall && (hasReturn || hasFlush)) { eogIds.delete(endId); attrs[endId] = ATTR_USER_DEFINED; }
  }
  {
    // gemma4 (has <|tool_response>): </s> is an ordinary token there, not end-of-generation
    let hasToolResponse = false, sId: number | null = null;
    for (const id of eogIds) {
      const t = texts[id];
      if (t === '<|tool_response>') hasToolResponse = true;
      else if (t === '</s>') sId = id;
    }
    if (hasToolResponse && sId !== null) { eogIds.delete(sId); attrs[sId] = ATTR_NORMAL; }
  }

  const specialCache: number[] = [];
  for (let i = 0; i < n; i++) if (attrs[i]! & (ATTR_CONTROL | ATTR_USER_DEFINED | ATTR_UNKNOWN)) specialCache.push(i);
  const byteLen = (id: number): number => utf8.encode(texts[id]!).length;
  const lens = new Map<number, number>();
  for (const id of specialCache) lens.set(id, byteLen(id));
  specialCache.sort((a, b) => lens.get(b)! - lens.get(a)! || a - b);

  // per-model attributes (llama.cpp sets these by name)
  const name = (getString(meta, 'general.name') ?? '').toLowerCase();
  const arch = getString(meta, 'general.architecture') ?? '';
  if (['jina-v2-de', 'jina-v2-es', 'jina-v2-code'].some((s) => pre.includes(s)) || ['nomic-bert-moe', 'jina-bert-v3'].some((s) => arch.includes(s))) {
    const m = tokenToId.get('<mask>');
    if (m !== undefined) attrs[m] = attrs[m]! | ATTR_LSTRIP;
  } else if (name.includes('phi-3') || name.includes('phi3')) {
    for (const id of specialCache) attrs[id] = attrs[id]! | ATTR_RSTRIP;
    const setAttr = (t: string, on: boolean): void => {
      const id = tokenToId.get(t);
      if (id === undefined) return;
      attrs[id] = on ? attrs[id]! | ATTR_RSTRIP : attrs[id]! & ~ATTR_RSTRIP;
    };
    setAttr('</s>', true);
    for (const t of ['<unk>', '<s>', '<|endoftext|>']) setAttr(t, false);
  }

  const chatTemplate = getString(meta, 'tokenizer.chat_template');
  if (addBos && ids.bos === null) throw new TokenizerError('E_TOKENIZER_META', 'add_bos_token is true, but bos_token_id is not set');
  if (addEos && ids.eos === null) throw new TokenizerError('E_TOKENIZER_META', 'add_eos_token is true, but eos_token_id is not set');

  return {
    type, model, pre: canonicalPre, tokens: texts, scores, attrs, tokenToId, bpeRanks, maxTokenLen,
    ...ids, addBos, addEos, addSep, addSpacePrefix, cleanSpaces, ignoreMerges, eogIds, specialCache, chatTemplate,
    name, arch,
  };
}

/** Compare two strings by their UTF-8 byte order (std::string ordering). */
export function compareUtf8(a: string, b: string): number {
  // UTF-16 code unit order differs from UTF-8 byte order only for surrogates vs U+E000..U+FFFF
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    if (x >= 0xd800 && x <= 0xdfff) x += 0x2000; else if (x >= 0xe000) x -= 0x800;
    if (y >= 0xd800 && y <= 0xdfff) y += 0x2000; else if (y >= 0xe000) y -= 0x800;
    return x - y;
  }
  return a.length - b.length;
}
