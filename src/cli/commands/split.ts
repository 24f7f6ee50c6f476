// `gguf-edge split`: split a GGUF into gguf-split shards, or merge shards back into one file (llama.cpp's
// gguf-split, same options and file naming; llama.cpp loads the shards by their first file).
import { closeSync, existsSync, openSync, writeSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { Command } from '../main.js';
import { openGguf } from '../../gguf/open.js';
import { readTensorData } from '../../gguf/reader.js';
import { metaEntryToWrite } from '../../gguf/rewrite.js';
import { SPLIT_COUNT, SPLIT_NO, SPLIT_TENSORS_COUNT } from '../../gguf/split.js';
import { splitPlan, writeSplit } from '../../gguf/split-write.js';
import { ggufHeader, type GgufWriteValue } from '../../gguf/writer.js';
import { usage } from '../options.js';
import { progress } from '../progress.js';

const help = `Usage: gguf-edge split [options] GGUF_IN GGUF_OUT
       gguf-edge split --merge FIRST_SHARD.gguf GGUF_OUT.gguf

Splits GGUF_IN into shards GGUF_OUT-00001-of-0000N.gguf, ... as llama.cpp's gguf-split does: the first
shard holds all the metadata, every shard the keys split.no, split.count and split.tensors.count. Load
(or run) a split model by naming its first shard. A trailing .gguf on GGUF_OUT is dropped.

Options:
  --split-max-tensors N      at most N tensors per shard (default 128)
  --split-max-size N(M|G)    at most N megabytes (M, 10^6) or gigabytes (G, 10^9) of tensor data per shard;
                             also K (10^3) or a plain byte count
  --no-tensor-first-split    the first shard holds the metadata only
  --dry-run                  print the plan (shards, tensor counts, sizes) and write nothing
  --merge                    join the shards of the split model whose first shard is GGUF_IN into GGUF_OUT
  -h, --help                 show this help`;

/** gguf-split's N(M|G) size (decimal units), plus K and a plain byte count. */
export function parseSize(s: string): number {
  const m = /^(\d+)([KMG]?)$/i.exec(s.trim());
  const n = m ? Number(m[1]) * ({ '': 1, K: 1e3, M: 1e6, G: 1e9 } as Record<string, number>)[m[2]!.toUpperCase()]! : NaN;
  if (!(n > 0)) throw usage(`--split-max-size needs a positive size such as 512M or 2G, got "${s}"`);
  return n;
}

function merge(input: string, output: string): number {
  if (existsSync(output)) throw usage(`output file ${output} already exists`);
  const f = openGguf(input);
  try {
    const kv = [...f.metaEntries].filter(([k]) => k !== SPLIT_NO && k !== SPLIT_COUNT && k !== SPLIT_TENSORS_COUNT).map(([k, e]) => [k, metaEntryToWrite(e)] as [string, GgufWriteValue]);
    const h = ggufHeader({ version: 3, metadata: kv, tensors: f.tensors, alignment: f.alignment });
    const buf = new Uint8Array(f.tensors.reduce((a, t) => Math.max(a, t.nBytes), 0) + h.alignment);
    const fd = openSync(output, 'wx');
    try {
      writeSync(fd, h.header);
      f.tensors.forEach((t, j) => {
        const padded = (j + 1 < f.tensors.length ? h.offsets[j + 1]! : h.dataBytes) - h.offsets[j]!;
        readTensorData(f, t, buf, 0);
        buf.fill(0, t.nBytes, padded);
        writeSync(fd, buf, 0, padded);
      });
    } finally {
      closeSync(fd);
    }
    process.stderr.write(`merged ${f.shards?.length ?? 1} shard(s), ${f.tensors.length} tensors into ${output}\n`);
    return 0;
  } finally {
    f.source.close?.();
  }
}

export const command: Command = {
  summary: 'split a GGUF into shards (gguf-split) or merge shards',
  help,
  async run(args) {
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: {
        'split-max-tensors': { type: 'string' },
        'split-max-size': { type: 'string' },
        'no-tensor-first-split': { type: 'boolean' },
        'dry-run': { type: 'boolean' },
        merge: { type: 'boolean' },
        split: { type: 'boolean' },
      },
    });
    if (positionals.length !== 2) throw usage('give GGUF_IN and GGUF_OUT (see --help)');
    const [input, output] = positionals as [string, string];
    if (values.merge) {
      if (values.split) throw usage('either --split or --merge, not both');
      return merge(input, output);
    }
    if (values['split-max-tensors'] !== undefined && values['split-max-size'] !== undefined) throw usage('either --split-max-tensors or --split-max-size, not both');
    let maxTensors: number | undefined;
    if (values['split-max-tensors'] !== undefined) {
      maxTensors = Number(values['split-max-tensors']);
      if (!Number.isInteger(maxTensors) || maxTensors < 1) throw usage(`--split-max-tensors needs a positive integer, got "${values['split-max-tensors']}"`);
    }
    const maxBytes = values['split-max-size'] !== undefined ? parseSize(values['split-max-size']) : undefined;
    const prefix = output.replace(/\.gguf$/i, '');
    const f = openGguf(input);
    try {
      const opts = { maxTensors, maxBytes, noTensorFirstSplit: !!values['no-tensor-first-split'] };
      if (values['dry-run']) {
        const { shards } = splitPlan(f, prefix, opts);
        process.stdout.write(`n_split: ${shards.length}\n` + shards.map((s, i) => `split ${String(i + 1).padStart(5, '0')}: n_tensors = ${s.tensors.length}, total_size = ${s.bytes} B  ${s.path}\n`).join(''));
        return 0;
      }
      const bar = progress('splitting');
      const shards = writeSplit(f, prefix, opts, (d, t) => bar.update(d, t));
      bar.done();
      for (const s of shards) process.stdout.write(`${s.path}\n`);
      process.stderr.write(`${shards.length} shards written with a total of ${f.tensors.length} tensors\n`);
      return 0;
    } finally {
      f.source.close?.();
    }
  },
};
