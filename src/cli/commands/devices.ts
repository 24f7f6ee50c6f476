// `gguf-edge devices`: every registered compute device (built-in and plug-in), in the order --device
// accepts them, with what each claims (src/backends/describe.ts).
import { parseArgs } from 'node:util';
import type { Command } from '../main.js';
import { deviceNames, deviceSource, getDevice, DEFAULT_DEVICE } from '../../backends/registry.js';
import { describeDevice, type DeviceInfo } from '../../backends/describe.js';
import { DEVICE_PLUGIN_HELP } from '../../backends/plugins.js';
import { num } from '../options.js';

const help = `Usage: gguf-edge devices [--json] [-t N] [--device-plugin PATH]...

Lists every compute device (built-in and loaded plug-ins): name, kind, memory free/total, the ops and
weight types it claims, its static shape buckets, where it comes from and its status; * marks the default.

Options:
  -t, --threads N  threads for the cpu device (default: available cores)
  --json           print a JSON array, one object per device:
                   {name, kind, description, default, source, memory: {free, total}, ops,
                    weight_types, static_shapes, claims, status} (see docs/devices.md)
  -h, --help       show this help

${DEVICE_PLUGIN_HELP}`;

const MIB = 1024 * 1024;
function mib(n: number): string { return n > 0 ? `${(n / MIB).toFixed(0)} MiB` : '-'; }

function human(r: DeviceInfo): string {
  const lines = [`${r.default ? '*' : ' '} ${r.name.padEnd(10)} ${r.kind.padEnd(4)} ${r.description}`];
  const pad = '    ';
  lines.push(`${pad}memory: ${mib(r.memory.free)} free / ${mib(r.memory.total)} total   status: ${r.status}${r.source !== 'builtin' ? `   plug-in: ${r.source}` : ''}`);
  lines.push(`${pad}ops (${r.claims === 'groups' ? 'whole groups' : 'per op'}): ${r.ops.join(' ') || '(none)'}`);
  lines.push(`${pad}weight types: ${r.weight_types.join(' ') || '(none)'}`);
  lines.push(`${pad}static shapes: ${r.static_shapes ? r.static_shapes.join(', ') + ' tokens' : 'any batch size'}`);
  return lines.join('\n');
}

export const command: Command = {
  summary: 'list compute devices (built-in and plug-in) and what they claim',
  help,
  async run(args) {
    const { values } = parseArgs({ args, options: { json: { type: 'boolean' }, threads: { type: 'string', short: 't' } } });
    const threads = values.threads !== undefined ? Math.max(1, Math.floor(num(values.threads, 'threads', 1))) : undefined;
    const rows: DeviceInfo[] = [];
    // plug-in devices first: a broken one fails before a built-in GPU device's driver logs anything
    for (const name of deviceNames()) if ((deviceSource(name) ?? 'builtin') !== 'builtin') await getDevice(name, { threads });
    for (const name of deviceNames()) {
      const source = deviceSource(name) ?? 'builtin';
      let d;
      try { d = await getDevice(name, { threads }); } catch (e) {
        // a device this machine cannot create (webgpu without an adapter) is listed with the reason
        if ((e as { code?: string }).code !== 'UNSUPPORTED') throw e;
        rows.push({ name, kind: '-', description: '(not available here)', default: name === DEFAULT_DEVICE, source, memory: { free: 0, total: 0 }, ops: [], weight_types: [], static_shapes: null, claims: 'ops', status: `unavailable: ${(e as Error).message}` });
        continue;
      }
      rows.push(describeDevice(d, { default: name === DEFAULT_DEVICE, source }));
    }
    if (values.json) process.stdout.write(JSON.stringify(rows) + '\n');
    else process.stdout.write(rows.map(human).join('\n') + '\n');
    return 0;
  },
};
