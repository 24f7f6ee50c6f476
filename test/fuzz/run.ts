// `npm run fuzz [-- --cases N --seed S --only I]`: the full model-file fuzz (test/fuzz/model-fuzz.ts),
// 100,000 cases by default, on a one-thread cpu device (the machine stays usable). Prints the count of
// every outcome (ok, or the typed error's code), the slowest case (wall clock and CPU time) and any untyped
// outcome; exits non-zero when a case ends in an untyped error or takes 1 s or more (wall clock; on a busy
// machine see the CPU-time figure). Replay one case with --only I; split a run with --start I --cases N.
import { parseArgs } from 'node:util';
import { createCpuDevice } from '../../src/backends/cpu/device.js';
import { formatStats, fuzz, fuzzSeeds } from './model-fuzz.js';

const { values } = parseArgs({ options: { cases: { type: 'string', default: '100000' }, seed: { type: 'string', default: '1' }, only: { type: 'string' }, start: { type: 'string', default: '0' }, threads: { type: 'string', default: '1' } } });
const device = await createCpuDevice({ threads: Number(values.threads) });
const seeds = fuzzSeeds();
const t0 = performance.now();
console.log(`fuzz: ${values.only !== undefined ? `case ${values.only}` : `${values.cases} cases from #${values.start}`}, seed ${values.seed}, over ${seeds.map((s) => `${s.name} (${s.bytes.length} B)`).join(', ')}`);
const stats = await fuzz(seeds, device, {
  cases: Number(values.cases), seed: Number(values.seed), start: Number(values.start), only: values.only !== undefined ? Number(values.only) : undefined,
  progress: (n, s) => { if (n % 5000 === 0) console.log(`--- after ${n} cases\n${formatStats({ ...s, totalMs: performance.now() - t0 })}`); },
});
console.log(formatStats(stats));
console.log(`wasm memory at the end: ${(device.runtime.memory.buffer.byteLength / 2 ** 20).toFixed(1)} MiB; JS heap ${(process.memoryUsage().heapUsed / 2 ** 20).toFixed(1)} MiB; RSS ${(process.memoryUsage().rss / 2 ** 20).toFixed(1)} MiB`);
await device.close();
process.exit(stats.failures.length > 0 || stats.slowest.ms >= 1000 ? 1 : 0);
