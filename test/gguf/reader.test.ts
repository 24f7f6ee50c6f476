// GGUF reader: real files, writer round trips, every corruption class with its error code,
// and a seeded mutation fuzz over a real fixture.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parseGguf, readTensorData, GgufValueType } from '../../src/gguf/reader.js';
import { GgufError } from '../../src/gguf/errors.js';
import { writeGguf, type GgufWriteInput } from '../../src/gguf/writer.js';
import { GgmlType } from '../../src/gguf/ggml-types.js';
import { openGguf } from '../../src/gguf/open.js';
import { fixture } from '../helpers/fixtures.js';

function expectCode(fn: () => unknown, code: string): GgufError {
  try { fn(); } catch (e) {
    assert.ok(e instanceof GgufError, `expected GgufError, got ${String(e)}`);
    assert.equal(e.code, code, e.message);
    return e;
  }
  assert.fail(`expected GgufError ${code}, nothing thrown`);
}

const f32 = (xs: number[]) => new Uint8Array(new Float32Array(xs).buffer);
function small(): GgufWriteInput {
  return {
    metadata: [
      ['general.architecture', { type: 'string', value: 'llama' }],
      ['test.u8', { type: 'u8', value: 200 }], ['test.i8', { type: 'i8', value: -5 }],
      ['test.u16', { type: 'u16', value: 60000 }], ['test.i16', { type: 'i16', value: -30000 }],
      ['test.u32', { type: 'u32', value: 4000000000 }], ['test.i32', { type: 'i32', value: -2000000000 }],
      ['test.f32', { type: 'f32', value: 1.5 }], ['test.f64', { type: 'f64', value: Math.PI }],
      ['test.bool', { type: 'bool', value: true }], ['test.u64', { type: 'u64', value: 2n ** 60n }],
      ['test.i64', { type: 'i64', value: -7 }],
      ['test.strs', { type: 'array', itemType: 'string', value: ['a', 'é', '🙂'] }],
      ['test.nested', { type: 'array', itemType: 'array', value: [{ itemType: 'i32', value: [1, 2] }, { itemType: 'string', value: ['x'] }] }],
    ],
    tensors: [
      { name: 'a', dims: [4, 2], type: GgmlType.F32, data: f32([1, 2, 3, 4, 5, 6, 7, 8]) },
      { name: 'b', dims: [3], type: GgmlType.F32, data: f32([9, 10, 11]) },
    ],
  };
}

test('real fixtures parse: v3 model, v1 model, vocab-only file ending before the data offset', () => {
  const v3 = openGguf(fixture('models/stories260K.gguf'));
  assert.equal(v3.version, 3);
  assert.equal(v3.tensors.length, 48);
  assert.equal(v3.dataOffset, 14176);
  assert.equal(v3.metadata.get('llama.embedding_length'), 64);
  assert.equal(v3.metadata.get('tokenizer.ggml.padding_token_id'), 4294967295);
  const v1 = openGguf(fixture('models/tinyllamas-stories-260k-f32.gguf'));
  assert.equal(v1.version, 1);
  assert.equal(v1.dataOffset, 11456);
  // byte-identical tensors across the two files
  for (const t of v3.tensors) assert.deepEqual(readTensorData(v1, t.name), readTensorData(v3, t));
  const vocab = openGguf(fixture('vocab/ggml-vocab-bert-bge.gguf'));
  assert.equal(vocab.tensors.length, 0);
  assert.equal((vocab.metadata.get('tokenizer.ggml.tokens') as string[]).length, 30522);
});

for (const version of [1, 2, 3] as const) {
  test(`writer round trip, GGUF v${version}: every value type, nested arrays, tensor data`, () => {
    const bytes = writeGguf({ ...small(), version });
    const f = parseGguf(bytes);
    assert.equal(f.version, version);
    assert.equal(f.metadata.get('test.u8'), 200);
    assert.equal(f.metadata.get('test.i16'), -30000);
    assert.equal(f.metadata.get('test.u32'), 4000000000);
    assert.equal(f.metadata.get('test.f32'), 1.5);
    assert.equal(f.metadata.get('test.f64'), Math.PI);
    assert.equal(f.metadata.get('test.bool'), true);
    assert.equal(f.metadata.get('test.u64'), 2n ** 60n);
    assert.equal(f.metadata.get('test.i64'), -7);
    assert.deepEqual(f.metadata.get('test.strs'), ['a', 'é', '🙂']);
    const nested = f.metadata.get('test.nested') as unknown[];
    assert.deepEqual(Array.from(nested[0] as Int32Array), [1, 2]);
    assert.deepEqual(nested[1], ['x']);
    assert.equal(f.metaEntries.get('test.strs')!.arrayType, GgufValueType.STRING);
    assert.deepEqual(Array.from(new Float32Array(readTensorData(f, 'a').slice().buffer)), [1, 2, 3, 4, 5, 6, 7, 8]);
    assert.equal(f.tensorsByName.get('b')!.offset % 32, 0);
  });
}

test('writer respects general.alignment', () => {
  const input = small();
  input.metadata.push(['general.alignment', { type: 'u32', value: 64 }]);
  const f = parseGguf(writeGguf(input));
  assert.equal(f.alignment, 64);
  assert.equal(f.dataOffset % 64, 0);
  assert.equal(f.tensorsByName.get('b')!.offset % 64, 0);
});

// --- corruption classes: each gets its own code and an offset ---
const dv = (b: Uint8Array) => new DataView(b.buffer, b.byteOffset, b.byteLength);
function offsetOf(b: Uint8Array, s: string): number {
  const needle = new TextEncoder().encode(s);
  outer: for (let i = 0; i + needle.length <= b.length; i++) {
    for (let j = 0; j < needle.length; j++) if (b[i + j] !== needle[j]) continue outer;
    return i;
  }
  throw new Error(`"${s}" not found`);
}

test('wrong magic -> BAD_MAGIC', () => {
  const b = writeGguf(small()); b[0] = 0x58;
  const e = expectCode(() => parseGguf(b), 'BAD_MAGIC');
  assert.equal(e.offset, 0);
});
test('unsupported version -> UNSUPPORTED_VERSION', () => {
  const b = writeGguf(small()); dv(b).setUint32(4, 4, true);
  expectCode(() => parseGguf(b), 'UNSUPPORTED_VERSION');
});
test('truncated header -> TRUNCATED', () => {
  const b = writeGguf(small());
  expectCode(() => parseGguf(b.subarray(0, 20)), 'TRUNCATED');
  const real = readFileSync(fixture('models/stories260K.gguf'));
  expectCode(() => parseGguf(real.subarray(0, 13000)), 'TRUNCATED'); // inside the tensor index
});
test('truncated tensor data -> DATA_OUT_OF_BOUNDS', () => {
  const b = writeGguf(small());
  expectCode(() => parseGguf(b.subarray(0, b.length - 40)), 'DATA_OUT_OF_BOUNDS');
});
test('huge KV count -> COUNT_TOO_LARGE (no allocation)', () => {
  const b = writeGguf(small()); dv(b).setBigUint64(16, 2n ** 50n, true);
  expectCode(() => parseGguf(b), 'COUNT_TOO_LARGE');
});
test('huge string length -> COUNT_TOO_LARGE', () => {
  const b = writeGguf(small()); dv(b).setBigUint64(24, 2n ** 40n, true); // first key's length
  expectCode(() => parseGguf(b), 'COUNT_TOO_LARGE');
});
test('huge array length -> COUNT_TOO_LARGE', () => {
  const b = writeGguf(small());
  const at = offsetOf(b, 'test.strs') + 'test.strs'.length + 4 + 4; // type, element type
  dv(b).setBigUint64(at, 2n ** 40n, true);
  expectCode(() => parseGguf(b), 'COUNT_TOO_LARGE');
});
test('invalid UTF-8 -> INVALID_UTF8', () => {
  const b = writeGguf(small()); b[offsetOf(b, 'llama')] = 0xff;
  expectCode(() => parseGguf(b), 'INVALID_UTF8');
});
test('unknown metadata value type -> UNKNOWN_VALUE_TYPE', () => {
  const b = writeGguf(small()); dv(b).setUint32(offsetOf(b, 'test.u8') + 7, 99, true);
  expectCode(() => parseGguf(b), 'UNKNOWN_VALUE_TYPE');
});
function tensorInfoAt(b: Uint8Array, name: string): number {
  // the tensor index comes after the metadata; tensor names are short, so search from the end of the header
  const f = parseGguf(b);
  const enc = new TextEncoder().encode(name);
  for (let i = f.dataOffset - 1; i >= 0; i--) {
    if (dv(b).getBigUint64(i, true) === BigInt(enc.length) && b[i + 8] === enc[0] && i + 8 + enc.length < f.dataOffset) return i + 8 + enc.length;
  }
  throw new Error('no tensor info');
}
test('unknown ggml type -> UNKNOWN_GGML_TYPE', () => {
  const b = writeGguf(small()); const p = tensorInfoAt(b, 'b');
  dv(b).setUint32(p + 4 + 8, 77, true);
  expectCode(() => parseGguf(b), 'UNKNOWN_GGML_TYPE');
});
test('tensor offset beyond the file -> DATA_OUT_OF_BOUNDS', () => {
  const b = writeGguf(small()); const p = tensorInfoAt(b, 'b');
  dv(b).setBigUint64(p + 4 + 8 + 4, 1n << 20n, true);
  expectCode(() => parseGguf(b), 'DATA_OUT_OF_BOUNDS');
});
test('overlapping tensors -> DATA_OVERLAP', () => {
  const b = writeGguf(small()); const p = tensorInfoAt(b, 'b');
  dv(b).setBigUint64(p + 4 + 8 + 4, 0n, true);
  expectCode(() => parseGguf(b), 'DATA_OVERLAP');
});
test('misaligned offset -> MISALIGNED', () => {
  const b = writeGguf(small()); const p = tensorInfoAt(b, 'b');
  dv(b).setBigUint64(p + 4 + 8 + 4, 33n, true);
  expectCode(() => parseGguf(b), 'MISALIGNED');
});
test('duplicate key -> DUPLICATE_KEY', () => {
  const input = small(); input.metadata.push(['test.u8', { type: 'u8', value: 1 }]);
  expectCode(() => parseGguf(writeGguf(input)), 'DUPLICATE_KEY');
});
test('duplicate tensor name -> DUPLICATE_TENSOR', () => {
  const input = small(); input.tensors[1]!.name = 'a';
  expectCode(() => parseGguf(writeGguf(input)), 'DUPLICATE_TENSOR');
});
test('dimension overflow -> DIM_OVERFLOW', () => {
  const b = writeGguf(small()); const p = tensorInfoAt(b, 'a');
  dv(b).setBigUint64(p + 4, 2n ** 40n, true);
  dv(b).setBigUint64(p + 12, 2n ** 40n, true);
  expectCode(() => parseGguf(b), 'DIM_OVERFLOW');
});
test('too many dimensions -> BAD_DIMS; bad alignment -> BAD_ALIGNMENT', () => {
  const b = writeGguf(small()); const p = tensorInfoAt(b, 'b');
  dv(b).setUint32(p, 9, true);
  expectCode(() => parseGguf(b), 'BAD_DIMS');
  const input = small(); input.metadata.push(['general.alignment', { type: 'u32', value: 48 }]);
  expectCode(() => parseGguf(writeGguf({ ...input, alignment: 32 })), 'BAD_ALIGNMENT');
});
test('missing file -> NOT_FOUND', () => {
  expectCode(() => openGguf('/nonexistent/model.gguf'), 'NOT_FOUND');
});

test('fuzz: 10,000 seeded byte mutations of a real file end in success or a GgufError, each within 1 s', () => {
  const orig = readFileSync(fixture('models/stories260K.gguf'));
  // the header is where parsing decisions are made; mutate there mostly, sometimes anywhere
  const headerEnd = 14176;
  let s = 0x9e3779b9;
  const rnd = () => { s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0; return s / 4294967296; };
  const b = new Uint8Array(orig);
  let ok = 0, errors = 0, worst = 0, worstCpu = 0;
  for (let i = 0; i < 10000; i++) {
    const pos = rnd() < 0.9 ? Math.floor(rnd() * headerEnd) : Math.floor(rnd() * b.length);
    const old = b[pos]!;
    b[pos] = Math.floor(rnd() * 256);
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    try { parseGguf(b); ok++; } catch (e) {
      assert.ok(e instanceof GgufError, `mutation at ${pos}: ${String(e)}`);
      errors++;
    }
    worst = Math.max(worst, performance.now() - t0);
    const c = process.cpuUsage(c0);
    worstCpu = Math.max(worstCpu, (c.user + c.system) / 1000);
    b[pos] = old;
  }
  // The 1 s bound is on CPU time (a loaded machine's scheduling can make wall time anything); the wall
  // clock only guards against a hang.
  assert.ok(worstCpu < 1000, `slowest parse ${worstCpu} ms of CPU`);
  assert.ok(worst < 10_000, `slowest parse ${worst} ms`);
  assert.ok(errors > 100 && ok > 100, `ok ${ok}, errors ${errors}`);
});

test('every fixture survives read -> write -> read unchanged (metadata, tensor index, bytes)', async () => {
  const { readdirSync } = await import('node:fs');
  const { toWriteInput } = await import('../../src/gguf/rewrite.js');
  const files = [
    ...readdirSync(fixture('models')).map((f) => `models/${f}`),
    ...readdirSync(fixture('vocab')).filter((f) => f.endsWith('.gguf')).map((f) => `vocab/${f}`),
    ...['llama-q4_k_m', 'gemma3-q6_k', 'phi3-q4_0', 'qwen3-f16'].map((n) => `parity/${n}.gguf`),
  ];
  for (const rel of files) {
    const a = openGguf(fixture(rel));
    const b = parseGguf(writeGguf(toWriteInput(a)), 'rewritten');
    assert.equal(b.version, a.version, rel);
    assert.deepEqual([...b.metadata.keys()], [...a.metadata.keys()], rel);
    for (const [k, v] of a.metadata) assert.deepEqual(b.metadata.get(k), v, `${rel} ${k}`);
    for (const [k, e] of a.metaEntries) assert.equal(b.metaEntries.get(k)!.type, e.type, `${rel} ${k} type`);
    assert.deepEqual(b.tensors.map((t) => [t.name, t.type, t.dims]), a.tensors.map((t) => [t.name, t.type, t.dims]), rel);
    for (const t of a.tensors) assert.ok(Buffer.from(readTensorData(b, t.name)).equals(Buffer.from(readTensorData(a, t))), `${rel} ${t.name}`);
    if (a.tensors.length > 0 && rel.startsWith('models/stories260K')) {
      // the original file was written by llama.cpp's converter: our bytes must be identical
      assert.ok(Buffer.from(writeGguf(toWriteInput(a))).equals(readFileSync(fixture(rel))), 'byte-identical rewrite');
    }
  }
});

test('vocabulary-size string arrays: checked at parse, decoded on first use, same values as eager decoding', () => {
  // 6,000 strings (above the lazy threshold) mixing ASCII, 2-, 3- and 4-byte UTF-8 and the empty string
  const words = Array.from({ length: 6000 }, (_, i) => (i % 7 === 0 ? '' : `tok${i}${['', 'é', '中', '🙂'][i % 4]}`));
  const input = small();
  input.metadata.push(['tokenizer.ggml.tokens', { type: 'array', itemType: 'string', value: words }]);
  for (const version of [1, 3] as const) {
    const b = writeGguf({ ...input, version });
    const f = parseGguf(b);
    assert.equal(f.metaEntries.get('tokenizer.ggml.tokens')!.arrayType, GgufValueType.STRING);
    assert.deepEqual(f.metaEntries.get('tokenizer.ggml.tokens')!.value, words, `v${version} entry`);
    assert.deepEqual(f.metadata.get('tokenizer.ggml.tokens'), words, `v${version} map`);
    // iteration decodes too
    const g = parseGguf(b);
    assert.deepEqual(new Map([...g.metadata]).get('tokenizer.ggml.tokens'), words);
    // and the writer's rewrite path reads it back byte for byte
    const h = parseGguf(b);
    assert.deepEqual(h.metadata.get('test.strs'), ['a', 'é', '🙂']);
  }
  // a bad byte inside element 4321 still fails at parse, naming the element
  const b = writeGguf(input);
  const at = offsetOf(b, 'tok4321');
  b[at + 3] = 0xc0; // overlong lead byte
  const e = expectCode(() => parseGguf(b), 'INVALID_UTF8');
  assert.match(e.message, /tokenizer\.ggml\.tokens"?\[4321\]/);
  // a truncated 4-byte sequence at the very end of an element
  const c = writeGguf(input);
  const at2 = offsetOf(c, 'tok4323') + 7; // the first byte of '🙂'
  c[at2 + 1] = 0x41; // not a continuation byte
  expectCode(() => parseGguf(c), 'INVALID_UTF8');
});

test('the lazy arrays\' UTF-8 check accepts exactly what TextDecoder (fatal) accepts', () => {
  const input = small();
  const words = Array.from({ length: 5000 }, (_, i) => (i === 2500 ? 'QQQQQQ' : `w${i}`));
  input.metadata.push(['tokenizer.ggml.tokens', { type: 'array', itemType: 'string', value: words }]);
  const base = writeGguf(input);
  const at = offsetOf(base, 'QQQQQQ');
  const fatal = new TextDecoder('utf-8', { fatal: true });
  let seed = 12345;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 16) & 0xff;
  let accepted = 0;
  for (let k = 0; k < 3000; k++) {
    const b = base.slice();
    // 6 bytes: code points near the range boundaries encoded (padded with 'A'), then half the time one byte
    // replaced by a byte biased towards lead/continuation values
    const cps = [0x41, 0x7f, 0x80, 0x7ff, 0x800, 0xfff, 0xd7ff, 0xe000, 0xffff, 0x10000, 0x3ffff, 0x10ffff];
    let bytes = new TextEncoder().encode(String.fromCodePoint(cps[rnd() % cps.length]!) + String.fromCodePoint(cps[rnd() % cps.length]!));
    bytes = Uint8Array.from([...bytes.subarray(0, 6), ...new Uint8Array(Math.max(0, 6 - bytes.length)).fill(0x41)]);
    const pick = [0x41, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf, 0xe0, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xff];
    if (rnd() & 1) bytes[rnd() % 6] = rnd() & 1 ? pick[rnd() % pick.length]! : rnd();
    b.set(bytes, at);
    let ok = true;
    try { fatal.decode(b.subarray(at, at + 6)); } catch { ok = false; }
    if (ok) {
      accepted++;
      assert.equal((parseGguf(b).metadata.get('tokenizer.ggml.tokens') as string[])[2500], fatal.decode(b.subarray(at, at + 6)));
    } else {
      expectCode(() => parseGguf(b), 'INVALID_UTF8');
    }
  }
  assert.ok(accepted > 300 && accepted < 2700, `accepted ${accepted} of 3000: both verdicts exercised`);
});
