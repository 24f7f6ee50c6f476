// Decoding real tensors from the parity fixtures (../shared/fixtures/parity, see its README).
// A missing fixture is an error, not a skip.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { fixture } from '../helpers/fixtures.js';
import { GgmlType, ggmlTypeName, rowBytes } from '../../src/gguf/ggml-types.js';
import { dequantizeRow } from '../../src/quant/dequantize.js';
import { roundToF16 } from '../../src/quant/float16.js';
import { quantizeActivations, vecDot, vecDotType } from '../../src/quant/vec-dot.js';
import { readGgufLite, type LiteGguf, type LiteTensor } from './gguf-lite.js';
import { gaussian } from './helpers.js';

// ../shared/fixtures/parity (GGUF_EDGE_FIXTURES overrides the fixtures root, as in every test)
const DIR = fixture('parity');
const ARCHS = ['llama', 'qwen2', 'qwen3', 'gemma2', 'gemma3', 'phi3'];

function decodeTensor(g: LiteGguf, t: LiteTensor): Float32Array {
  const n = t.dims.reduce((a, b) => a * b, 1);
  const out = new Float32Array(n);
  const ne0 = t.dims[0]!;
  const rb = rowBytes(t.type, ne0);
  for (let r = 0; r < n / ne0; r++) dequantizeRow(t.type, g.bytes, t.offset + r * rb, out, r * ne0, ne0);
  return out;
}

test('f16 fixtures decode to exactly the f32 fixtures rounded to f16', () => {
  for (const arch of ARCHS) {
    const h = readGgufLite(join(DIR, `${arch}-f16.gguf`));
    const s = readGgufLite(join(DIR, `${arch}-f32.gguf`));
    let checked = 0;
    for (const t of h.tensors.values()) {
      if (t.type !== GgmlType.F16) continue;
      const ref = s.tensors.get(t.name);
      assert.ok(ref && ref.type === GgmlType.F32, `${arch}: ${t.name} missing from the f32 file`);
      const a = decodeTensor(h, t), b = decodeTensor(s, ref);
      assert.equal(a.length, b.length);
      for (let i = 0; i < a.length; i++) {
        if (a[i] !== roundToF16(b[i]!)) assert.fail(`${arch} ${t.name}[${i}]: f16 ${a[i]} vs f32 ${b[i]} -> ${roundToF16(b[i]!)}`);
      }
      checked++;
    }
    assert.ok(checked >= 10, `${arch}: only ${checked} f16 tensors`);
  }
});

test('quantized fixtures decode to finite weights with the calibrated RMS (0.03)', () => {
  const counts = new Map<number, number>();
  for (const arch of ['llama', 'gemma3']) {
    for (const kind of ['q8_0', 'q4_0', 'q4_k', 'q6_k', 'q4_k_m']) {
      const g = readGgufLite(join(DIR, `${arch}-${kind}.gguf`));
      for (const t of g.tensors.values()) {
        if (t.type === GgmlType.F32) continue;
        const x = decodeTensor(g, t);
        // The generator scaled each tensor's f16 block scales so that the dequantized RMS is
        // 0.03 (checked against gguf-py's decoders); any misread scale bit breaks this.
        let s2 = 0;
        for (let i = 0; i < x.length; i++) {
          if (!Number.isFinite(x[i]!)) assert.fail(`${arch}-${kind} ${t.name}[${i}] = ${x[i]}`);
          s2 += x[i]! * x[i]!;
        }
        const rms = Math.sqrt(s2 / x.length);
        assert.ok(Math.abs(rms / 0.03 - 1) < 1e-3, `${arch}-${kind} ${t.name} (${ggmlTypeName(t.type)}): rms ${rms}`);
        counts.set(t.type, (counts.get(t.type) ?? 0) + 1);
      }
    }
  }
  for (const t of [GgmlType.Q8_0, GgmlType.Q4_0, GgmlType.Q4_K, GgmlType.Q6_K]) assert.ok((counts.get(t) ?? 0) > 10, `few ${ggmlTypeName(t)} tensors`);
});

test('vecDot on fixture rows agrees with the dequantized rows', () => {
  const x = gaussian(512, 1, 77);
  for (const kind of ['q8_0', 'q4_0', 'q4_k', 'q6_k', 'f16']) {
    const g = readGgufLite(join(DIR, `llama-${kind}.gguf`));
    const t = g.tensors.get('blk.0.ffn_down.weight')!;
    const ne0 = t.dims[0]!, vt = vecDotType(t.type);
    const a = new Uint8Array(rowBytes(vt, ne0));
    quantizeActivations(vt, x, 0, a, 0, ne0);
    const ad = new Float32Array(ne0), wd = new Float32Array(ne0);
    dequantizeRow(vt, a, 0, ad, 0, ne0);
    for (let r = 0; r < 8; r++) {
      const off = t.offset + r * rowBytes(t.type, ne0);
      dequantizeRow(t.type, g.bytes, off, wd, 0, ne0);
      let ref = 0, mag = 0;
      for (let i = 0; i < ne0; i++) { ref += wd[i]! * ad[i]!; mag += Math.abs(wd[i]! * ad[i]!); }
      const got = vecDot(t.type, ne0, g.bytes, off, a, 0);
      assert.ok(Math.abs(got - ref) <= 2e-6 * mag, `llama-${kind} row ${r}: ${got} vs ${ref}`);
    }
  }
});
