// `gguf-edge inspect MODEL`: metadata and tensor table of a GGUF file.
import { parseArgs } from 'node:util';
import type { Command } from '../main.js';
import { openGguf } from '../../gguf/open.js';
import { ggmlTypeName } from '../../gguf/ggml-types.js';
import type { GgufMetaValue } from '../../gguf/reader.js';

const help = `Usage: gguf-edge inspect MODEL [--json] [--all]

Prints a GGUF file's header: version, metadata (key = value) and the tensor table
(name, type, shape in GGUF order ne0 first, byte offset, size).

Options:
  --json     print one JSON object {file, version, alignment, data_offset, metadata, tensors}
  --all      print long arrays (e.g. the vocabulary) in full instead of a short preview
  -h, --help show this help`;

function preview(v: GgufMetaValue, all: boolean): unknown {
  if (typeof v === 'bigint') return v.toString();
  if (typeof v !== 'object') return v;
  const arr = Array.from(v as ArrayLike<unknown>, (x) => (typeof x === 'bigint' ? x.toString() : x));
  if (all || arr.length <= 16) return arr;
  return { length: arr.length, head: arr.slice(0, 8) };
}

export const command: Command = {
  summary: 'print a GGUF file\'s metadata and tensor table',
  help,
  async run(args) {
    const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { json: { type: 'boolean' }, all: { type: 'boolean' } } });
    const path = positionals[0];
    if (!path) throw Object.assign(new Error('missing MODEL argument (see --help)'), { code: 'USAGE' });
    const f = openGguf(path);
    const all = !!values.all;
    // fromEntries defines own properties: a key named '__proto__' is shown, not taken as the prototype
    const meta: Record<string, unknown> = Object.fromEntries(Array.from(f.metadata, ([k, v]) => [k, preview(v, all)]));
    const tensors = f.tensors.map((t) => ({ name: t.name, type: ggmlTypeName(t.type), shape: t.dims, offset: t.offset, bytes: t.nBytes }));
    if (values.json) {
      process.stdout.write(JSON.stringify({ file: path, version: f.version, size: f.size, alignment: f.alignment, data_offset: f.dataOffset, metadata: meta, tensors }) + '\n');
      return 0;
    }
    const out: string[] = [];
    out.push(`file: ${path}`, `GGUF version ${f.version}, ${f.size} bytes, alignment ${f.alignment}, data at ${f.dataOffset}`);
    out.push(`metadata (${f.metadata.size}):`);
    for (const [k, v] of Object.entries(meta)) out.push(`  ${k} = ${JSON.stringify(v)}`);
    let params = 0;
    for (const t of f.tensors) params += t.nElements;
    out.push(`tensors (${f.tensors.length}, ${params} parameters):`);
    for (const t of tensors) out.push(`  ${t.name.padEnd(32)} ${t.type.padEnd(6)} [${t.shape.join(', ')}]`.padEnd(64) + ` @${t.offset} ${t.bytes} B`);
    process.stdout.write(out.join('\n') + '\n');
    return 0;
  },
};
