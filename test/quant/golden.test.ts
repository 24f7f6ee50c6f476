// Bit-exactness against outputs captured from ggml's own binaries (see golden.ts for provenance).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { ggmlTypeInfo, ggmlTypeName, rowBytes, GgmlType } from '../../src/gguf/ggml-types.js';
import { dequantizeRow } from '../../src/quant/dequantize.js';
import { quantizeRow } from '../../src/quant/quantize.js';
import { f32FromBits } from '../../src/quant/float16.js';
import { quantizeActivations, vecDot, vecDotType } from '../../src/quant/vec-dot.js';
import { ACT_X86, DEQUANT_SHA256, GOLDEN_N, QUANT_REF, VEC_DOT_GENERIC } from './golden.js';
import { goldenBytes, goldenInput } from './helpers.js';

const n = GOLDEN_N;
const typeId = (name: string): number => (GgmlType as Record<string, number>)[name]!;
const hex = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');

/** Index of the first differing block, for a readable failure. */
function firstDiff(a: string, b: string, blockBytes: number): string {
  for (let i = 0; i < Math.min(a.length, b.length); i += 2) {
    if (a.slice(i, i + 2) !== b.slice(i, i + 2)) return `byte ${i / 2} (block ${Math.floor(i / 2 / blockBytes)})`;
  }
  return 'length';
}

test('quantizeRow is bit-exact with ggml quantize_row_*_ref', () => {
  for (const [name, want] of Object.entries(QUANT_REF)) {
    const t = typeId(name);
    const rb = rowBytes(t, n);
    const blockBytes = ggmlTypeInfo(t)!.typeSize;
    for (const kind of ['smooth', 'ties'] as const) {
      const out = new Uint8Array(rb);
      quantizeRow(t, goldenInput(kind, n), 0, out, 0, n);
      const got = hex(out);
      if (got !== want[kind]) assert.fail(`${name} (${kind}): differs from ggml at ${firstDiff(got, want[kind], blockBytes)}`);
    }
  }
});

test('x86 activation quantization is bit-exact with the zen4 CPU backend', () => {
  for (const [name, want] of Object.entries(ACT_X86)) {
    const t = typeId(name);
    for (const kind of ['act', 'ties'] as const) {
      const out = new Uint8Array(rowBytes(t, n));
      quantizeActivations(t, goldenInput(kind, n), 0, out, 0, n);
      assert.equal(hex(out), want[kind], `${name} (${kind})`);
    }
  }
});

test('dequantizeRow is bit-exact with ggml dequantize_row_*', () => {
  for (const [name, want] of Object.entries(DEQUANT_SHA256)) {
    const t = typeId(name);
    const bytes = name === 'IQ4_XS' ? goldenBytes(rowBytes(t, n), 136) : Buffer.from(QUANT_REF[name]!.smooth, 'hex');
    const out = new Float32Array(n);
    dequantizeRow(t, bytes, 0, out, 0, n);
    assert.equal(createHash('sha256').update(new Uint8Array(out.buffer)).digest('hex'), want, name);
  }
});

test('vecDot is bit-exact with ggml generic vec_dot (no-FMA build)', () => {
  for (const [name, bitsHex] of Object.entries(VEC_DOT_GENERIC)) {
    const t = typeId(name);
    const w = name === 'IQ4_XS' ? goldenBytes(rowBytes(t, n), 136) : Buffer.from(QUANT_REF[name]!.smooth, 'hex');
    const vt = ggmlTypeName(vecDotType(t));
    const a = Buffer.from(ACT_X86[vt]!.act, 'hex');
    const want = f32FromBits(parseInt(bitsHex, 16));
    assert.equal(vecDot(t, n, w, 0, a, 0, 'generic'), want, name);
  }
});
