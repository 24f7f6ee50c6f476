// A model too big for wasm32's 4 GiB gets a clear error naming the sizes, before anything is read
// or allocated: a real fixture written back through the GGUF writer with a 20M-token vocabulary
// whose token_embd/output headers claim 5 GiB (the byte source pretends the file is that long).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createCpuDevice } from '../../../src/backends/cpu/device.js';
import { parseGguf, parseGgufSource } from '../../../src/gguf/reader.js';
import { writeGguf } from '../../../src/gguf/writer.js';
import { toWriteInput } from '../../../src/gguf/rewrite.js';
import { loadModel } from '../../../src/runtime/model.js';
import { fixture } from '../../helpers/fixtures.js';

const device = await createCpuDevice({ threads: 1 });
after(() => device.close());

test('a model beyond 4 GiB: OUT_OF_MEMORY naming the sizes', () => {
  const src = parseGguf(new Uint8Array(readFileSync(fixture('parity/llama-q8_0.gguf'))));
  const input = toWriteInput(src);
  // The vocabulary is what may legitimately be that large (the loader checks every tensor's shape
  // against the hyperparameters): no tokenizer, vocab_size R, and token_embd/output moved to the end of
  // the file with R rows of Q8_0 (136 bytes per 128 values) patched into their headers below.
  const R = 20_000_000; // 2 x R x 136 bytes = 5.07 GiB
  const metadata = input.metadata.filter(([k]) => !k.startsWith('tokenizer.') && k !== 'llama.vocab_size');
  metadata.push(['llama.vocab_size', { type: 'u32', value: R }]);
  const big = ['token_embd.weight', 'output.weight'];
  const tensors = [...input.tensors.filter((t) => !big.includes(t.name)), ...big.map((n) => input.tensors.find((t) => t.name === n)!)];
  const bytes = writeGguf({ metadata, tensors });
  const header = parseGguf(bytes, 'unpatched').dataOffset;
  const dv = new DataView(bytes.buffer, bytes.byteOffset);
  const infoAt = (s: string) => {
    const name = new TextEncoder().encode(s);
    for (let i = 0; i + name.length <= bytes.length; i++) if (dv.getBigUint64(i, true) === BigInt(name.length) && name.every((b, j) => bytes[i + 8 + j] === b)) return i + 8 + name.length;
    throw new Error(`no tensor info for ${s}`);
  };
  // after the name: u32 n_dims, i64 dims[0], i64 dims[1], u32 type, u64 offset
  const embAt = infoAt('token_embd.weight'), outAt = infoAt('output.weight');
  dv.setBigInt64(embAt + 12, BigInt(R), true);
  dv.setBigInt64(outAt + 12, BigInt(R), true);
  const embOffset = Number(dv.getBigUint64(embAt + 24, true));
  dv.setBigUint64(outAt + 24, BigInt(embOffset + R * 136), true);
  const fakeSize = header + embOffset + 2 * R * 136;
  const file = parseGgufSource({
    size: fakeSize, name: 'fake-5GiB.gguf',
    read(offset, length, dest, destOffset = 0) {
      const out = dest ?? new Uint8Array(length);
      out.fill(0, destOffset, destOffset + length);
      if (offset < bytes.length) out.set(bytes.subarray(offset, Math.min(bytes.length, offset + length)), destOffset);
      return out;
    },
  });
  assert.equal(file.tensors.find((t) => t.name === 'output.weight')!.nBytes, R * 136);
  const usedBefore = device.runtime.used();
  assert.throws(() => loadModel(file, { device }), (e: Error & { code?: string }) => {
    assert.equal(e.code, 'OUT_OF_MEMORY', e.message);
    assert.match(e.message, /weights need 5\.\d\d GiB \(\d+ bytes\)/);
    assert.match(e.message, /4 GiB/);
    return true;
  });
  assert.equal(device.runtime.used(), usedBefore, 'nothing allocated');
});
