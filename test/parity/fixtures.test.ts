// The parity suites enumerate the fixtures on disk: every fixture is either of an architecture the engine
// supports (then the suites compare it) or of one listed as out of scope (the newer architectures), so a
// supported architecture can never be skipped silently.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { archSpec } from '../../src/models/index.js';
import { BIT_EXACT_MORE_TYPES, BIT_EXACT_TYPES, GENERIC_TOL, NEWER_ARCHS, NEWER_TYPES, OUT_OF_SCOPE_ARCHS, PARITY_ARCHS, parityFixtures } from '../helpers/parity.js';

test('every parity fixture is of a supported architecture or one listed as out of scope', (t) => {
  const all = parityFixtures();
  const byArch = new Map<string, string[]>();
  for (const f of all) byArch.set(f.arch, [...(byArch.get(f.arch) ?? []), f.type]);
  for (const f of all) {
    if (f.supported) assert.ok(PARITY_ARCHS.includes(f.arch) || NEWER_ARCHS.includes(f.arch), `${f.name}: architecture ${f.arch} is supported but not in PARITY_ARCHS or NEWER_ARCHS`);
    else assert.ok(OUT_OF_SCOPE_ARCHS.includes(f.arch), `${f.name}: architecture ${f.arch} is neither supported nor listed as out of scope`);
  }
  for (const arch of PARITY_ARCHS) {
    assert.ok(archSpec(arch), `${arch} is no longer supported`);
    for (const type of BIT_EXACT_TYPES) assert.ok(byArch.get(arch)?.includes(type), `missing fixture ${arch}-${type}`);
  }
  for (const arch of NEWER_ARCHS) {
    assert.ok(archSpec(arch), `${arch} is no longer supported`);
    for (const type of NEWER_TYPES) assert.ok(byArch.get(arch)?.includes(type), `missing fixture ${arch}-${type}`);
  }
  // every compared fixture's type is either bit-exact (exact.test.ts) or has a measured tolerance (cpu.test.ts)
  for (const f of all.filter((x) => x.supported)) assert.ok(BIT_EXACT_TYPES.includes(f.type) || BIT_EXACT_MORE_TYPES.includes(f.type) || Object.hasOwn(GENERIC_TOL, f.type), `${f.name}: type ${f.type} is neither bit-exact nor has a tolerance`);
  // once the engine implements one of these, its fixtures must join the parity suites
  for (const arch of OUT_OF_SCOPE_ARCHS) assert.equal(archSpec(arch), undefined, `${arch} is supported now: remove it from OUT_OF_SCOPE_ARCHS`);
  const compared = all.filter((f) => f.supported);
  t.diagnostic(`${all.length} fixtures: ${compared.length} compared (${[...PARITY_ARCHS, ...NEWER_ARCHS].join(', ')}), ${all.length - compared.length} out of scope (${OUT_OF_SCOPE_ARCHS.join(', ')})`);
});
