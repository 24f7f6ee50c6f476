// Public tokenizer API: tokenizerFromGguf(file) -> Tokenizer (SPM, BPE or WPM as the metadata says).
import { bpeRegexes, bpeTokenize } from './bpe.js';
import { StreamingDetokenizer, detokenize, tokenPiece } from './detokenize.js';
import { partitionSpecial } from './partition.js';
import { spmTokenize } from './spm.js';
import { loadVocab, TokenizerError, type GgufMetadataSource, type Vocab } from './vocab.js';
import { wpmTokenize } from './wpm.js';

export { StreamingDetokenizer } from './detokenize.js';
export { TokenizerError, loadVocab, type GgufMetadataSource, type Vocab } from './vocab.js';
export {
  ChatFormatter, ChatTemplateError, renderJinja, renderBuiltin, detectBuiltin, builtinByName, BUILTIN_TEMPLATES,
  type ChatMessage, type RenderOptions, type BuiltinTemplate,
} from './chat-template.js';
export { convertHfTokenizer, detectPre, type ConvertOptions, type ConvertResult } from './convert-hf.js';

export interface TokenizeOptions {
  /** add BOS/EOS (SEP/CLS for WPM) as the metadata says */
  addSpecial?: boolean;
  /** recognise CONTROL tokens written as text (e.g. "<|im_start|>") */
  parseSpecial?: boolean;
}

export interface Tokenizer {
  readonly nVocab: number;
  readonly bos: number | null;
  readonly eos: number | null;
  readonly addBos: boolean;
  readonly addEos: boolean;
  readonly vocab: Vocab;
  readonly chatTemplate: string | undefined;
  tokenize(text: string, opts?: TokenizeOptions): number[];
  tokenToPiece(id: number, opts?: { special?: boolean }): Uint8Array;
  detokenize(ids: number[], opts?: { special?: boolean; removeSpecial?: boolean }): string;
  isEog(id: number): boolean;
  /** the text of a token as stored in the vocab */
  tokenText(id: number): string;
  /** a streaming detokenizer for generated ids */
  stream(opts?: { special?: boolean }): StreamingDetokenizer;
}

export class GgufTokenizer implements Tokenizer {
  readonly vocab: Vocab;
  private readonly regexes: string[] | null;

  constructor(vocab: Vocab) {
    this.vocab = vocab;
    this.regexes = vocab.type === 'bpe' ? bpeRegexes(vocab) : null;
  }

  get nVocab(): number { return this.vocab.tokens.length; }
  get bos(): number | null { return this.vocab.bos; }
  get eos(): number | null { return this.vocab.eos; }
  get addBos(): boolean { return this.vocab.addBos; }
  get addEos(): boolean { return this.vocab.addEos; }
  get chatTemplate(): string | undefined { return this.vocab.chatTemplate; }

  tokenize(text: string, opts: TokenizeOptions = {}): number[] {
    const v = this.vocab;
    const addSpecial = opts.addSpecial ?? false;
    const frags = partitionSpecial(v, text, opts.parseSpecial ?? false);
    const out: number[] = [];
    switch (v.type) {
      case 'spm': {
        let prevSpecial = true;
        if (addSpecial && v.addBos) out.push(v.bos!);
        for (const f of frags) {
          if (typeof f === 'string') {
            let t = v.addSpacePrefix && prevSpecial ? ' ' + f : f;
            t = t.replaceAll(' ', '\u2581');
            spmTokenize(v, t, out);
            prevSpecial = false;
          } else {
            out.push(f);
            prevSpecial = true;
          }
        }
        if (addSpecial && v.addEos) out.push(v.eos!);
        break;
      }
      case 'bpe': {
        if (addSpecial && v.addBos) out.push(v.bos!);
        for (const f of frags) {
          if (typeof f === 'string') bpeTokenize(v, this.regexes!, f, out);
          else out.push(f);
        }
        if (addSpecial && v.addEos) out.push(v.eos!);
        break;
      }
      case 'wpm': {
        if (addSpecial) {
          if (v.bos === null) throw new TokenizerError('E_TOKENIZER_META', 'WPM vocab without CLS/BOS token');
          out.push(v.bos);
        }
        for (const f of frags) {
          if (typeof f === 'string') wpmTokenize(v, f, out);
          else out.push(f);
        }
        if (addSpecial) {
          if (v.sep === null) throw new TokenizerError('E_TOKENIZER_META', 'WPM vocab without SEP token');
          out.push(v.sep);
        }
        break;
      }
    }
    return out;
  }

  tokenToPiece(id: number, opts: { special?: boolean } = {}): Uint8Array {
    return tokenPiece(this.vocab, id, opts.special ?? true);
  }

  detokenize(ids: number[], opts: { special?: boolean; removeSpecial?: boolean } = {}): string {
    return detokenize(this.vocab, ids, opts);
  }

  isEog(id: number): boolean {
    return this.vocab.eogIds.has(id);
  }

  tokenText(id: number): string {
    return this.vocab.tokens[id] ?? '';
  }

  stream(opts: { special?: boolean } = {}): StreamingDetokenizer {
    const special = opts.special ?? false;
    return new StreamingDetokenizer((id) => tokenPiece(this.vocab, id, special));
  }
}

export function tokenizerFromGguf(file: GgufMetadataSource): Tokenizer {
  return new GgufTokenizer(loadVocab(file));
}
