// The schema-less walker against buffers built with the `flatbuffers` package: random table schemas, every
// field must be recovered (strings, nested tables, vectors by offset and length, scalars in their views).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Builder } from 'flatbuffers';
import { walkFlatbuffer, type FbField, type FbTable } from '../../src/re/flatbuffer.js';
import { ReError } from '../../src/re/errors.js';
import { rng, type Rng } from './prng.js';

type Spec =
  | { kind: 'u8' | 'i16' | 'i32' | 'u32' | 'f32' | 'f64' | 'i64'; value: number | bigint }
  | { kind: 'string'; value: string }
  | { kind: 'bytes'; value: Uint8Array }
  | { kind: 'ints'; value: Int32Array }
  | { kind: 'strings'; value: string[] }
  | { kind: 'table'; value: Spec[] }
  | { kind: 'tables'; value: Spec[][] };

const WORDS = ['conv', 'weight', 'bias', 'layer.0', 'ax8850', 'npu', 'ß', '量化'];

function rndSpec(r: Rng, depth: number): Spec[] {
  const n = r.int(1, 7);
  const kinds = ['u8', 'i16', 'i32', 'u32', 'f32', 'f64', 'i64', 'string', 'bytes', 'ints', 'strings', ...(depth < 3 ? ['table', 'tables'] : [])] as const;
  return Array.from({ length: n }, (): Spec => {
    const k = r.pick(kinds);
    switch (k) {
      case 'u8': return { kind: k, value: r.int(0, 255) };
      case 'i16': return { kind: k, value: r.int(-32768, 32767) };
      case 'i32': return { kind: k, value: r.int(-(2 ** 31), 2 ** 31 - 1) };
      case 'u32': return { kind: k, value: r.int(0, 2 ** 32 - 1) };
      case 'f32': return { kind: k, value: Math.fround((r.next() - 0.5) * 1000) };
      case 'f64': return { kind: k, value: (r.next() - 0.5) * 1e6 };
      case 'i64': return { kind: k, value: BigInt(r.int(-(2 ** 31), 2 ** 31)) * BigInt(r.int(1, 2 ** 20)) };
      case 'string': return { kind: k, value: Array.from({ length: r.int(0, 3) }, () => r.pick(WORDS)).join('/') };
      case 'bytes': return { kind: k, value: r.bytes(r.int(0, 40)) };
      case 'ints': return { kind: k, value: Int32Array.from({ length: r.int(0, 12) }, () => r.int(-(2 ** 31), 2 ** 31 - 1)) };
      case 'strings': return { kind: k, value: Array.from({ length: r.int(1, 4) }, () => r.pick(WORDS)) };
      case 'table': return { kind: k, value: rndSpec(r, depth + 1) };
      default: return { kind: 'tables', value: Array.from({ length: r.int(1, 3) }, () => rndSpec(r, depth + 1)) };
    }
  });
}

function build(b: Builder, spec: Spec[]): number {
  // Children first: flatbuffers builds bottom-up.
  const offs = spec.map((s) => {
    switch (s.kind) {
      case 'string': return b.createString(s.value);
      case 'bytes': return b.createByteVector(s.value);
      case 'ints': { b.startVector(4, s.value.length, 4); for (let i = s.value.length - 1; i >= 0; i--) b.addInt32(s.value[i]!); return b.endVector(); }
      case 'strings': { const o = s.value.map((x) => b.createString(x)); b.startVector(4, o.length, 4); for (let i = o.length - 1; i >= 0; i--) b.addOffset(o[i]!); return b.endVector(); }
      case 'table': return build(b, s.value);
      case 'tables': { const o = s.value.map((x) => build(b, x)); b.startVector(4, o.length, 4); for (let i = o.length - 1; i >= 0; i--) b.addOffset(o[i]!); return b.endVector(); }
      default: return 0;
    }
  });
  b.startObject(spec.length);
  spec.forEach((s, slot) => {
    switch (s.kind) {
      case 'u8': b.addFieldInt8(slot, s.value as number, 0); break;
      case 'i16': b.addFieldInt16(slot, s.value as number, 0); break;
      case 'i32': case 'u32': b.addFieldInt32(slot, s.value as number, 0); break;
      case 'f32': b.addFieldFloat32(slot, s.value as number, 0); break;
      case 'f64': b.addFieldFloat64(slot, s.value as number, 0); break;
      case 'i64': b.addFieldInt64(slot, s.value as bigint, 0n); break;
      default: b.addFieldOffset(slot, offs[slot]!, 0);
    }
  });
  return b.endObject();
}

interface Tally { scalars: number; scalarGuessRight: number; offsets: number; offsetGuessRight: number }

function check(buf: Uint8Array, t: FbTable, spec: Spec[], tally: Tally, path: string): void {
  assert.equal(t.vtable.slots, spec.length, `${path}: slot count`);
  const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  spec.forEach((s, slot) => {
    const f = t.fields.find((x) => x.slot === slot) as FbField;
    const at = `${path}[${slot}] ${s.kind}`;
    assert.ok(f, `${at}: field missing`);
    switch (s.kind) {
      case 'u8': case 'i16': case 'i32': case 'u32': case 'f32': case 'f64': case 'i64': {
        const view = { u8: f.scalar.u8, i16: f.scalar.i16, i32: f.scalar.i32, u32: f.scalar.u32, f32: f.scalar.f32, f64: f.scalar.f64, i64: f.scalar.i64 === undefined ? undefined : BigInt(f.scalar.i64) }[s.kind];
        assert.equal(view, s.kind === 'u32' ? (s.value as number) >>> 0 : s.value, `${at}: scalar view`);
        tally.scalars++;
        if (f.guess === 'scalar') tally.scalarGuessRight++;
        break;
      }
      case 'string':
        assert.equal(f.string, s.value, `${at}: string view`);
        tally.offsets++; if (f.guess === 'string') tally.offsetGuessRight++;
        break;
      case 'bytes': case 'ints': {
        const width = s.kind === 'bytes' ? 1 : 4;
        assert.ok(f.vector, `${at}: no vector view`);
        assert.equal(f.vector.length, s.value.length, `${at}: length`);
        assert.ok(f.vector.elementWidths.includes(width));
        for (let i = 0; i < s.value.length; i++) {
          const d: number = f.vector.dataOffset;
          assert.equal(width === 1 ? buf[d + i] : dv.getInt32(d + 4 * i, true), s.value[i], `${at}[${i}]`);
        }
        // An empty or printable byte vector is indistinguishable from a string.
        tally.offsets++; if (f.guess === 'vector' || (f.guess === 'string' && (width === 1 || s.value.length === 0))) tally.offsetGuessRight++;
        break;
      }
      case 'strings':
        assert.equal(f.vector?.elements, 'string', `${at}: ${f.reason}`);
        assert.deepEqual(f.vector!.strings, s.value);
        tally.offsets++; if (f.guess === 'vector') tally.offsetGuessRight++;
        break;
      case 'table':
        assert.ok(f.table, `${at}: no table view (${f.reason})`);
        check(buf, f.table, s.value, tally, `${path}[${slot}]`);
        tally.offsets++; if (f.guess === 'table') tally.offsetGuessRight++;
        break;
      case 'tables':
        assert.equal(f.vector?.elements, 'table', `${at}: ${f.reason}`);
        assert.equal(f.vector!.tables!.length, s.value.length);
        s.value.forEach((sub, i) => check(buf, f.vector!.tables![i]!, sub, tally, `${path}[${slot}][${i}]`));
        tally.offsets++; if (f.guess === 'vector') tally.offsetGuessRight++;
        break;
    }
  });
}

test('flatbuffer walker recovers the fields of 300 random buffers built with the flatbuffers package', () => {
  const r = rng(77);
  const tally: Tally = { scalars: 0, scalarGuessRight: 0, offsets: 0, offsetGuessRight: 0 };
  for (let n = 0; n < 300; n++) {
    const spec = rndSpec(r, 0);
    const b = new Builder(64);
    b.forceDefaults(true);
    const root = build(b, spec);
    const withId = r.bool();
    b.finish(root, withId ? 'AXMD' : undefined);
    const buf = b.asUint8Array();
    // Place the buffer inside a larger file, as containers do.
    const pad = r.int(0, 3) * 4;
    const file = new Uint8Array(pad + buf.length + 16);
    file.set(buf, pad);
    const res = walkFlatbuffer(file.subarray(pad, pad + buf.length), {}, pad);
    if (withId) assert.equal(res.fileIdentifier, 'AXMD');
    check(file, res.root, spec, tally, `buffer ${n}`);
  }
  console.log(`# guesses right: scalars ${tally.scalarGuessRight}/${tally.scalars}, offsets ${tally.offsetGuessRight}/${tally.offsets}`);
  // Views must always be right (above); the single best guess must be right nearly always.
  assert.ok(tally.scalarGuessRight / tally.scalars > 0.97);
  assert.ok(tally.offsetGuessRight / tally.offsets > 0.97);
});

test('flatbuffer walker: clear errors on bad roots, budget on hostile input', () => {
  assert.throws(() => walkFlatbuffer(new Uint8Array(4)), (e: unknown) => e instanceof ReError && e.code === 'FB_MALFORMED' && /too small/.test(e.message));
  const bad = new Uint8Array(16); new DataView(bad.buffer).setUint32(0, 1000, true);
  assert.throws(() => walkFlatbuffer(bad, {}, 100), (e: unknown) => e instanceof ReError && /buffer at 100: root offset 1000 is outside/.test(e.message));
  // A vector of 1000 offsets all pointing at one table with itself nested: the node budget stops it.
  const b = new Builder(64);
  b.startObject(1); b.addFieldInt32(0, 7, 0); const leaf = b.endObject();
  b.startVector(4, 2000, 4); for (let i = 0; i < 2000; i++) b.addOffset(leaf); const vec = b.endVector();
  b.startObject(1); b.addFieldOffset(0, vec, 0); const root = b.endObject();
  b.finish(root);
  const res = walkFlatbuffer(b.asUint8Array(), { maxVectorItems: 5000, maxNodes: 100 });
  const tables = res.root.fields[0]!.vector!.tables!;
  assert.equal(tables.length, 2000);
  assert.ok(tables.some((t) => t.stopped?.includes('node budget')));
});
