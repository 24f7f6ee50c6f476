// `gguf-edge tokenize MODEL TEXT`: tokenize text with a GGUF file's tokenizer (like llama.cpp's llama-tokenize).
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { Command } from '../main.js';
import { openGguf } from '../../gguf/open.js';
import { tokenizerFromGguf } from '../../tokenizer/index.js';

const help = `Usage: gguf-edge tokenize MODEL [TEXT] [options]

Tokenizes TEXT (or --file / --stdin) with the tokenizer stored in MODEL (any GGUF, vocab-only files too).
BOS/EOS are added as the model's metadata says unless --no-bos is given.

Options:
  --no-bos          do not add BOS/EOS (llama.cpp add_special = false)
  --parse-special   recognise special-token text such as "<|im_start|>" (llama.cpp parse_special)
  --json            print {"tokens": [...], "pieces": [...]}
  --ids             print only the ids, as [1, 2, 3]
  -f, --file FILE   read the text from FILE
  --stdin           read the text from standard input
  -h, --help        show this help

Default output: one line per token, "ID -> 'PIECE'".`;

const dec = new TextDecoder();

export const command: Command = {
  summary: 'tokenize text with a model\'s tokenizer',
  help,
  async run(args) {
    const { values, positionals } = parseArgs({
      args, allowPositionals: true,
      options: {
        'no-bos': { type: 'boolean' }, 'parse-special': { type: 'boolean' }, json: { type: 'boolean' }, ids: { type: 'boolean' },
        file: { type: 'string', short: 'f' }, stdin: { type: 'boolean' },
      },
    });
    const [model, ...rest] = positionals;
    if (!model) throw Object.assign(new Error('missing MODEL argument (see --help)'), { code: 'USAGE' });
    let text: string;
    if (values.file) text = readFileSync(values.file, 'utf8');
    else if (values.stdin) text = readFileSync(0, 'utf8');
    else if (rest.length > 0) text = rest.join(' ');
    else throw Object.assign(new Error('missing TEXT (or --file / --stdin)'), { code: 'USAGE' });
    const tok = tokenizerFromGguf(openGguf(model));
    const ids = tok.tokenize(text, { addSpecial: !values['no-bos'], parseSpecial: !!values['parse-special'] });
    const pieces = ids.map((id) => dec.decode(tok.tokenToPiece(id, { special: true })));
    if (values.json) {
      process.stdout.write(JSON.stringify({ tokens: ids, pieces }) + '\n');
    } else if (values.ids) {
      process.stdout.write(`[${ids.join(', ')}]\n`);
    } else {
      process.stdout.write(ids.map((id, i) => `${String(id).padStart(6)} -> '${pieces[i]}'`).join('\n') + (ids.length ? '\n' : ''));
    }
    return 0;
  },
};
