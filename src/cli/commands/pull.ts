// `gguf-edge pull OWNER/REPO[:QUANT|FILE]`: fetch a GGUF from Hugging Face into the cache (as node-llama-cpp's
// pull and llama.cpp's -hf) and print where it is.
import { parseArgs } from 'node:util';
import type { Command } from '../main.js';
import { offlineFrom } from '../hf.js';
import { usage } from '../options.js';
import { progress } from '../progress.js';

const help = `Usage: gguf-edge pull OWNER/REPO[:QUANT|FILE] [--offline] [--json]

Downloads a model from Hugging Face into the cache and prints the local path to load (the first shard
of a split model; every shard is fetched). Then: gguf-edge run PATH, or gguf-edge run -hf OWNER/REPO[:QUANT].

  OWNER/REPO:FILE            a file of the repository (a path ending in .gguf)
  OWNER/REPO:QUANT           the model file of a quant tag (Q4_K_M, Q8_0, ...): the hub's manifest API
                             {endpoint}/v2/OWNER/REPO/manifests/QUANT, else the repository's file list
  OWNER/REPO                 the hub's default pick (Q4_K_M first, then Q8_0, then the first GGUF)
  node-llama-cpp's hf:OWNER/REPO:QUANT and hf:OWNER/REPO/FILE.gguf name the same things.

Files come from {endpoint}/OWNER/REPO/resolve/main/FILE, with progress on a terminal (quiet when piped);
an interrupted download resumes where it stopped (FILE.part, HTTP Range + If-Range), the sha256 the hub
gives for the file (its ETag, X-Linked-Etag) is checked before the file is kept, and a cached file whose
ETag is still the hub's is not fetched again.

Options:
  --offline                  use the cache only; fails with [NOT_CACHED] when the model is not there
                             (also HF_HUB_OFFLINE=1; without the network the cache is used anyway)
  --json                     print {repo, file, path, files: [{file, path, url, sha256, cached}]}
  -h, --help                 show this help

Environment:
  GGUF_EDGE_CACHE            the cache folder (default: $XDG_CACHE_HOME or ~/.cache /gguf-edge on Linux,
                             ~/Library/Caches/gguf-edge on macOS, %LOCALAPPDATA%\\gguf-edge on Windows);
                             files are named OWNER_REPO_FILE (every / as _), as llama.cpp's cache
  HF_ENDPOINT                the hub's address (default https://huggingface.co)
  HF_TOKEN                   a token for private or gated repositories (sent as Authorization: Bearer)`;

export const command: Command = {
  summary: 'download a GGUF from Hugging Face into the cache',
  help,
  async run(args) {
    const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { offline: { type: 'boolean' }, json: { type: 'boolean' } } });
    if (positionals.length !== 1) throw usage('give one OWNER/REPO[:QUANT|FILE] (see --help)');
    const { pull } = await import('../../hub/pull.js');
    const bar = progress('downloading');
    const r = await pull(positionals[0]!, {
      offline: offlineFrom(values),
      onProgress: (d, t) => bar.update(d, t),
      onInfo: (line) => { if (process.stderr.isTTY) process.stderr.write(`\r\x1b[K${line}\n`); },
    });
    bar.done();
    if (values.json) process.stdout.write(JSON.stringify(r) + '\n');
    else process.stdout.write(r.path + '\n');
    const fetched = r.files.filter((f) => !f.cached).length;
    process.stderr.write(`${r.repo}/${r.file}: ${r.files.length} file(s), ${fetched} downloaded, ${r.files.length - fetched} from the cache\n`);
    return 0;
  },
};
