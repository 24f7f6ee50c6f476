// `devices [--json]` and device plug-in loading, through the bin script as a user runs it: the example
// plug-in from its path (flag and environment), and every way a plug-in can be broken giving one typed
// line naming the path and the problem.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fixture, repoRoot } from '../helpers/fixtures.js';

const bin = resolve(repoRoot, 'bin/gguf-edge.js');
const EXAMPLE = resolve(repoRoot, 'examples/device-plugin/host-f32.js');
const cli = (args: string[], env: Record<string, string> = {}) =>
  spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', cwd: repoRoot, env: { ...process.env, GGUF_EDGE_DEVICE_PLUGINS: '', ...env } });

const FIELDS = ['name', 'kind', 'description', 'default', 'source', 'memory', 'ops', 'weight_types', 'static_shapes', 'claims', 'status'];

test('devices --json lists the built-in devices with the documented fields', () => {
  const r = cli(['devices', '--json', '-t', '1']);
  assert.equal(r.status, 0, r.stderr);
  const rows = JSON.parse(r.stdout);
  assert.deepEqual(rows.map((d: { name: string }) => d.name).slice(0, 2), ['reference', 'cpu']);
  for (const d of rows) {
    assert.deepEqual(Object.keys(d), FIELDS);
    assert.equal(typeof d.memory.free, 'number');
    assert.equal(typeof d.memory.total, 'number');
  }
  const cpu = rows.find((d: { name: string }) => d.name === 'cpu');
  assert.equal(cpu.default, true);
  assert.equal(cpu.source, 'builtin');
  assert.equal(cpu.status, 'ok');
  assert.ok(cpu.ops.includes('attention') && cpu.weight_types.includes('Q4_K'));
  assert.equal(cpu.static_shapes, null);
});

test('the example plug-in loads from its path (flag, =form, environment) and lists its claims', () => {
  for (const [args, env] of [
    [['devices', '--json', '--device-plugin', 'examples/device-plugin/host-f32.js'], {}],
    [['devices', `--device-plugin=${EXAMPLE}`, '--json'], {}],
    [['devices', '--json'], { GGUF_EDGE_DEVICE_PLUGINS: `${EXAMPLE}` }],
    // the same file from the environment and the flag loads once
    [['--device-plugin', EXAMPLE, 'devices', '--json'], { GGUF_EDGE_DEVICE_PLUGINS: `:${EXAMPLE}:` }],
  ] as [string[], Record<string, string>][]) {
    const r = cli(args, env);
    assert.equal(r.status, 0, `${args.join(' ')}: ${r.stderr}`);
    const d = JSON.parse(r.stdout).find((x: { name: string }) => x.name === 'host-f32');
    assert.ok(d, `${args.join(' ')}: host-f32 not listed`);
    assert.equal(d.source, EXAMPLE);
    assert.equal(d.kind, 'cpu');
    assert.deepEqual(d.ops, ['mul_mat', 'add', 'mul', 'scale', 'rms_norm', 'view_cols']);
    assert.deepEqual(d.weight_types, ['F32', 'F16']);
    assert.equal(d.claims, 'ops');
    assert.equal(d.status, 'ok');
    assert.ok(d.memory.total > 0);
  }
  const human = cli(['devices', '--device-plugin', EXAMPLE]);
  assert.equal(human.status, 0, human.stderr);
  assert.match(human.stdout, /host-f32 .*example plug-in/);
  assert.match(human.stdout, /weight types: F32 F16/);
  // commands that take a device list plug-in devices in their help
  const help = cli(['run', '--help', '--device-plugin', EXAMPLE]);
  assert.match(help.stdout, /host-f32/);
  assert.match(help.stdout, /--device-plugin PATH/);
});

test('a broken plug-in is one PLUGIN_INVALID line naming the path and the problem', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gguf-edge-plugins-'));
  const file = (name: string, src: string) => { const p = join(dir, name); writeFileSync(p, src); return p; };
  const device = (name: string) => `{ name: '${name}', kind: 'cpu', description: 'x', memory: () => ({ free: 0, total: 0 }), bufferType() {}, supportsOp: () => false, prefersOp: () => false, createBackend() {} }`;
  const cases: [string, RegExp][] = [
    [join(dir, 'missing.js'), /file not found/],
    [file('throws.js', `throw new Error('boom at load');`), /failed to load: boom at load/],
    [file('syntax.js', `export const = 1;`), /failed to load/],
    [file('noversion.js', `export const devices = [];`), /no apiVersion/],
    [file('version.js', `export const apiVersion = 2; export const devices = [];`), /apiVersion 2 is not supported/],
    [file('nodevices.js', `export const apiVersion = 1;`), /no devices array/],
    [file('empty.js', `export const apiVersion = 1; export const devices = [];`), /devices array is empty/],
    [file('nocreate.js', `export const apiVersion = 1; export const devices = [{ name: 'x' }];`), /create is not a function/],
    [file('badname.js', `export const apiVersion = 1; export const devices = [{ name: 'a b', create() {} }];`), /is not a device name/],
    [file('dup-builtin.js', `export const apiVersion = 1; export const devices = [{ name: 'cpu', create() {} }];`), /"cpu" is already registered/],
    [file('dup-self.js', `export default { apiVersion: 1, devices: [{ name: 'x', create() {} }, { name: 'x', create() {} }] };`), /listed twice/],
    [file('create-throws.js', `export const apiVersion = 1; export const devices = [{ name: 'x', create() { throw new Error('no hardware'); } }];`), /device "x": create\(\) threw: no hardware/],
    [file('create-null.js', `export const apiVersion = 1; export const devices = [{ name: 'x', create: () => null }];`), /create\(\) returned null/],
    [file('wrong-name.js', `export const apiVersion = 1; export const devices = [{ name: 'x', create: () => (${device('y')}) }];`), /returned a device named "y"/],
    [file('no-supports.js', `export const apiVersion = 1; export const devices = [{ name: 'x', create: () => ({ ...${device('x')}, supportsOp: 1 }) }];`), /supportsOp is not a function/],
    [file('bad-shapes.js', `export const apiVersion = 1; export const devices = [{ name: 'x', create: () => ({ ...${device('x')}, staticShapes: [128, 1] }) }];`), /staticShapes must be/],
  ];
  for (const [path, problem] of cases) {
    const r = cli(['devices', '--device-plugin', path]);
    const what = `${path}: ${r.stderr}`;
    assert.equal(r.status, 1, what);
    assert.equal(r.stdout, '', what);
    const lines = r.stderr.trim().split('\n');
    assert.equal(lines.length, 1, what);
    assert.match(lines[0]!, /\[PLUGIN_INVALID\] device plug-in /, what);
    assert.ok(lines[0]!.includes(path), what);
    assert.match(lines[0]!, problem, what);
    assert.doesNotMatch(r.stderr, /\n\s+at /, what);
  }
  // two plug-ins naming the same device: the second is refused, naming the first
  const a = file('a.js', `export const apiVersion = 1; export const devices = [{ name: 'same', create() {} }];`);
  const b = file('b.js', `export const apiVersion = 1; export const devices = [{ name: 'same', create() {} }];`);
  const r = cli(['devices'], { GGUF_EDGE_DEVICE_PLUGINS: `${a}:${b}` });
  assert.equal(r.status, 1);
  assert.match(r.stderr, new RegExp(`\\[PLUGIN_INVALID\\] device plug-in ${b.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: device name "same" is already registered`));
  // a flag without a path is a usage error
  const u = cli(['devices', '--device-plugin']);
  assert.equal(u.status, 2);
  assert.match(u.stderr, /--device-plugin needs a PATH/);
});

test('run --device-plugin PATH --device host-f32: llama.cpp greedy tokens, unclaimed ops on the cpu device', () => {
  const greedy = JSON.parse(readFileSync(fixture('reference/greedy-llama.cpp.json'), 'utf8'));
  const c = greedy.cases.find((x: { model: string }) => x.model === 'TinyStories-656K.f16.gguf');
  const r = cli(['run', fixture('models/TinyStories-656K.f16.gguf'), '--prompt-tokens', c.prompt_ids.join(','), '-n', String(c.default.generated_ids.length),
    '--temp', '0', '--json', '-t', '1', '--device-plugin', 'examples/device-plugin/host-f32.js', '--device', 'host-f32']);
  assert.equal(r.status, 0, r.stderr);
  const o = JSON.parse(r.stdout);
  assert.deepEqual(o.tokens, c.default.generated_ids);
  // the plug-in device ran ahead of the cpu device, which holds the weights and takes the rest
  assert.deepEqual(o.policy.devices, ['host-f32', 'cpu']);
});
