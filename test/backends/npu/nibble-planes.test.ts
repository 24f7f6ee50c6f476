// The nibble-plane weight layout against the byte contract (hand-checked bytes and an
// independent per-weight oracle), the GGUF -> int8 mapping against the project's ggml codecs, and the
// RE loop through the real CLI: `re probe-gen` -> `npu pack-matrix` -> `re layout-solve` recovers the
// layout, and `re layout-unpack` of a packed random matrix returns it exactly.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { packMatrix, unpackMatrix, paddedCols, planeBytes, NibblePlaneError } from '../../../src/backends/npu/nibble-planes.js';
import { weightToInt8 } from '../../../src/backends/npu/weight-int8.js';
import { GgmlType } from '../../../src/gguf/ggml-types.js';
import { dequantizeRow, quantizeRow, f16ToF32 } from '../../../src/quant/index.js';
import { rng } from '../../re/prng.js';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const BIN = join(ROOT, 'bin', 'gguf-edge.js');

function randomI8(n: number, seed: number): Int8Array {
  const r = rng(seed), m = new Int8Array(n);
  for (let i = 0; i < n; i++) m[i] = r.int(-128, 127);
  return m;
}

/** The sentence, weight by weight: block b = c div 36, j = c mod 36; fine byte j>>1, coarse byte 18 + (j>>1), bits 4*(j&1). */
function oraclePack(m: Int8Array, rows: number, cols: number): Uint8Array {
  const rowLen = Math.ceil(cols / 36) * 36;
  const out = new Uint8Array(rows * rowLen);
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      const byte = m[r * cols + c]! & 0xff;
      const block = r * rowLen + Math.floor(c / 36) * 36, j = c % 36, shift = (j % 2) * 4;
      out[block + Math.floor(j / 2)]! |= (byte & 0x0f) << shift;
      out[block + 18 + Math.floor(j / 2)]! |= (byte >> 4) << shift;
    }
  }
  return out;
}

test('nibble planes: hand-checked bytes of one block', () => {
  // weights 0x12, -3 (0xfd), 0x7f, -128 (0x80), 5 in a row of 5: padded to 36
  const p = packMatrix(Int8Array.from([0x12, -3, 0x7f, -128, 5]), 1, 5);
  assert.equal(p.length, 36);
  const want = new Uint8Array(36);
  want[0] = 0xd2; want[18] = 0xf1; // weights 0,1: low nibbles 2|d<<4, high nibbles 1|f<<4
  want[1] = 0x0f; want[19] = 0x87; // weights 2,3: low f|0<<4, high 7|8<<4
  want[2] = 0x05; want[20] = 0x00; // weight 4 and the zero padding weight 5
  assert.deepEqual(p, want);
});

test('nibble planes: random matrices equal the per-weight oracle and unpack exactly', () => {
  for (const [rows, cols, seed] of [[1, 36, 1], [3, 37, 2], [7, 72, 3], [5, 100, 4], [16, 256, 5], [2, 1, 6]] as const) {
    const m = randomI8(rows * cols, seed);
    const p = packMatrix(m, rows, cols);
    assert.equal(p.length, planeBytes(rows, cols));
    assert.equal(p.length, rows * paddedCols(cols));
    assert.deepEqual(p, oraclePack(m, rows, cols), `${rows}x${cols}`);
    assert.deepEqual(unpackMatrix(p, rows, cols), m);
  }
  const p = packMatrix(randomI8(40, 9), 1, 40);
  p[20 + 18] = 0x10; // a padding weight's coarse nibble (weight 41)
  assert.throws(() => unpackMatrix(p, 1, 40), (e: unknown) => e instanceof NibblePlaneError && /padding weight 41/.test((e as Error).message));
  assert.throws(() => packMatrix(new Int8Array(5), 2, 3), NibblePlaneError);
});

test('GGUF -> int8: Q8_0 and Q4_0 keep their integers and scales; F32 requantizes as ggml Q8_0 and reports its error', () => {
  const rows = 3, cols = 96, r = rng(11);
  const x = new Float32Array(rows * cols);
  for (let i = 0; i < x.length; i++) x[i] = (r.next() - 0.5) * 4 * (1 + (i % 7));
  for (const type of [GgmlType.Q8_0, GgmlType.Q4_0]) {
    const bs = type === GgmlType.Q8_0 ? 34 : 18, rowBytes = (cols / 32) * bs;
    const src = new Uint8Array(rows * rowBytes);
    for (let i = 0; i < rows; i++) quantizeRow(type, x, i * cols, src, i * rowBytes, cols);
    const deq = new Float32Array(cols);
    const stats = weightToInt8(type, src, rows, cols, (row, q, scales) => {
      dequantizeRow(type, src, row * rowBytes, deq, 0, cols);
      for (let c = 0; c < cols; c++) {
        // the source's own f16 scale bits, and q * d == the ggml dequantization exactly
        assert.equal(scales[c >> 5], src[row * rowBytes + (c >> 5) * bs]! | (src[row * rowBytes + (c >> 5) * bs + 1]! << 8));
        assert.equal(Math.fround(q[c]! * f16ToF32(scales[c >> 5]!)), deq[c]);
        if (type === GgmlType.Q4_0) assert.ok(q[c]! >= -8 && q[c]! <= 7);
      }
    });
    assert.deepEqual(stats, { exact: true, maxAbsErr: 0, relErr: 0 });
  }
  // F32: the same integers and scales as the project's ggml Q8_0 quantizer; the error measured independently
  const f32 = new Uint8Array(x.buffer.slice(0));
  const q8 = new Uint8Array(rows * (cols / 32) * 34);
  for (let i = 0; i < rows; i++) quantizeRow(GgmlType.Q8_0, x, i * cols, q8, i * (cols / 32) * 34, cols);
  let maxAbs = 0, e2 = 0, x2 = 0;
  const stats = weightToInt8(GgmlType.F32, f32, rows, cols, (row, q, scales) => {
    for (let c = 0; c < cols; c++) {
      const o = row * (cols / 32) * 34 + (c >> 5) * 34;
      assert.equal(scales[c >> 5], q8[o]! | (q8[o + 1]! << 8));
      assert.equal(q[c], (q8[o + 2 + (c & 31)]! << 24) >> 24);
      const e = Math.abs(x[row * cols + c]! - q[c]! * f16ToF32(scales[c >> 5]!));
      maxAbs = Math.max(maxAbs, e); e2 += e * e; x2 += x[row * cols + c]! ** 2;
    }
  });
  assert.equal(stats.exact, false);
  assert.equal(stats.maxAbsErr, maxAbs);
  assert.ok(Math.abs(stats.relErr - Math.sqrt(e2 / x2)) < 1e-12);
  assert.ok(stats.relErr > 0 && stats.relErr < 0.01, `int8 error ${stats.relErr}`);
});

function cli(cwd: string, ...args: string[]) {
  const r = spawnSync(process.execPath, [BIN, ...args, '--json'], { cwd, encoding: 'utf8' });
  assert.equal(r.status, 0, `${args.join(' ')}: ${r.stderr}`);
  assert.equal(r.stderr, '');
  return JSON.parse(r.stdout);
}

test('RE loop through the CLI: probe-gen -> npu pack-matrix -> layout-solve recovers the nibble planes; layout-unpack returns a packed matrix', () => {
  for (const [R, C] of [[24, 72], [9, 40]] as const) {
    const dir = mkdtempSync(join(tmpdir(), 'npu-re-'));
    const pg = cli(dir, 're', 'probe-gen', '--rows', String(R), '--cols', String(C), '--bits', '8', '--out', 'probes');
    mkdirSync(join(dir, 'compiled'));
    for (const [k, p] of pg.probes.entries()) {
      const res = cli(dir, 'npu', 'pack-matrix', '--rows', String(R), '--cols', String(C), '--in', join('probes', p.file), '--out', join('compiled', `compiled-${String(k).padStart(2, '0')}.bin`));
      assert.deepEqual(res, { rows: R, cols: C, paddedCols: paddedCols(C), bytes: R * paddedCols(C), out: join('compiled', `compiled-${String(k).padStart(2, '0')}.bin`) });
    }
    const solved = cli(dir, 're', 'layout-solve', '--probes', 'probes', '--compiled', 'compiled', '--out', 'layout.json');
    assert.deepEqual(solved.components.map((c: { role: string; encoding: string }) => `${c.role}/${c.encoding}`), ['lo/twos', 'hi/twos']);
    assert.ok(solved.summary.some((s: string) => /18 bytes after the fine/.test(s)), solved.summary.join('\n'));
    const layout = JSON.parse(readFileSync(join(dir, 'layout.json'), 'utf8'));
    const [lo, hi] = layout.components;
    // nibble addresses: row stride = 2 * padded row bytes; 36 weights per block, each block 72 nibbles on
    assert.equal(lo.rule.rowStride, 2 * paddedCols(C));
    assert.equal(lo.rule.colStride, 1);
    if (C > 36) { assert.equal(lo.rule.tileCols, 36); assert.equal(lo.rule.tileColStride, 72); }
    assert.equal(hi.rule.base - lo.rule.base, 36, 'coarse nibble 18 bytes after the fine one');
    assert.equal(layout.region.offset, 0);

    const m = randomI8(R * C, 100 + C);
    writeFileSync(join(dir, 'm.i8'), m);
    cli(dir, 'npu', 'pack-matrix', '--rows', String(R), '--cols', String(C), '--in', 'm.i8', '--out', 'w.bin');
    cli(dir, 're', 'layout-unpack', '--layout', 'layout.json', '--blob', 'w.bin', '--out', 'back.i8');
    assert.deepEqual(new Int8Array(readFileSync(join(dir, 'back.i8'))), m);
    // and the solved layout, used as an encoder, writes the bytes pack-matrix wrote
    cli(dir, 're', 'layout-pack', '--layout', 'layout.json', '--in', 'm.i8', '--out', 'w2.bin');
    const w = readFileSync(join(dir, 'w.bin')), w2 = readFileSync(join(dir, 'w2.bin'));
    assert.deepEqual(new Uint8Array(w2), new Uint8Array(w.subarray(0, w2.length)));
    assert.ok(existsSync(join(dir, 'layout.json')));
  }
});

test('npu pack-matrix: bad input is one clear line and exit 1', () => {
  const dir = mkdtempSync(join(tmpdir(), 'npu-pm-'));
  writeFileSync(join(dir, 'm.i8'), new Uint8Array(10));
  const run = (...a: string[]) => spawnSync(process.execPath, [BIN, 'npu', 'pack-matrix', ...a], { cwd: dir, encoding: 'utf8' });
  for (const [args, re] of [
    [['--rows', '3', '--cols', '4', '--in', 'm.i8', '--out', 'w.bin'], /\[SIZE_MISMATCH\] .*m\.i8 has 10 bytes, a 3 x 4 int8 matrix has 12/],
    [['--rows', 'x', '--cols', '4', '--in', 'm.i8', '--out', 'w.bin'], /\[BAD_ARGS\] .*--rows must be a positive integer/],
    [['--rows', '2', '--cols', '5', '--in', 'nope.i8', '--out', 'w.bin'], /\[IO\] cannot read matrix nope\.i8: ENOENT/],
    [['--rows', '2', '--cols', '5', '--out', 'w.bin'], /\[BAD_ARGS\] .*--in is required/],
  ] as const) {
    const r = run(...args);
    assert.equal(r.status, 1, r.stderr);
    assert.equal(r.stderr.trimEnd().split('\n').length, 1, r.stderr);
    assert.match(r.stderr, /^gguf-edge npu: /);
    assert.match(r.stderr, re);
    assert.ok(!existsSync(join(dir, 'w.bin')));
  }
});
