// layout-pack from a GGUF tensor: read with the project's GGUF reader, dequantized, requantized per row.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeGguf } from '../../src/gguf/writer.js';
import { parseGguf } from '../../src/gguf/reader.js';
import { GgmlType } from '../../src/gguf/ggml-types.js';
import { quantizeRow } from '../../src/quant/quantize.js';
import { ggufTensorToInt } from '../../src/re/requant.js';
import { generateProbes } from '../../src/re/probes.js';
import { solveLayout } from '../../src/re/solve.js';
import { unpackLayout } from '../../src/re/layout.js';
import { ReError } from '../../src/re/errors.js';
import { rng } from './prng.js';
import { simCompile } from './sim-compiler.js';

const ROWS = 16, COLS = 64;

function makeGguf(seed: number) {
  const r = rng(seed);
  const x = Float32Array.from({ length: ROWS * COLS }, () => (r.next() - 0.5) * 4 * (1 + r.int(0, 3)));
  x.fill(0, 3 * COLS, 4 * COLS); // an all-zero row: scale 0, values 0
  const q8 = new Uint8Array((ROWS * COLS / 32) * 34);
  quantizeRow(GgmlType.Q8_0, x, 0, q8, 0, ROWS * COLS);
  const bytes = writeGguf({
    metadata: [['general.architecture', { type: 'string', value: 'test' }]],
    tensors: [
      { name: 'w.f32', dims: [COLS, ROWS], type: GgmlType.F32, data: new Uint8Array(x.buffer) },
      { name: 'w.q8', dims: [COLS, ROWS], type: GgmlType.Q8_0, data: q8 },
      { name: 'w.wrong', dims: [ROWS, COLS], type: GgmlType.F32, data: new Uint8Array(x.buffer) },
    ],
  });
  return { x, bytes };
}

/** What the device should get: per row, scale = max|x| / qmax and q = round-half-away(x / scale). */
function expected(x: Float32Array, qmax: number) {
  const q = new Int8Array(x.length), s = new Float32Array(ROWS);
  for (let r = 0; r < ROWS; r++) {
    const row = x.subarray(r * COLS, (r + 1) * COLS);
    const amax = row.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
    s[r] = amax / qmax;
    row.forEach((v, c) => { q[r * COLS + c] = amax ? Math.max(-qmax, Math.min(qmax, Math.sign(v) * Math.round(Math.abs(v) / (amax / qmax)))) : 0; });
  }
  return { q, s };
}

test('GGUF tensors (f32, q8_0) requantize per row to int8 and int4 within half a step', () => {
  const { x, bytes } = makeGguf(1);
  const file = parseGguf(bytes, 'mem.gguf');
  for (const bits of [8, 4] as const) {
    const qmax = bits === 8 ? 127 : 7;
    const got = ggufTensorToInt(file, 'w.f32', ROWS, COLS, bits);
    const want = expected(x, qmax);
    assert.deepEqual(got.values, want.q);
    assert.deepEqual(got.scales, want.s);
    for (let i = 0; i < x.length; i++) {
      const s = got.scales[Math.floor(i / COLS)]!;
      assert.ok(Math.abs(s * got.values[i]! - x[i]!) <= s / 2 + 1e-6);
    }
    // Q8_0: the same path through the block dequantizer.
    const q8 = ggufTensorToInt(file, 'w.q8', ROWS, COLS, bits);
    for (let i = 0; i < x.length; i++) {
      const s = q8.scales[Math.floor(i / COLS)]!;
      // q8_0 itself is off by at most half its own step (amax/127 per block), plus our half step.
      assert.ok(Math.abs(s * q8.values[i]! - x[i]!) <= s / 2 + (s * qmax) / 127 / 2 + 1e-5, `q8 ${i}`);
    }
  }
  assert.throws(() => ggufTensorToInt(file, 'w.wrong', ROWS, COLS, 8), (e: unknown) => e instanceof ReError && e.code === 'SIZE_MISMATCH' && /dims \[16, 64\]/.test(e.message));
  assert.throws(() => ggufTensorToInt(file, 'nope', ROWS, COLS, 8), (e: unknown) => e instanceof ReError && /no tensor named "nope"/.test(e.message));
});

test('layout-pack --gguf --tensor writes the device blob and the scales', () => {
  const dir = mkdtempSync(join(tmpdir(), 're-gguf-'));
  const { x, bytes } = makeGguf(2);
  writeFileSync(join(dir, 'm.gguf'), bytes);
  const r = rng(3);
  const { manifest, matrices } = generateProbes({ rows: ROWS, cols: COLS, bits: 4 });
  const layout = solveLayout({ manifest, probes: matrices, compiled: matrices.map((m) => simCompile('int4-pairs', ROWS, COLS, m, r)) });
  writeFileSync(join(dir, 'layout.json'), JSON.stringify(layout));
  const bin = join(fileURLToPath(new URL('../../../', import.meta.url)), 'bin', 'gguf-edge.js');
  const res = spawnSync(process.execPath, [bin, 're', 'layout-pack', '--layout', 'layout.json', '--gguf', 'm.gguf', '--tensor', 'w.f32', '--scales', 's.f32', '--out', 'w.bin', '--json'], { cwd: dir, encoding: 'utf8' });
  assert.equal(res.status, 0, res.stderr);
  assert.equal(JSON.parse(res.stdout).source, 'm.gguf:w.f32');
  const want = expected(x, 7);
  // The blob is what the vendor compiler would have produced for these int4 values.
  const blob = new Uint8Array(readFileSync(join(dir, 'w.bin')));
  const compiled = simCompile('int4-pairs', ROWS, COLS, want.q, r);
  assert.deepEqual(blob, compiled.subarray(layout.region.offset, layout.region.offset + layout.region.length));
  assert.deepEqual(unpackLayout(layout, blob), want.q);
  assert.deepEqual(new Float32Array(new Uint8Array(readFileSync(join(dir, 's.f32'))).buffer), want.s);
  const bad = spawnSync(process.execPath, [bin, 're', 'layout-pack', '--layout', 'layout.json', '--gguf', 'm.gguf', '--tensor', 'w.wrong', '--out', 'x.bin'], { cwd: dir, encoding: 'utf8' });
  assert.equal(bad.status, 1);
  assert.match(bad.stderr, /^gguf-edge re: \[SIZE_MISMATCH\] m\.gguf: tensor "w\.wrong" has dims \[16, 64\]/);
});
