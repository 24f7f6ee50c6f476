// `npm run test:backend-ops -- --device NAME [--out FILE] [--device-plugin PATH]... [--small] [-t N]`:
// the full conformance suite (suite.ts) for one device against the reference device. Writes the JSON
// manifest (an array of {device, op, types, shape, max_abs_err, nmse, threshold, pass}, one per case)
// to FILE (default backend-ops-<device>.json in the current directory), prints a summary, and exits 1
// when any case fails or the device claims none (2 on bad usage).
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { enableRelaxedSimd } from '../../../src/backends/cpu/node-flags.js';
import { loadStartupPlugins } from '../../../src/backends/plugins.js';
import { closeDevices, deviceNames, getDevice } from '../../../src/backends/registry.js';
import { buildCases, runConformance } from './suite.js';

const USAGE = `Usage: npm run test:backend-ops -- --device NAME [--out FILE] [--device-plugin PATH]... [--small] [-t N]

Runs every op the device claims x weight types x shapes against the reference device.
  --device NAME         the device under test (any registered device except reference)
  --out FILE            manifest path (default backend-ops-<device>.json)
  --device-plugin PATH  load a device plug-in first (repeatable; also GGUF_EDGE_DEVICE_PLUGINS)
  --small               the reduced case set npm test runs
  -t, --threads N       threads for devices that have them (default 2)`;

async function main(): Promise<number> {
  enableRelaxedSimd();
  let args: string[];
  try {
    args = await loadStartupPlugins(process.argv.slice(2));
  } catch (e) {
    process.stderr.write(`backend-ops: [${(e as { code?: string }).code ?? 'ERROR'}] ${(e as Error).message}\n`);
    return (e as { code?: string }).code === 'USAGE' ? 2 : 1;
  }
  let values;
  try {
    ({ values } = parseArgs({ args, options: { device: { type: 'string' }, out: { type: 'string' }, small: { type: 'boolean' }, threads: { type: 'string', short: 't' }, help: { type: 'boolean', short: 'h' } } }));
  } catch (e) {
    process.stderr.write(`backend-ops: ${(e as Error).message}\n${USAGE}\n`);
    return 2;
  }
  if (values.help) { process.stdout.write(USAGE + '\n'); return 0; }
  const name = values.device;
  if (!name || name === 'reference') {
    process.stderr.write(`backend-ops: --device NAME is required (one of ${deviceNames().filter((n) => n !== 'reference').join(', ')})\n`);
    return 2;
  }
  if (!deviceNames().includes(name)) {
    process.stderr.write(`backend-ops: unknown device "${name}" (available: ${deviceNames().join(', ')}; plug-ins need --device-plugin PATH)\n`);
    return 2;
  }
  const threads = values.threads !== undefined ? Number(values.threads) : 2;
  if (!Number.isInteger(threads) || threads < 1) { process.stderr.write(`backend-ops: --threads must be a positive integer\n`); return 2; }
  const out = values.out ?? `backend-ops-${name}.json`;
  try {
    const device = await getDevice(name, { threads });
    const oracle = await getDevice('reference');
    const cases = buildCases({ size: values.small ? 'small' : 'full', tokenCounts: device.staticShapes });
    const entries = await runConformance(device, oracle, cases, (e, error) => {
      if (!e.pass) process.stdout.write(`FAIL ${e.op} [${e.types.join(', ')}] ${e.shape}: ${error ? `threw ${error}` : `nmse ${e.nmse} > ${e.threshold} (max abs err ${e.max_abs_err})`}\n`);
    });
    writeFileSync(out, JSON.stringify(entries, null, 1) + '\n');
    // summary per op: cases, failures, worst NMSE and max abs error
    const byOp = new Map<string, { n: number; fail: number; nmse: number; abs: number }>();
    for (const e of entries) {
      const s = byOp.get(e.op) ?? { n: 0, fail: 0, nmse: 0, abs: 0 };
      s.n++; if (!e.pass) s.fail++;
      s.nmse = Math.max(s.nmse, e.nmse ?? Infinity); s.abs = Math.max(s.abs, e.max_abs_err);
      byOp.set(e.op, s);
    }
    process.stdout.write(`device ${name}: ${entries.length} of ${cases.length} cases claimed\nop | cases | failed | worst nmse | worst max abs err\n`);
    for (const [op, s] of byOp) process.stdout.write(`${op} | ${s.n} | ${s.fail} | ${s.nmse.toExponential(2)} | ${s.abs.toExponential(2)}\n`);
    const failed = entries.filter((e) => !e.pass).length;
    process.stdout.write(`manifest: ${out}\n`);
    if (entries.length === 0) { process.stderr.write(`backend-ops: device ${name} claims none of the suite's cases\n`); return 1; }
    if (failed > 0) { process.stderr.write(`backend-ops: ${failed} of ${entries.length} cases failed\n`); return 1; }
    return 0;
  } catch (e) {
    process.stderr.write(`backend-ops: ${(e as { code?: string }).code ? `[${(e as { code?: string }).code}] ` : ''}${(e as Error).message}\n`);
    return 1;
  } finally {
    await closeDevices();
  }
}

process.exitCode = await main();
