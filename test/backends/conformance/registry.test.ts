// The small form of the conformance suite for every registered device (the registry is iterated, so a
// device added there is covered without touching this file), the example plug-in included, loaded
// from its path as the CLI loads it. The reference device is the oracle, so it is not tested here.
// The full suite is `npm run test:backend-ops -- --device NAME`.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { DeviceError, type Device } from '../../../src/backends/backend.js';
import { loadDevicePlugin } from '../../../src/backends/plugins.js';
import { closeDevices, deviceNames, deviceSource, getDevice } from '../../../src/backends/registry.js';
import { repoRoot } from '../../helpers/fixtures.js';
import { inCi } from '../../helpers/peers.js';
import { buildCases, runConformance, type ManifestEntry } from './suite.js';

const EXAMPLE = resolve(repoRoot, 'examples/device-plugin/host-f32.js');
await loadDevicePlugin(EXAMPLE);
after(() => closeDevices());

const oracle = await getDevice('reference');
const failures = (es: ManifestEntry[]) => es.filter((e) => !e.pass).map((e) => `${e.op} [${e.types}] ${e.shape}: nmse ${e.nmse} > ${e.threshold}`);

test('the example plug-in is registered from its path', () => {
  assert.ok(deviceNames().includes('host-f32'));
  assert.equal(deviceSource('host-f32'), EXAMPLE);
});

for (const name of deviceNames().filter((n) => n !== 'reference')) {
  test(`conformance (small) of every claimed op: ${name}`, async (t) => {
    let device: Device;
    try { device = await getDevice(name, { threads: 2 }); } catch (e) {
      // a device this machine cannot create (webgpu without an adapter): skipped with the reason, failed in CI
      if (!(e instanceof DeviceError) || e.code !== 'UNSUPPORTED') throw e;
      if (inCi()) throw new Error(`CI provides every built-in device (.ci/run): ${e.message}`);
      t.skip(e.message);
      return;
    }
    const cases = buildCases({ size: 'small', tokenCounts: device.staticShapes });
    const errors: string[] = [];
    const entries = await runConformance(device, oracle, cases, (e, error) => { if (error) errors.push(`${e.op} ${e.shape}: ${error}`); });
    assert.ok(entries.length > 0, `${name} claims none of the ${cases.length} cases`);
    assert.deepEqual(errors, [], `${name} threw on claimed cases`);
    assert.deepEqual(failures(entries), []);
    for (const e of entries) assert.equal(e.device, name);
    console.log(`# ${name}: ${entries.length} of ${cases.length} cases claimed, ops ${[...new Set(entries.map((e) => e.op))].join(' ')}`);
  });
}

test('the example claims exactly its table: elementwise ops, rms_norm, view_cols, F32/F16 mul_mat', async () => {
  const device = await getDevice('host-f32');
  const entries = await runConformance(device, oracle, buildCases({ size: 'small' }));
  assert.deepEqual([...new Set(entries.map((e) => e.op))].sort(), ['add', 'mul', 'mul_mat', 'rms_norm', 'scale', 'view_cols']);
  assert.deepEqual([...new Set(entries.filter((e) => e.op === 'mul_mat').map((e) => e.types[0]))].sort(), ['F16', 'F32']);
  // its elementwise ops and rms_norm follow the reference's float order: exact
  for (const e of entries) if (e.op !== 'mul_mat') assert.equal(e.nmse, 0, `${e.op} ${e.shape}`);
});

test('the suite fails a device that is slightly wrong', async () => {
  // the example device with every result scaled by 1.03: each claimed case must fail
  const good = await getDevice('host-f32');
  const off: Device = {
    ...good,
    name: 'host-f32-off',
    createBackend() {
      const b = good.createBackend();
      return {
        device: off,
        async compute(ctx, nodes) {
          await b.compute(ctx, nodes);
          for (const id of nodes) {
            const p = ctx.placement(id);
            const v = p.buffer.hostView!(p.offset, p.nBytes);
            const f = new Float32Array(v.buffer, v.byteOffset, p.nBytes >> 2);
            for (let i = 0; i < f.length; i++) f[i] = f[i]! * 1.03;
          }
        },
      };
    },
  };
  const entries = await runConformance(off, oracle, buildCases({ size: 'small' }));
  assert.ok(entries.length > 0);
  assert.deepEqual(entries.filter((e) => e.pass).map((e) => `${e.op} ${e.shape}`), []);
});
