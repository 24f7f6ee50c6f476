// `gguf-edge detokenize MODEL 1,2,3`: token ids back to text.
import { parseArgs } from 'node:util';
import type { Command } from '../main.js';
import { openGguf } from '../../gguf/open.js';
import { tokenizerFromGguf } from '../../tokenizer/index.js';

const help = `Usage: gguf-edge detokenize MODEL IDS [options]

Turns token ids (comma- or space-separated, brackets allowed: "1,2,3" or "[1, 2, 3]") back into text with
MODEL's tokenizer, as llama.cpp's detokenize does.

Options:
  --no-special      render control tokens (BOS, EOS, <|im_start|>...) as nothing
  --remove-special  drop a leading BOS / trailing EOS that add_bos / add_eos would have added
  -h, --help        show this help`;

export const command: Command = {
  summary: 'turn token ids back into text',
  help,
  async run(args) {
    const { values, positionals } = parseArgs({
      args, allowPositionals: true,
      options: { 'no-special': { type: 'boolean' }, 'remove-special': { type: 'boolean' } },
    });
    const [model, ...rest] = positionals;
    if (!model) throw Object.assign(new Error('missing MODEL argument (see --help)'), { code: 'USAGE' });
    const parts = rest.join(' ').replace(/[[\]]/g, ' ').split(/[\s,]+/).filter((s) => s.length > 0);
    const ids = parts.map((s) => {
      const n = Number(s);
      if (!Number.isInteger(n) || n < 0) throw Object.assign(new Error(`not a token id: '${s}'`), { code: 'USAGE' });
      return n;
    });
    const tok = tokenizerFromGguf(openGguf(model));
    for (const id of ids) {
      if (id >= tok.nVocab) throw Object.assign(new Error(`token id ${id} is out of range (vocab has ${tok.nVocab})`), { code: 'USAGE' });
    }
    process.stdout.write(tok.detokenize(ids, { special: !values['no-special'], removeSpecial: !!values['remove-special'] }) + '\n');
    return 0;
  },
};
