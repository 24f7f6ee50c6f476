// The model options of run and chat: MODEL as a path, or -hf OWNER/REPO[:QUANT|FILE] fetched into the cache
// (src/hub/pull.ts) and loaded from there; --verify hashes the file(s) first.
import type { ParseArgsConfig } from 'node:util';
import { usage } from './options.js';
import { progress } from './progress.js';

type Values = Record<string, string | boolean | (string | boolean)[] | undefined>;

export const modelOptions = {
  'hf-repo': { type: 'string' },
  offline: { type: 'boolean' },
  verify: { type: 'boolean' },
  sha256: { type: 'string' },
} as const satisfies NonNullable<ParseArgsConfig['options']>;

export const MODEL_HELP = `Model:
  MODEL                      a GGUF file (a split model: its first shard, PREFIX-00001-of-0000N.gguf)
  -hf, --hf-repo OWNER/REPO[:QUANT|FILE]
                             fetch from Hugging Face instead (as llama.cpp's -hf): QUANT is a tag such as
                             Q4_K_M (default: the hub's pick, Q4_K_M first), FILE a path ending in .gguf;
                             cached in GGUF_EDGE_CACHE (see \`gguf-edge pull --help\`)
  --offline                  with -hf: use the cache only (also HF_HUB_OFFLINE=1)
  --verify                   hash the model file(s) before loading and compare with --sha256 or the hub's
  --sha256 HEX[,HEX...]      the expected sha256 (one per shard), e.g. from the model card`;

/** llama.cpp spells it -hf; node's parseArgs takes one-letter short options only. */
export function expandModelArgs(args: string[]): string[] {
  return args.map((a) => (a === '-hf' || a === '-hfr' ? '--hf-repo' : a.startsWith('-hf=') ? `--hf-repo=${a.slice(4)}` : a));
}

export const offlineFrom = (v: Values): boolean => !!v.offline || process.env.HF_HUB_OFFLINE === '1';

/** The local path of the model named by MODEL or -hf (downloading it when needed), verified when asked. */
export async function resolveModel(v: Values, positional: string | undefined): Promise<string> {
  let path = positional;
  if (v['hf-repo'] !== undefined) {
    if (positional !== undefined) throw usage('give MODEL or -hf REPO, not both');
    const { pull } = await import('../hub/pull.js');
    const bar = progress('downloading');
    const r = await pull(v['hf-repo'] as string, {
      offline: offlineFrom(v),
      onProgress: (d, t) => bar.update(d, t),
      onInfo: (line) => { if (process.stderr.isTTY) process.stderr.write(`\r\x1b[K${line}\n`); },
    });
    bar.done();
    path = r.path;
  }
  if (path === undefined) throw usage('missing MODEL argument (or -hf REPO; see --help)');
  if (v.verify || v.sha256 !== undefined) {
    const { verifyModel } = await import('../hub/verify.js');
    const expected = typeof v.sha256 === 'string' ? v.sha256.split(',').map((s) => s.trim()) : undefined;
    const bar = progress('verifying');
    const files = await verifyModel(path, expected, (d, t) => bar.update(d, t));
    bar.done();
    const unchecked = files.filter((f) => f.ok === undefined);
    if (unchecked.length > 0) throw Object.assign(new Error(`--verify: no sha256 to compare ${unchecked.map((f) => f.path).join(', ')} with: give --sha256 HEX (the model card lists it), or fetch the model with -hf`), { code: 'NO_CHECKSUM' });
  }
  return path;
}
