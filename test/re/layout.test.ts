import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateProbes } from '../../src/re/probes.js';
import { solveLayout } from '../../src/re/solve.js';
import { packLayout, unpackLayout, regionOf, parseLayout } from '../../src/re/layout.js';
import { ReError } from '../../src/re/errors.js';
import { rng } from './prng.js';
import { SOLVABLE, simBits, simCompile, randomMatrix, HEADER_SIZE, type SimLayout } from './sim-compiler.js';

const ROWS = 40, COLS = 72; // 2880 weights; not multiples of 16 or 32, so partial tiles and blocks occur

function solveFor(kind: SimLayout, seed: number, rows = ROWS, cols = COLS) {
  const r = rng(seed);
  const bits = simBits(kind);
  const { manifest, matrices } = generateProbes({ rows, cols, bits });
  const compiled = matrices.map((m) => simCompile(kind, rows, cols, m, r));
  return { manifest, matrices, compiled, r, bits };
}

for (const kind of SOLVABLE) {
  test(`layout-solve recovers ${kind}: random matrices round-trip through the vendor compiler`, () => {
    const { manifest, matrices, compiled, r, bits } = solveFor(kind, 1000 + SOLVABLE.indexOf(kind));
    const layout = parseLayout(JSON.stringify(solveLayout({ manifest, probes: matrices, compiled })), 'layout');
    assert.equal(layout.region.offset, HEADER_SIZE, 'weights start right after the header');
    assert.ok(layout.components.every((c) => c.rule), `compact rules expected: ${layout.summary.join('; ')}`);
    for (let t = 0; t < 5; t++) {
      const m = randomMatrix(ROWS, COLS, bits, r);
      const file = simCompile(kind, ROWS, COLS, m, r);
      assert.deepEqual(unpackLayout(layout, regionOf(layout, file, 'file')), m);
      // Our encoder reproduces the vendor compiler's bytes for the whole weight region.
      assert.deepEqual(packLayout(layout, m), file.subarray(layout.region.offset, layout.region.offset + layout.region.length));
    }
    // The header's random words are seen as nondeterministic, its fixed words are not.
    assert.deepEqual(layout.outside.volatile.map((v) => v.offset >= 12 && v.offset + v.length <= 28), layout.outside.volatile.map(() => true));
    assert.ok(layout.outside.volatile.length >= 1);
  });
}

test('layout descriptions name the structure', () => {
  const mk = (kind: SimLayout) => { const s = solveFor(kind, 7); return solveLayout({ manifest: s.manifest, probes: s.matrices, compiled: s.compiled }); };
  const planes = mk('nibble-planes');
  const lo = planes.components.find((c) => c.role === 'lo')!, hi = planes.components.find((c) => c.role === 'hi')!;
  assert.equal(hi.rule!.base - lo.rule!.base, 36, 'coarse plane 18 bytes (36 nibbles) after the fine plane');
  assert.equal(hi.encoding, 'offset');
  assert.equal(lo.encoding, 'twos');
  assert.equal(lo.rule!.tileCols, 32);
  const tiles = mk('tiles16');
  assert.deepEqual([tiles.components[0]!.rule!.tileRows, tiles.components[0]!.rule!.tileCols], [16, 16]);
  assert.match(tiles.components[0]!.description, /16x16 tiles/);
  const padded = mk('rows-padded32');
  assert.equal(padded.components[0]!.rule!.rowStride, 96);
  assert.equal(padded.components[0]!.encoding, 'offset');
  assert.deepEqual(padded.background, { fill: 0xaa });
  assert.match(padded.components[0]!.description, /padded from 72 to 96/);
  const cm = mk('col-major');
  assert.match(cm.components[0]!.description, /column-major/);
  const i4 = mk('int4-pairs');
  assert.equal(i4.components[0]!.role, 'int4');
  assert.match(i4.components[0]!.description, /high nibble holding the odd column/);
});

function assertRefuses(fn: () => unknown, re: RegExp) {
  assert.throws(fn, (e: unknown) => e instanceof ReError && e.code === 'LAYOUT_INCONSISTENT' && re.test(e.message));
}

test('layout-solve refuses content-dependent bytes inside the region', () => {
  const s = solveFor('row-checksum', 11);
  assertRefuses(() => solveLayout({ manifest: s.manifest, probes: s.matrices, compiled: s.compiled }), /change with the probes but carry no weight/);
});

test('layout-solve refuses a compiler whose placement changes per build', () => {
  const s = solveFor('shuffled', 12);
  assert.throws(() => solveLayout({ manifest: s.manifest, probes: s.matrices, compiled: s.compiled }), (e: unknown) => e instanceof ReError && e.code === 'LAYOUT_INCONSISTENT');
});

test('layout-solve refuses swapped compiled files', () => {
  const s = solveFor('row-major', 13);
  const c = s.compiled.slice();
  [c[2], c[3]] = [c[3]!, c[2]!];
  assertRefuses(() => solveLayout({ manifest: s.manifest, probes: s.matrices, compiled: c }), /not found/);
});

test('layout-solve refuses compiled outputs of different sizes', () => {
  const s = solveFor('row-major', 14);
  const c = s.compiled.slice();
  c[1] = c[1]!.subarray(0, c[1]!.length - 1);
  assertRefuses(() => solveLayout({ manifest: s.manifest, probes: s.matrices, compiled: c }), /depends on the values/);
});

test('probe-gen uses few probes: 7 for 2880 weights, values in int4 range at 4 bits', () => {
  const { manifest, matrices } = generateProbes({ rows: ROWS, cols: COLS, bits: 4 });
  assert.equal(manifest.probes.length, 7);
  for (const m of matrices) for (const v of m) assert.ok(v >= -8 && v <= 7);
  // Every weight gets a distinct sequence of values across the probes.
  const seen = new Set<string>();
  for (let i = 0; i < ROWS * COLS; i++) seen.add(matrices.map((m) => m[i]).join(','));
  assert.equal(seen.size, ROWS * COLS);
});

test('layout-solve on garbage compiled files ends in a clear error', () => {
  const r = rng(99);
  const { manifest, matrices } = generateProbes({ rows: 8, cols: 8, bits: 8 });
  for (let t = 0; t < 200; t++) {
    const size = r.int(1, 200);
    const compiled = matrices.map(() => r.bytes(r.bool(0.9) ? size : r.int(1, 200)));
    assert.throws(() => solveLayout({ manifest, probes: matrices, compiled }), (e: unknown) => e instanceof ReError && (e.code === 'LAYOUT_INCONSISTENT'));
  }
});

test('an irregular placement is kept as an explicit table and still round-trips', () => {
  // 40*72 = 2880 is coprime with 7919, so (i*7919+13) mod n is a permutation.
  const { manifest, matrices, compiled, r } = solveFor('permuted', 21);
  const layout = parseLayout(JSON.stringify(solveLayout({ manifest, probes: matrices, compiled })), 'layout');
  assert.equal(layout.components.length, 1);
  assert.equal(layout.components[0]!.rule, undefined);
  assert.equal(layout.components[0]!.table!.length, ROWS * COLS);
  assert.equal(layout.components[0]!.table![1], (7919 + 13) % (ROWS * COLS));
  const m = randomMatrix(ROWS, COLS, 8, r);
  const file = simCompile('permuted', ROWS, COLS, m, r);
  assert.deepEqual(unpackLayout(layout, regionOf(layout, file, 'file')), m);
  assert.deepEqual(packLayout(layout, m), file.subarray(layout.region.offset, layout.region.offset + layout.region.length));
});
