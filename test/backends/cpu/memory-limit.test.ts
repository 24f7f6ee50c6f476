// A model too big for wasm32's 4 GiB gets a clear error naming the sizes, before anything is read
// or allocated: a real fixture written back through the GGUF writer with one extra tensor whose
// header claims 5 GiB (the byte source pretends the file is that long).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createCpuDevice } from '../../../src/backends/cpu/device.js';
import { parseGguf, parseGgufSource } from '../../../src/gguf/reader.js';
import { writeGguf } from '../../../src/gguf/writer.js';
import { toWriteInput } from '../../../src/gguf/rewrite.js';
import { GgmlType } from '../../../src/gguf/ggml-types.js';
import { loadModel } from '../../../src/runtime/model.js';
import { fixture } from '../../helpers/fixtures.js';

const device = await createCpuDevice({ threads: 1 });
after(() => device.close());

test('a model beyond 4 GiB: OUT_OF_MEMORY naming the sizes', () => {
  const src = parseGguf(new Uint8Array(readFileSync(fixture('parity/llama-q8_0.gguf'))));
  const { metadata, tensors } = toWriteInput(src);
  // last tensor: one Q8_0 row of 256 values (272 bytes), its row count patched below
  tensors.push({ name: 'zz_big.weight', dims: [256, 1], type: GgmlType.Q8_0, data: new Uint8Array(272) });
  const bytes = writeGguf({ metadata, tensors });
  const name = new TextEncoder().encode('zz_big.weight');
  let at = -1;
  for (let i = 0; i + name.length <= bytes.length && at < 0; i++) if (name.every((b, j) => bytes[i + j] === b)) at = i;
  assert.ok(at > 0);
  const dv = new DataView(bytes.buffer, bytes.byteOffset);
  const rows = 20_000_000; // x 272 bytes = 5.07 GiB
  dv.setBigInt64(at + name.length + 4 + 8, BigInt(rows), true); // after the name: u32 n_dims, i64 dims[0], i64 dims[1]
  const fakeSize = bytes.length + rows * 272;
  const file = parseGgufSource({
    size: fakeSize, name: 'fake-5GiB.gguf',
    read(offset, length, dest, destOffset = 0) {
      const out = dest ?? new Uint8Array(length);
      out.fill(0, destOffset, destOffset + length);
      if (offset < bytes.length) out.set(bytes.subarray(offset, Math.min(bytes.length, offset + length)), destOffset);
      return out;
    },
  });
  assert.equal(file.tensors.find((t) => t.name === 'zz_big.weight')!.nBytes, rows * 272);
  const usedBefore = device.runtime.used();
  assert.throws(() => loadModel(file, { device }), (e: Error & { code?: string }) => {
    assert.equal(e.code, 'OUT_OF_MEMORY', e.message);
    assert.match(e.message, /weights need 5\.\d\d GiB \(\d+ bytes\)/);
    assert.match(e.message, /4 GiB/);
    return true;
  });
  assert.equal(device.runtime.used(), usedBefore, 'nothing allocated');
});
