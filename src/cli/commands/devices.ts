// `gguf-edge devices`: the compute devices this build has, in the order --device accepts them.
import { parseArgs } from 'node:util';
import type { Command } from '../main.js';
import { deviceNames, getDevice, DEFAULT_DEVICE } from '../../backends/registry.js';
import { num } from '../options.js';

const help = `Usage: gguf-edge devices [--json] [-t N]

Lists the compute devices (name, kind, description, memory) and marks the default.

Options:
  -t, --threads N  threads for the cpu device (default: available cores)
  --json           print a JSON array of {name, kind, description, default, memory: {free, total}}
  -h, --help       show this help`;

export const command: Command = {
  summary: 'list compute devices',
  help,
  async run(args) {
    const { values } = parseArgs({ args, options: { json: { type: 'boolean' }, threads: { type: 'string', short: 't' } } });
    const threads = values.threads !== undefined ? Math.max(1, Math.floor(num(values.threads, 'threads', 1))) : undefined;
    const rows = [];
    for (const name of deviceNames()) {
      const d = await getDevice(name, { threads });
      rows.push({ name: d.name, kind: d.kind, description: d.description, default: name === DEFAULT_DEVICE, memory: d.memory() });
    }
    if (values.json) process.stdout.write(JSON.stringify(rows) + '\n');
    else for (const r of rows) process.stdout.write(`${r.default ? '*' : ' '} ${r.name.padEnd(10)} ${r.kind.padEnd(4)} ${r.description}\n`);
    return 0;
  },
};
