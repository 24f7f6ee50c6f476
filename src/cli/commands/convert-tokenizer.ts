// `gguf-edge convert-tokenizer tokenizer.json -o vocab.gguf`: build the GGUF tokenizer keys from a Hugging Face
// tokenizer.json (+ tokenizer_config.json), as llama.cpp's converter does for the vocabulary.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import type { Command } from '../main.js';
import { writeGguf } from '../../gguf/writer.js';
import { convertHfTokenizer } from '../../tokenizer/convert-hf.js';

const help = `Usage: gguf-edge convert-tokenizer TOKENIZER_JSON -o OUT.gguf [options]

Writes a vocab-only GGUF (no tensors) with the tokenizer.* keys llama.cpp's converter would write for this
tokenizer: tokens, token types, merges (byte-level BPE) or scores (SentencePiece-style BPE), special token ids,
add_bos/add_eos and the chat template. The result works with 'tokenize', 'detokenize' and as a vocabulary test file.

Options:
  -o, --output FILE   where to write the GGUF (required)
  --config FILE       tokenizer_config.json (default: the one next to TOKENIZER_JSON, if any)
  --pre NAME          tokenizer.ggml.pre to write (default: detected from the pre-tokenizer regex)
  --arch NAME         general.architecture (default: llama)
  --name NAME         general.name
  -h, --help          show this help`;

export const command: Command = {
  summary: 'build GGUF tokenizer keys from a Hugging Face tokenizer.json',
  help,
  async run(args) {
    const { values, positionals } = parseArgs({
      args, allowPositionals: true,
      options: {
        output: { type: 'string', short: 'o' }, config: { type: 'string' }, pre: { type: 'string' },
        arch: { type: 'string' }, name: { type: 'string' },
      },
    });
    const input = positionals[0];
    if (!input) throw Object.assign(new Error('missing TOKENIZER_JSON argument (see --help)'), { code: 'USAGE' });
    if (!values.output) throw Object.assign(new Error('missing -o OUT.gguf'), { code: 'USAGE' });
    const json = JSON.parse(readFileSync(input, 'utf8'));
    const cfgPath = values.config ?? join(dirname(input), 'tokenizer_config.json');
    const config = existsSync(cfgPath) ? JSON.parse(readFileSync(cfgPath, 'utf8')) : {};
    const res = convertHfTokenizer(json, config, { pre: values.pre, arch: values.arch, name: values.name });
    const bytes = writeGguf({ metadata: res.metadata, tensors: [] });
    writeFileSync(values.output, bytes);
    process.stderr.write(`wrote ${values.output}: ${res.nTokens} tokens, model ${res.kind === 'bpe' ? 'gpt2' : 'llama'}, pre ${res.pre}, ${bytes.length} bytes\n`);
    return 0;
  },
};
