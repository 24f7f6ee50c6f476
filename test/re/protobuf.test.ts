// The schema-less decoder against @bufbuild/protobuf: messages are built from a real schema and encoded by
// the library; reading them back through the schema must equal the library's own decoding.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { create, createFileRegistry, equals, fromBinary, toBinary, toJson, type DescMessage, type DescField } from '@bufbuild/protobuf';
import { FileDescriptorProtoSchema } from '@bufbuild/protobuf/wkt';
import { BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import { decodeProtobuf, listBlobs, type PbField } from '../../src/re/protobuf.js';
import { rng, type Rng } from './prng.js';

const T = { DOUBLE: 1, FLOAT: 2, INT64: 3, UINT64: 4, INT32: 5, FIXED64: 6, FIXED32: 7, BOOL: 8, STRING: 9, MESSAGE: 11, BYTES: 12, UINT32: 13, ENUM: 14, SFIXED32: 15, SFIXED64: 16, SINT32: 17, SINT64: 18 } as const;
const OPT = 1, REP = 3;

function f(name: string, number: number, type: number, label = OPT, typeName?: string) {
  return { name, number, type, label, jsonName: name, ...(typeName ? { typeName } : {}) };
}

const file = create(FileDescriptorProtoSchema, {
  name: 't.proto', package: 't', syntax: 'proto3',
  enumType: [{ name: 'E', value: [{ name: 'E_ZERO', number: 0 }, { name: 'E_ONE', number: 1 }, { name: 'E_NEG', number: -3 }] }],
  messageType: [
    { name: 'Inner', field: [f('a', 1, T.INT32), f('s', 2, T.STRING), f('z', 3, T.SINT64, REP), f('d', 4, T.DOUBLE), f('child', 5, T.MESSAGE, OPT, '.t.Inner'), f('raw', 6, T.BYTES)] },
    {
      name: 'Outer',
      field: [
        f('i32', 1, T.INT32), f('i64', 2, T.INT64), f('u32', 3, T.UINT32), f('u64', 4, T.UINT64), f('s32', 5, T.SINT32), f('s64', 6, T.SINT64),
        f('b', 7, T.BOOL), f('fx32', 8, T.FIXED32), f('fx64', 9, T.FIXED64), f('sf32', 10, T.SFIXED32), f('sf64', 11, T.SFIXED64),
        f('fl', 12, T.FLOAT), f('db', 13, T.DOUBLE), f('str', 14, T.STRING), f('by', 15, T.BYTES), f('inner', 16, T.MESSAGE, OPT, '.t.Inner'),
        f('p_i32', 17, T.INT32, REP), f('p_fl', 18, T.FLOAT, REP), f('p_db', 19, T.DOUBLE, REP), f('p_s32', 20, T.SINT32, REP),
        f('inners', 21, T.MESSAGE, REP, '.t.Inner'), f('strs', 22, T.STRING, REP), f('e', 23, T.ENUM, OPT, '.t.E'), f('p_fx64', 24, T.FIXED64, REP),
        f('p_u64', 25, T.UINT64, REP), f('big_field_number', 536870911, T.INT32),
      ],
    },
  ],
});
const registry = createFileRegistry(file, () => undefined);
const Outer = registry.getMessage('t.Outer')!;
const Inner = registry.getMessage('t.Inner')!;

const WORDS = ['alpha', 'beta', 'γάμμα', 'delta epsilon', 'npu', 'weights', 'axmodel', '日本語', 'x'];
const f32 = (x: number) => Math.fround(x);

function rndText(r: Rng): string {
  const n = r.int(1, 4);
  return Array.from({ length: n }, () => r.pick(WORDS)).join(r.pick([' ', '_', '-', '\n']));
}

function rndFloat(r: Rng): number {
  return r.pick([0.5, -1.25, 3.14159, 1e-3, -2e5, 0, 42]) * (r.bool() ? 1 : r.next());
}

function rndI64(r: Rng): bigint {
  return BigInt.asIntN(64, (BigInt(Math.floor(r.next() * 2 ** 32)) << 32n) | BigInt(Math.floor(r.next() * 2 ** 32))) >> BigInt(r.int(0, 63));
}

function rndInner(r: Rng, depth: number): Record<string, unknown> {
  const m: Record<string, unknown> = {};
  if (r.bool()) m.a = r.int(-(2 ** 31), 2 ** 31 - 1);
  if (r.bool()) m.s = rndText(r);
  if (r.bool()) m.z = Array.from({ length: r.int(0, 6) }, () => rndI64(r));
  if (r.bool()) m.d = rndFloat(r);
  if (depth < 3 && r.bool(0.4)) m.child = rndInner(r, depth + 1);
  if (r.bool(0.3)) m.raw = r.bytes(r.int(0, 40));
  return m;
}

function rndOuter(r: Rng): Record<string, unknown> {
  const m: Record<string, unknown> = {};
  const maybe = (k: string, g: () => unknown) => { if (r.bool(0.6)) m[k] = g(); };
  maybe('i32', () => r.int(-(2 ** 31), 2 ** 31 - 1));
  maybe('i64', () => rndI64(r));
  maybe('u32', () => r.int(0, 2 ** 32 - 1));
  maybe('u64', () => BigInt.asUintN(64, rndI64(r)));
  maybe('s32', () => r.int(-(2 ** 31), 2 ** 31 - 1));
  maybe('s64', () => rndI64(r));
  maybe('b', () => r.bool());
  maybe('fx32', () => r.int(0, 2 ** 32 - 1));
  maybe('fx64', () => BigInt.asUintN(64, rndI64(r)));
  maybe('sf32', () => r.int(-(2 ** 31), 2 ** 31 - 1));
  maybe('sf64', () => rndI64(r));
  maybe('fl', () => f32(rndFloat(r)));
  maybe('db', () => rndFloat(r));
  maybe('str', () => rndText(r));
  maybe('by', () => r.bytes(r.int(1, 64)));
  maybe('inner', () => rndInner(r, 0));
  maybe('pI32', () => Array.from({ length: r.int(1, 8) }, () => r.int(-1000, 100000)));
  maybe('pFl', () => Array.from({ length: r.int(1, 8) }, () => f32(rndFloat(r))));
  maybe('pDb', () => Array.from({ length: r.int(1, 5) }, () => rndFloat(r)));
  maybe('pS32', () => Array.from({ length: r.int(1, 8) }, () => r.int(-70000, 70000)));
  maybe('inners', () => Array.from({ length: r.int(1, 3) }, () => rndInner(r, 1)));
  maybe('strs', () => Array.from({ length: r.int(1, 4) }, () => rndText(r)));
  maybe('e', () => r.pick([0, 1, -3]));
  maybe('pFx64', () => Array.from({ length: r.int(1, 4) }, () => BigInt.asUintN(64, rndI64(r))));
  maybe('pU64', () => Array.from({ length: r.int(1, 4) }, () => BigInt.asUintN(64, rndI64(r))));
  maybe('bigFieldNumber', () => r.int(-5, 5));
  return m;
}

function scalarOf(pf: PbField, field: DescField): unknown {
  const t = (field as { scalar?: number }).scalar ?? (field.fieldKind === 'enum' || (field.fieldKind === 'list' && field.listKind === 'enum') ? T.ENUM : undefined);
  const v = pf.varint, x32 = pf.fixed32, x64 = pf.fixed64;
  switch (t) {
    case T.INT32: case T.ENUM: return Number(v!.signed);
    case T.INT64: return BigInt(v!.signed);
    case T.UINT32: return Number(v!.unsigned);
    case T.UINT64: return BigInt(v!.unsigned);
    case T.SINT32: return Number(v!.zigzag);
    case T.SINT64: return BigInt(v!.zigzag);
    case T.BOOL: return v!.unsigned !== '0';
    case T.FIXED32: return x32!.u32;
    case T.SFIXED32: return x32!.i32;
    case T.FLOAT: return x32!.f32;
    case T.FIXED64: return BigInt(x64!.u64);
    case T.SFIXED64: return BigInt(x64!.i64);
    case T.DOUBLE: return x64!.f64;
  }
  throw new Error(`unexpected scalar type ${t} for ${field.name}`);
}

const WIDTH: Record<number, 'varint' | 'fixed32' | 'fixed64'> = {
  [T.INT32]: 'varint', [T.ENUM]: 'varint', [T.INT64]: 'varint', [T.UINT32]: 'varint', [T.UINT64]: 'varint', [T.SINT32]: 'varint', [T.SINT64]: 'varint', [T.BOOL]: 'varint',
  [T.FIXED32]: 'fixed32', [T.SFIXED32]: 'fixed32', [T.FLOAT]: 'fixed32', [T.FIXED64]: 'fixed64', [T.SFIXED64]: 'fixed64', [T.DOUBLE]: 'fixed64',
};

interface Stats { lenChosenRight: number; lenTotal: number }

/** Reads the schema-less decode through the schema: the views the schema says apply. */
function interpret(fields: PbField[], desc: DescMessage, input: Uint8Array, stats: Stats): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const pf of fields) {
    const field = desc.fields.find((x) => x.number === pf.field);
    assert.ok(field, `unknown field ${pf.field}`);
    const key = field.localName;
    if (field.fieldKind === 'message' || (field.fieldKind === 'list' && field.listKind === 'message')) {
      assert.ok(pf.len?.message, `field ${field.name} @${pf.offset}: no message view (${pf.len?.messageError})`);
      if (pf.len.size > 0) { stats.lenTotal++; if (pf.len.as === 'message') stats.lenChosenRight++; }
      const sub = interpret(pf.len.message, field.message!, input, stats);
      if (field.fieldKind === 'list') ((out[key] ??= []) as unknown[]).push(sub);
      else out[key] = sub;
      continue;
    }
    const scalar = (field as { scalar?: number }).scalar;
    if (scalar === T.STRING) {
      assert.ok(pf.len?.string !== undefined, `field ${field.name}: no string view`);
      stats.lenTotal++; if (pf.len.as === 'string') stats.lenChosenRight++;
      if (field.fieldKind === 'list') ((out[key] ??= []) as unknown[]).push(pf.len.string);
      else out[key] = pf.len.string;
      continue;
    }
    if (scalar === T.BYTES) {
      assert.ok(pf.len);
      out[key] = input.slice(pf.len.dataOffset, pf.len.dataOffset + pf.len.size);
      continue;
    }
    if (field.fieldKind === 'list') {
      const arr = (out[key] ??= []) as unknown[];
      if (pf.len) {
        const t = scalar ?? T.ENUM;
        const view = pf.len.packed?.[WIDTH[t]!];
        assert.ok(view, `field ${field.name}: no packed ${WIDTH[t]} view`);
        for (const item of view) arr.push(scalarOf({ ...pf, len: undefined, [WIDTH[t]!]: item } as PbField, field));
      } else arr.push(scalarOf(pf, field));
      continue;
    }
    out[key] = scalarOf(pf, field);
  }
  return out;
}

test('protobuf decoder agrees with @bufbuild/protobuf on a seeded corpus of 600 messages', () => {
  const r = rng(20261129);
  const stats: Stats = { lenChosenRight: 0, lenTotal: 0 };
  let negativeVarints = 0, packed = 0, nested = 0;
  for (let i = 0; i < 600; i++) {
    const msg = create(Outer, rndOuter(r) as never);
    const bytes = toBinary(Outer, msg);
    const ref = fromBinary(Outer, bytes);
    const res = decodeProtobuf(bytes);
    assert.equal(res.error, undefined, `message ${i}: ${res.error?.message}`);
    const mine = create(Outer, interpret(res.fields, Outer, bytes, stats) as never);
    if (!equals(Outer, mine, ref)) {
      assert.deepEqual(toJson(Outer, mine), toJson(Outer, ref), `message ${i} differs`);
      assert.fail(`message ${i} differs`);
    }
    for (const pf of res.fields) {
      if (pf.varint && pf.varint.signed.startsWith('-')) negativeVarints++;
      if (pf.len?.as === 'packed') packed++;
      if (pf.len?.as === 'message') nested++;
    }
  }
  // The corpus really exercises what it claims to.
  assert.ok(negativeVarints > 100 && packed > 100 && nested > 100, `${negativeVarints} ${packed} ${nested}`);
  console.log(`# len fields chosen right: ${stats.lenChosenRight}/${stats.lenTotal}; negative varints ${negativeVarints}, packed ${packed}, nested ${nested}`);
  // The default guess (message vs string) is right for nearly every length-delimited field.
  assert.ok(stats.lenChosenRight / stats.lenTotal > 0.97, `chosen right ${stats.lenChosenRight}/${stats.lenTotal}`);
});

test('protobuf: explicit views for negative varints, zigzag, floats, packed', () => {
  const w = new BinaryWriter();
  w.tag(1, WireType.Varint).int32(-1);
  w.tag(2, WireType.Varint).sint32(-2);
  w.tag(3, WireType.Bit32).float(1.5);
  w.tag(4, WireType.Bit64).double(-0.25);
  w.tag(5, WireType.LengthDelimited).fork().float(1).float(2).float(-3.5).join();
  w.tag(6, WireType.LengthDelimited).string('hello npu');
  w.tag(7, WireType.StartGroup); w.tag(1, WireType.Varint).uint32(7); w.tag(7, WireType.EndGroup);
  const bytes = w.finish();
  const res = decodeProtobuf(bytes);
  assert.equal(res.error, undefined);
  const [a, b, c, d, e, s, g] = res.fields;
  assert.deepEqual(a!.varint, { unsigned: '18446744073709551615', signed: '-1', zigzag: '-9223372036854775808' });
  assert.equal(b!.varint!.zigzag, '-2');
  assert.equal(c!.fixed32!.f32, 1.5);
  assert.equal(d!.fixed64!.f64, -0.25);
  assert.equal(e!.len!.as, 'packed');
  assert.deepEqual(e!.len!.packed!.fixed32!.map((x) => x.f32), [1, 2, -3.5]);
  assert.equal(s!.len!.as, 'string');
  assert.equal(s!.len!.string, 'hello npu');
  assert.equal(g!.wire, 'group');
  assert.equal(g!.group![0]!.varint!.unsigned, '7');
});

test('protobuf: depth limit, blobs, and errors with offsets', () => {
  // 40 levels of nesting: past the depth limit the innermost is left as bytes, not an error.
  let inner: Uint8Array = new BinaryWriter().tag(1, WireType.Varint).uint32(1).finish();
  for (let i = 0; i < 40; i++) inner = new BinaryWriter().tag(2, WireType.LengthDelimited).bytes(inner).finish();
  const res = decodeProtobuf(inner, { maxDepth: 8 });
  assert.equal(res.error, undefined);
  let node = res.fields[0]!, depth = 0;
  while (node.len?.as === 'message') { node = node.len.message![0]!; depth++; }
  assert.equal(depth, 8);
  assert.match(node.len!.messageError!, /depth limit 8/);

  const blob = new Uint8Array(5000).map((_, i) => (i * 2654435761) >>> 24);
  const container = new BinaryWriter().tag(1, WireType.LengthDelimited).string('model').tag(3, WireType.LengthDelimited).fork().tag(4, WireType.LengthDelimited).bytes(blob).join().finish();
  const blobs = listBlobs(decodeProtobuf(container).fields, 1024);
  assert.equal(blobs.length, 1);
  assert.equal(blobs[0]!.path, '3.4');
  assert.equal(blobs[0]!.size, 5000);
  assert.equal(container.subarray(blobs[0]!.offset, blobs[0]!.offset + 5000).every((x, i) => x === blob[i]), true);
  assert.ok(blobs[0]!.entropy > 7);

  const truncated = container.subarray(0, 100);
  const bad = decodeProtobuf(truncated, {}, 16);
  assert.equal(bad.fields.length, 1, 'the field before the damage is kept');
  assert.equal(bad.error!.offset, 16 + 8);
  assert.match(bad.error!.message, /field 3: length \d+ runs past the end/);
});

test('protobuf: a flatbuffer payload in a bytes field is pointed out, not read as packed varints', async () => {
  const { Builder } = await import('flatbuffers');
  const b = new Builder(64);
  const s = b.createString('conv1.weight');
  b.startObject(3); b.addFieldOffset(0, s, 0); b.addFieldInt32(1, 4096, 0); b.addFieldInt16(2, 3, 0); b.finish(b.endObject());
  const fb = b.asUint8Array();
  const bytes = new BinaryWriter().tag(1, WireType.LengthDelimited).string('graph').tag(3, WireType.LengthDelimited).bytes(fb).finish();
  const res = decodeProtobuf(bytes, {}, 100);
  const len = res.fields[1]!.len!;
  assert.equal(len.as, 'bytes');
  assert.equal(len.flatbufferRoot, len.dataOffset + new DataView(fb.buffer, fb.byteOffset).getUint32(0, true));
  assert.match(len.reason, /starts like a flatbuffer/);
  assert.ok(len.packed?.varint, 'the packed view is still there for whoever wants it');
});
