// The `gguf-edge re` command end to end, as a user runs it: JSON shapes, files written, exit codes, and one
// clear stderr line per error.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Builder } from 'flatbuffers';
import { BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import { rng } from './prng.js';
import { simCompile, randomMatrix } from './sim-compiler.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const BIN = join(ROOT, 'bin', 'gguf-edge.js');
const dir = mkdtempSync(join(tmpdir(), 're-cli-'));

function run(...args: string[]) {
  const r = spawnSync(process.execPath, [BIN, 're', ...args], { cwd: dir, encoding: 'utf8' });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

function runJson(...args: string[]) {
  const r = run(...args, '--json');
  assert.equal(r.code, 0, r.err);
  assert.equal(r.err, '');
  return JSON.parse(r.out);
}

function assertFails(r: { code: number | null; out: string; err: string }, code: string, re: RegExp) {
  assert.equal(r.code, 1);
  const lines = r.err.trimEnd().split('\n');
  assert.equal(lines.length, 1, `one stderr line: ${r.err}`);
  assert.match(lines[0]!, new RegExp(`^gguf-edge re: \\[${code}\\] `));
  assert.match(lines[0]!, re);
}

test('probe-gen → vendor compiler → layout-solve → layout-unpack / layout-pack through the CLI', () => {
  const R = 24, C = 40;
  const pg = runJson('probe-gen', '--rows', String(R), '--cols', String(C), '--bits', '8', '--out', 'probes');
  assert.deepEqual(Object.keys(pg).sort(), ['bits', 'cols', 'dir', 'manifest', 'probes', 'rows']);
  assert.equal(pg.probes.length, 7);
  assert.deepEqual(pg.probes[2], { file: 'probe-02.i8', role: 'digit', digit: 0 });
  const r = rng(5);
  mkdirSync(join(dir, 'compiled'));
  for (const [k, p] of pg.probes.entries()) {
    const b = readFileSync(join(dir, 'probes', p.file));
    assert.equal(b.length, R * C);
    writeFileSync(join(dir, 'compiled', `compiled-${String(k).padStart(2, '0')}.bin`), simCompile('nibble-planes', R, C, new Int8Array(b.buffer, b.byteOffset, b.length), r));
  }
  const solved = runJson('layout-solve', '--probes', 'probes', '--compiled', 'compiled', '--out', 'layout.json');
  assert.deepEqual(Object.keys(solved).sort(), ['bits', 'cols', 'components', 'out', 'paddingBytes', 'region', 'rows', 'summary']);
  assert.deepEqual(solved.components.map((c: { role: string; encoding: string }) => `${c.role}/${c.encoding}`), ['lo/twos', 'hi/offset']);
  assert.ok(solved.summary.some((s: string) => /18 bytes after the fine/.test(s)));
  assert.ok(existsSync(join(dir, 'layout.json')));

  const m = randomMatrix(R, C, 8, r);
  const file = simCompile('nibble-planes', R, C, m, r);
  writeFileSync(join(dir, 'model.bin'), file);
  const un = runJson('layout-unpack', '--layout', 'layout.json', '--blob', 'model.bin', '--out', 'm.i8');
  assert.deepEqual(Object.keys(un).sort(), ['bits', 'cols', 'max', 'min', 'out', 'rows', 'values']);
  assert.deepEqual(new Int8Array(readFileSync(join(dir, 'm.i8'))), m);
  const pk = runJson('layout-pack', '--layout', 'layout.json', '--in', 'm.i8', '--out', 'w.bin');
  assert.deepEqual(pk, { out: 'w.bin', bytes: solved.region.length, regionOffset: solved.region.offset, rows: R, cols: C, bits: 8, source: 'm.i8' });
  assert.deepEqual(new Uint8Array(readFileSync(join(dir, 'w.bin'))), file.subarray(solved.region.offset, solved.region.offset + solved.region.length));
  const human = run('layout-solve', '--probes', 'probes', '--compiled', 'compiled', '--out', 'layout2.json');
  assert.equal(human.code, 0);
  assert.match(human.out, /low \(fine\) nibbles of int8, two's complement/);

  // diff: two builds of the same probe mask the header's random words; the weights then differ.
  const d = runJson('diff', 'compiled/compiled-02.bin', 'compiled/compiled-03.bin', '--mask', 'compiled/compiled-00.bin', 'compiled/compiled-06.bin', '--word', '32');
  assert.deepEqual(Object.keys(d).sort(), ['compared', 'differing', 'masked', 'maskedRegions', 'regions', 'runLengths', 'sizeA', 'sizeB', 'word']);
  assert.deepEqual(d.maskedRegions, [{ offset: 12, length: 4, words: 1 }, { offset: 24, length: 4, words: 1 }]);
  assert.ok(d.regions.every((g: { offset: number }) => g.offset >= 32));

  // Bad or inconsistent probes: a clear error, no layout.
  writeFileSync(join(dir, 'compiled', 'compiled-04.bin'), readFileSync(join(dir, 'compiled', 'compiled-03.bin')));
  assertFails(run('layout-solve', '--probes', 'probes', '--compiled', 'compiled', '--out', 'bad.json'), 'LAYOUT_INCONSISTENT', /not found/);
  assert.ok(!existsSync(join(dir, 'bad.json')));
  assertFails(run('layout-solve', '--probes', 'probes', '--compiled', 'nowhere', '--out', 'bad.json'), 'COMPILED_MISSING', /compiled-00\.bin/);
  assertFails(run('layout-pack', '--layout', 'layout.json', '--in', 'probes/manifest.json', '--out', 'x.bin'), 'SIZE_MISMATCH', /expects 24x40/);
  assertFails(run('layout-unpack', '--layout', 'probes/manifest.json', '--blob', 'model.bin', '--out', 'x.i8'), 'LAYOUT_INVALID', /manifest\.json: not a gguf-edge layout/);
});

test('protobuf, flatbuffer, locate, entropy through the CLI', () => {
  const blob = rng(9).bytes(3000);
  const w = new BinaryWriter().tag(1, WireType.LengthDelimited).string('axmodel').tag(2, WireType.Varint).int32(-7)
    .tag(3, WireType.LengthDelimited).fork().tag(1, WireType.Bit32).float(0.125).tag(9, WireType.LengthDelimited).bytes(blob).join();
  const pb = w.finish();
  writeFileSync(join(dir, 'c.pb'), pb);
  const j = runJson('protobuf', 'c.pb');
  assert.deepEqual(Object.keys(j).sort(), ['base', 'fields', 'file', 'size']);
  assert.equal(j.fields[0].len.string, 'axmodel');
  assert.equal(j.fields[1].varint.signed, '-7');
  assert.equal(j.fields[2].len.as, 'message');
  assert.equal(j.fields[2].len.message[0].fixed32.f32, 0.125);
  const blobs = runJson('protobuf', 'c.pb', '--blobs');
  assert.equal(blobs.blobs.length, 1);
  assert.deepEqual({ path: blobs.blobs[0].path, size: blobs.blobs[0].size }, { path: '3.9', size: 3000 });
  // --offset/--length decode a window; offsets stay absolute.
  const inner = runJson('protobuf', 'c.pb', '--offset', String(j.fields[2].len.dataOffset), '--length', String(j.fields[2].len.size));
  assert.equal(inner.fields[0].offset, j.fields[2].len.dataOffset);
  const human = run('protobuf', 'c.pb');
  assert.match(human.out, /1: len 7 @\d+ → string "axmodel"/);
  writeFileSync(join(dir, 'trunc.pb'), pb.subarray(0, 40));
  const t = run('protobuf', 'trunc.pb');
  assertFails(t, 'PB_MALFORMED', /trunc\.pb @\d+: field 3: length \d+ runs past the end/);
  assert.match(t.out, /axmodel/, 'what decoded before the damage is printed');

  const b = new Builder(64);
  const s = b.createString('conv1.weight');
  b.startObject(2); b.addFieldOffset(0, s, 0); b.addFieldInt32(1, 4096, 0); b.finish(b.endObject());
  const fb = b.asUint8Array();
  const file = new Uint8Array(64 + fb.length); file.set(fb, 64);
  writeFileSync(join(dir, 'f.bin'), file);
  const f = runJson('flatbuffer', 'f.bin', '--offset', '64');
  assert.deepEqual(Object.keys(f).sort(), ['base', 'file', 'root', 'rootOffset', 'size']);
  assert.equal(f.root.fields[0].string, 'conv1.weight');
  assert.equal(f.root.fields[1].scalar.i32, 4096);
  assertFails(run('flatbuffer', 'f.bin'), 'FB_MALFORMED', /f\.bin: buffer at 0: root offset 0/);
  assertFails(run('flatbuffer', 'f.bin', '--offset', '9999'), 'OUT_OF_RANGE', /past the end/);

  const loc = runJson('locate', 'c.pb', '--f32', '0.125');
  assert.deepEqual(Object.keys(loc).sort(), ['bits', 'count', 'endian', 'file', 'kind', 'offsets', 'truncated', 'value']);
  assert.equal(loc.count, 1);
  assert.equal(new DataView(pb.buffer, pb.byteOffset).getFloat32(loc.offsets[0], true), 0.125);
  assert.equal(runJson('locate', 'f.bin', '--u32', '4096').count, 1);
  const ent = runJson('entropy', 'c.pb', '--window', '512');
  assert.deepEqual(Object.keys(ent).sort(), ['file', 'overall', 'segments', 'size', 'step', 'window', 'windows']);
  assert.equal(ent.windows.length, Math.ceil(pb.length / 512));
  assert.ok(ent.windows[2].entropy > 7);

  assertFails(run('nope'), 'BAD_ARGS', /unknown subcommand 'nope'/);
  assertFails(run('locate', 'c.pb'), 'BAD_ARGS', /exactly one of/);
  assertFails(run('locate', 'c.pb', '--u32', '-1'), 'BAD_ARGS', /--u32/);
  assertFails(run('entropy', 'missing.bin'), 'IO', /cannot read missing\.bin: ENOENT/);
  assertFails(run('probe-gen', '--rows', '4', '--cols', 'x', '--bits', '8', '--out', 'p'), 'BAD_ARGS', /--cols expects/);
  assertFails(run('probe-gen', '--rows', '4', '--cols', '4', '--bits', '3', '--out', 'p'), 'BAD_ARGS', /--bits must be 8 or 4/);
  assertFails(run('diff', 'c.pb', 'f.bin', '--mask', 'c.pb'), 'BAD_ARGS', /at least two builds/);
  const help = run('--help');
  assert.equal(help.code, 0);
  for (const sub of ['protobuf', 'flatbuffer', 'diff', 'locate', 'entropy', 'probe-gen', 'layout-solve', 'layout-unpack', 'layout-pack']) assert.match(help.out, new RegExp(`re ${sub} `));
});
