// `gguf-edge verify MODEL [--sha256 HEX]`: sha256 of a model's file(s), checked against the given value or
// the one the hub gave when the file was pulled.
import { parseArgs } from 'node:util';
import type { Command } from '../main.js';
import { usage } from '../options.js';
import { progress } from '../progress.js';

const help = `Usage: gguf-edge verify MODEL [--sha256 HEX[,HEX...]] [--json]

Hashes the model's file(s) (every shard of a split model, named by its first shard) with sha256 and
prints "SHA256  PATH" per file. Each is checked against --sha256 (one value per shard, in order; a model
card lists them) or, for a file fetched by pull / run -hf, against the sha256 the hub gave. A mismatch
exits 1 with [SHA256_MISMATCH] naming the file.

Options:
  --sha256 HEX[,HEX...]      the expected sha256 of each file
  --json                     print {files: [{path, size, sha256, expected?, source?, ok?}]}
  -h, --help                 show this help`;

export const command: Command = {
  summary: 'check a model file\'s sha256',
  help,
  async run(args) {
    const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { sha256: { type: 'string' }, json: { type: 'boolean' } } });
    if (positionals.length !== 1) throw usage('give one MODEL (see --help)');
    const { verifyModel } = await import('../../hub/verify.js');
    const bar = progress('verifying');
    const expected = values.sha256 !== undefined ? values.sha256.split(',').map((s) => s.trim()) : undefined;
    let files;
    try {
      files = await verifyModel(positionals[0]!, expected, (d, t) => bar.update(d, t));
    } finally {
      bar.done();
    }
    if (values.json) process.stdout.write(JSON.stringify({ files }) + '\n');
    else for (const f of files) process.stdout.write(`${f.sha256}  ${f.path}${f.ok ? `  OK (${f.source === 'given' ? '--sha256' : 'the hub\'s'})` : '  (nothing to compare with)'}\n`);
    return 0;
  },
};
