// Fuzz: random, truncated and mutated inputs must end in a result or a ReError (never another exception),
// each within 1 s, and the result must serialise (what --json prints) and format (the human output).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Builder } from 'flatbuffers';
import { BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import { decodeProtobuf, formatProtobuf, listBlobs } from '../../src/re/protobuf.js';
import { formatTable, walkFlatbuffer } from '../../src/re/flatbuffer.js';
import { ReError } from '../../src/re/errors.js';
import { parseLayout, packLayout, unpackLayout } from '../../src/re/layout.js';
import { generateProbes, parseManifest } from '../../src/re/probes.js';
import { diffBuffers } from '../../src/re/diff.js';
import { entropyProfile } from '../../src/re/entropy.js';
import { locate } from '../../src/re/locate.js';
import { rng, type Rng } from './prng.js';

const N = 10_000;

function seedProtobufs(r: Rng): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let i = 0; i < 50; i++) {
    const w = new BinaryWriter();
    for (let k = r.int(1, 8); k > 0; k--) {
      const f = r.int(1, 40);
      switch (r.int(0, 4)) {
        case 0: w.tag(f, WireType.Varint).int64(BigInt(r.int(-1e9, 1e9))); break;
        case 1: w.tag(f, WireType.Bit32).float(r.next()); break;
        case 2: w.tag(f, WireType.Bit64).double(r.next() * 1e6); break;
        case 3: w.tag(f, WireType.LengthDelimited).string('name-' + r.int(0, 999)); break;
        case 4: w.tag(f, WireType.LengthDelimited).fork().tag(1, WireType.Varint).uint32(r.int(0, 300)).tag(2, WireType.LengthDelimited).bytes(r.bytes(r.int(0, 30))).join(); break;
      }
    }
    out.push(w.finish());
  }
  return out;
}

function seedFlatbuffers(r: Rng): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let i = 0; i < 50; i++) {
    const b = new Builder(64);
    const s = b.createString('tensor.' + r.int(0, 99));
    b.startObject(2); b.addFieldInt32(0, r.int(-5, 5), 0); const child = b.endObject();
    b.startVector(4, 2, 4); b.addOffset(child); b.addOffset(child); const vec = b.endVector();
    b.startObject(4); b.addFieldOffset(0, s, 0); b.addFieldInt16(1, r.int(0, 999), 0); b.addFieldOffset(2, vec, 0); b.addFieldOffset(3, child, 0);
    b.finish(b.endObject());
    out.push(b.asUint8Array().slice());
  }
  return out;
}

function variant(r: Rng, seeds: Uint8Array[]): Uint8Array {
  const s = r.pick(seeds);
  switch (r.int(0, 4)) {
    case 0: return r.bytes(r.int(0, 300));
    case 1: return s.subarray(0, r.int(0, s.length)); // truncated
    case 2: { const m = s.slice(); for (let k = r.int(1, 4); k > 0; k--) m[r.int(0, m.length - 1)] = r.int(0, 255); return m; } // mutated
    case 3: { const m = new Uint8Array(r.int(1, 200)).fill(r.pick([0x00, 0xff, 0x80, 0x0a, 0x12])); return m; } // pathological runs
    default: { const m = new Uint8Array(s.length + 8); m.set(s, r.int(0, 8)); return m; } // shifted
  }
}

// The bound is on this process's CPU time, not wall time: on a loaded 2-core machine a parse that
// costs 50 ms of CPU can wait seconds for a core, which says nothing about the parser.
const cpuMs = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };

function fuzz(name: string, seeds: Uint8Array[], r: Rng, run: (b: Uint8Array) => unknown): void {
  let worst = 0, results = 0, errors = 0;
  for (let i = 0; i < N; i++) {
    const input = variant(r, seeds);
    const t0 = cpuMs();
    try {
      run(input);
      results++;
    } catch (e) {
      if (!(e instanceof ReError)) assert.fail(`${name} input ${i} (${Buffer.from(input).toString('hex').slice(0, 80)}): ${(e as Error).stack}`);
      assert.ok(e.message.length > 0 && !e.message.includes('\n'));
      errors++;
    }
    const dt = cpuMs() - t0;
    if (dt > worst) worst = dt;
    assert.ok(dt < 1000, `${name} input ${i} took ${dt.toFixed(0)} ms of CPU`);
  }
  console.log(`# ${name}: ${results} results, ${errors} errors, worst ${worst.toFixed(1)} ms of CPU`);
}

test('fuzz: protobuf decoder, 10,000 inputs', () => {
  const r = rng(1);
  fuzz('protobuf', seedProtobufs(r), r, (b) => {
    const res = decodeProtobuf(b, {}, 7);
    JSON.stringify(res);
    formatProtobuf(res.fields);
    listBlobs(res.fields, 16);
    if (res.error) {
      assert.ok(res.error.offset >= 7 && res.error.offset <= 7 + b.length);
      throw new ReError('PB_MALFORMED', res.error.message); // counted as a clear error
    }
    return res;
  });
});

test('fuzz: flatbuffer walker, 10,000 inputs', () => {
  const r = rng(2);
  fuzz('flatbuffer', seedFlatbuffers(r), r, (b) => {
    const res = walkFlatbuffer(b, {}, 3);
    JSON.stringify(res);
    formatTable(res.root);
    return res;
  });
});

test('fuzz: layout and manifest readers, diff, entropy, locate on garbage', () => {
  const r = rng(3);
  const good = JSON.stringify({
    format: 'gguf-edge-layout', version: 1, rows: 2, cols: 3, bits: 8, fileSize: 10, region: { offset: 2, length: 6 },
    components: [{ role: 'int8', unit: 'byte', encoding: 'twos', rule: { base: 0, tileRows: 2, tileCols: 3, rowStride: 3, colStride: 1, tileRowStride: 0, tileColStride: 0 }, description: '' }],
    background: { fill: 0 }, volatile: [], outside: { volatile: [], unexplained: [] }, paddingBytes: 0, summary: [],
  });
  const l = parseLayout(good, 'good');
  assert.deepEqual(unpackLayout(l, packLayout(l, Int8Array.from([1, -2, 3, -4, 5, -128]))), Int8Array.from([1, -2, 3, -4, 5, -128]));
  const seeds = [new TextEncoder().encode(good)];
  fuzz('layout', seeds, r, (b) => {
    const text = new TextDecoder().decode(b);
    const lay = parseLayout(text, 'fuzz');
    packLayout(lay, new Int8Array(lay.rows * lay.cols));
  });
  let mutatedRejected = 0;
  for (let i = 0; i < 2000; i++) {
    // Structurally mutated layouts: a wrong number must be caught by validation, not crash pack.
    const obj = JSON.parse(good);
    const keys = ['rows', 'cols', 'bits', 'region'];
    const k = r.pick(keys);
    obj[k] = r.pick([-1, 0, 1e12, 'x', null, 3.5, { offset: -3, length: 2 }, { offset: 0, length: 1 }]);
    try { const lay = parseLayout(JSON.stringify(obj), 'm'); packLayout(lay, new Int8Array(lay.rows * lay.cols)); } catch (e) { assert.ok(e instanceof ReError, String(e)); mutatedRejected++; }
  }
  assert.ok(mutatedRejected > 1500);
  fuzz('manifest', [new TextEncoder().encode(JSON.stringify(generateProbes({ rows: 4, cols: 5, bits: 4 }).manifest))], r, (b) => parseManifest(new TextDecoder().decode(b), 'fuzz'));
  for (let i = 0; i < 500; i++) {
    const a = r.bytes(r.int(0, 100)), b = r.bytes(r.int(0, 100));
    const d = diffBuffers(a, b, { word: r.pick([8, 16, 32] as const), masks: r.bool() ? [a, r.bytes(r.int(0, 100))] : undefined, merge: r.int(0, 3) });
    assert.ok(d.differing <= d.compared);
    entropyProfile(a, r.int(1, 50), r.int(1, 50));
    locate(a, r.pick(['u32', 'f32', 'f16', 'bf16'] as const), r.int(0, 1000));
  }
});

test('large and deeply nested inputs stay within 1 s of CPU', () => {
  const r = rng(4);
  const big = r.bytes(2_000_000);
  let t0 = cpuMs();
  decodeProtobuf(big);
  assert.ok(cpuMs() - t0 < 1000, 'protobuf on 2 MB of random bytes');
  // 2000 nested length-delimited wrappers (beyond the depth limit) around a blob.
  let inner: Uint8Array = r.bytes(1000);
  for (let i = 0; i < 2000; i++) inner = new BinaryWriter().tag(1, WireType.LengthDelimited).bytes(inner).finish();
  t0 = cpuMs();
  const res = decodeProtobuf(inner);
  JSON.stringify(res);
  assert.ok(cpuMs() - t0 < 1000, 'protobuf on 2000 nested wrappers');
  assert.equal(res.error, undefined);
  t0 = cpuMs();
  try { walkFlatbuffer(big); } catch (e) { assert.ok(e instanceof ReError); }
  assert.ok(cpuMs() - t0 < 1000, 'flatbuffer on 2 MB of random bytes');
});
