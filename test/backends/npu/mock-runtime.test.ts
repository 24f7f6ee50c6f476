// The mock NPU runtime: device memory apart from the host (reached only through memcpy, counted),
// capacity enforced, pointers checked, engines loaded/executed/unloaded, and the matmul's integer dot
// products equal to the ones computed here from the GGUF block integers.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createMockNpuRuntime, DEFAULT_NPU_CAPACITY } from '../../../src/backends/npu/mock-runtime.js';
import { NpuRuntimeError, type NpuContext } from '../../../src/backends/npu/runtime-api.js';
import { encodeGroupEngine } from '../../../src/backends/npu/encoder.js';
import { GraphBuilder } from '../../../src/graph/graph.js';
import { GgmlType } from '../../../src/gguf/ggml-types.js';
import { f32ToF16 } from '../../../src/quant/index.js';
import { rng } from '../../re/prng.js';

const rtP = createMockNpuRuntime({ threads: 1, capacityBytes: 1 << 20 });
after(async () => (await rtP).close());

const isErr = (code: string, re?: RegExp) => (e: unknown) => e instanceof NpuRuntimeError && e.code === code && (!re || re.test(e.message));

test('default capacity is the AX-M1 card (7040 MiB); device info reports use', async () => {
  assert.equal(DEFAULT_NPU_CAPACITY, 7040 * 1024 * 1024);
  const rt = await rtP;
  assert.equal(rt.name, 'mock');
  assert.equal(rt.deviceCount(), 1);
  assert.deepEqual(rt.deviceInfo(0), { id: 0, name: 'mock-npu', memTotal: 1 << 20, memFree: 1 << 20 });
  assert.throws(() => rt.deviceInfo(1), isErr('NO_DEVICE'));
  assert.throws(() => rt.createContext(2), isErr('NO_DEVICE'));
});

test('capacity is enforced; free returns it; destroy frees everything', async () => {
  const rt = await rtP;
  const ctx = rt.createContext(0);
  const a = ctx.malloc(600_000);
  assert.equal(rt.deviceInfo(0).memFree, (1 << 20) - 600_000);
  assert.throws(() => ctx.malloc(500_000), isErr('OUT_OF_DEVICE_MEMORY', /needs 500032 bytes but 448576 of 1048576 are free/));
  const b = ctx.malloc(400_000);
  ctx.free(a);
  assert.throws(() => ctx.free(a), isErr('BAD_POINTER'), 'double free');
  const c = ctx.malloc(500_000);
  assert.throws(() => ctx.free(c + 64), isErr('BAD_POINTER', /not its start/));
  ctx.destroy();
  assert.equal(rt.deviceInfo(0).memFree, 1 << 20);
  assert.throws(() => ctx.malloc(1), isErr('CLOSED'));
  assert.throws(() => ctx.memset(b, 0, 1), isErr('CLOSED'));
});

test('memory is reached only through memcpy; bytes are counted exactly; pointers are checked', async () => {
  const rt = await rtP;
  const ctx = rt.createContext(0);
  try {
    const p = ctx.malloc(1000), q = ctx.malloc(1000);
    // a device pointer is no host address: above wasm32's 4 GiB
    assert.ok(p >= 2 ** 32 && q >= 2 ** 32);
    const src = Uint8Array.from({ length: 1000 }, (_, i) => (i * 7) & 255);
    ctx.memcpyHostToDevice(p, src);
    src.fill(0); // the device holds its own copy
    ctx.memcpyDeviceToDevice(q, p, 1000);
    ctx.memset(p + 10, 0xab, 5);
    const back = new Uint8Array(1000), back2 = new Uint8Array(1000);
    ctx.memcpyDeviceToHost(back, p);
    ctx.memcpyDeviceToHost(back2, q);
    back2[0] = 99; // nor does the host's copy alias the device
    const again = new Uint8Array(1);
    ctx.memcpyDeviceToHost(again, q);
    assert.equal(again[0], 0);
    for (let i = 0; i < 1000; i++) {
      assert.equal(back[i], i >= 10 && i < 15 ? 0xab : (i * 7) & 255);
      if (i) assert.equal(back2[i], (i * 7) & 255);
    }
    assert.deepEqual(ctx.counters(), { bytesHostToDevice: 1000, bytesDeviceToHost: 2001, bytesDeviceToDevice: 1000, engineCalls: 0 });
    // out of bounds, unknown pointers: typed errors, nothing counted
    assert.throws(() => ctx.memcpyHostToDevice(p + 990, new Uint8Array(11)), isErr('BAD_POINTER', /run past the 1000-byte allocation/));
    assert.throws(() => ctx.memcpyDeviceToHost(new Uint8Array(4), 12345), isErr('BAD_POINTER'));
    assert.throws(() => ctx.memset(q, 0, 1001), isErr('BAD_POINTER'));
    assert.throws(() => ctx.memcpyDeviceToDevice(q, p, -1), isErr('BAD_IO'));
    assert.deepEqual(ctx.counters(), { bytesHostToDevice: 1000, bytesDeviceToHost: 2001, bytesDeviceToDevice: 1000, engineCalls: 0 });
    // another context's memory is not this one's
    const other = rt.createContext(0);
    assert.throws(() => other.memcpyDeviceToHost(new Uint8Array(4), p), isErr('BAD_POINTER'));
    other.destroy();
    // nothing reachable from the context is host memory holding device bytes
    const seen = new Set<unknown>();
    const walk = (o: unknown, depth: number): void => {
      if (o === null || typeof o !== 'object' || seen.has(o) || depth > 4) return;
      seen.add(o);
      assert.ok(!(o instanceof WebAssembly.Memory) && !ArrayBuffer.isView(o) && !(o instanceof ArrayBuffer) && !(o instanceof SharedArrayBuffer), 'context exposes memory');
      for (const k of Reflect.ownKeys(o)) walk((o as Record<string | symbol, unknown>)[k], depth + 1);
    };
    walk(ctx, 0);
  } finally {
    ctx.destroy();
  }
});

/** One mul_mat [cols -> rows] over nTok tokens, compiled to an engine. */
function matmulEngine(type: number, weight: Uint8Array, rows: number, cols: number, nTok: number) {
  const b = new GraphBuilder();
  const w = b.leaf('w', 'weight', type, [cols, rows]);
  const x = b.leaf('x', 'input', 'f32', [cols, nTok]);
  const tok = b.leaf('t', 'input', 'i32', [nTok]), pos = b.leaf('p', 'input', 'i32', [nTok]), outIds = b.leaf('o', 'input', 'i32', [nTok]);
  b.setGroup('blk.0');
  const y = b.mulMat(w, x, 'y');
  const g = b.finish({ tokens: tok.id, positions: pos.id, outputRows: outIds.id }, y, nTok, nTok);
  return encodeGroupEngine({ graph: g, group: { name: 'blk.0', nodes: [...g.nodes] }, nTokens: nTok, weightBytes: () => weight }, 'htp');
}

function run(ctx: NpuContext, blob: Uint8Array, x: Float32Array, outFloats: number): Float32Array {
  const h = ctx.loadEngine(blob);
  const info = ctx.engineInfo(h);
  assert.deepEqual(info.inputs.map((i) => [i.name, i.dtype, i.bytes]), [['x', 'f32', x.byteLength]]);
  assert.deepEqual(info.outputs.map((i) => [i.name, i.dtype, i.bytes]), [['y', 'f32', 4 * outFloats]]);
  const xi = ctx.malloc(x.byteLength), yo = ctx.malloc(4 * outFloats);
  ctx.memcpyHostToDevice(xi, new Uint8Array(x.buffer));
  ctx.execute(h, [xi], [yo]);
  const y = new Float32Array(outFloats);
  ctx.memcpyDeviceToHost(new Uint8Array(y.buffer), yo);
  ctx.unloadEngine(h);
  ctx.free(xi); ctx.free(yo);
  return y;
}

test('matmul: the integer dot products of Q8_0 and Q4_0 weights with int8-quantized activations are exact', async () => {
  // Scales of 1 and integer activations whose block max is 127: ggml's Q8_0 activation quantization keeps
  // them as they are, so every output is a sum of integer products, exact in f32 in any order.
  const rt = await rtP;
  const ctx = rt.createContext(0);
  const r = rng(3), rows = 12, cols = 96, nTok = 3;
  const x = new Float32Array(cols * nTok);
  for (let i = 0; i < x.length; i++) x[i] = i % 32 === 5 ? 127 : r.int(-127, 127);
  const one = f32ToF16(1);
  try {
    for (const type of [GgmlType.Q8_0, GgmlType.Q4_0]) {
      const bs = type === GgmlType.Q8_0 ? 34 : 18, w = new Uint8Array(rows * (cols / 32) * bs);
      const ints = new Int8Array(rows * cols);
      for (let rr = 0; rr < rows; rr++) {
        for (let bl = 0; bl < cols / 32; bl++) {
          const o = (rr * (cols / 32) + bl) * bs;
          w[o] = one & 255; w[o + 1] = one >> 8;
          for (let j = 0; j < (type === GgmlType.Q8_0 ? 32 : 16); j++) w[o + 2 + j] = r.int(0, 255);
          for (let j = 0; j < 32; j++) {
            ints[rr * cols + bl * 32 + j] = type === GgmlType.Q8_0 ? (w[o + 2 + j]! << 24) >> 24 : ((j < 16 ? w[o + 2 + j]! & 15 : w[o + 2 + j - 16]! >> 4) - 8);
          }
        }
      }
      const before = ctx.counters();
      const eng = matmulEngine(type, w, rows, cols, nTok);
      const y = run(ctx, eng.blob, x, rows * nTok);
      for (let t = 0; t < nTok; t++) {
        for (let rr = 0; rr < rows; rr++) {
          let dot = 0;
          for (let c = 0; c < cols; c++) dot += ints[rr * cols + c]! * x[t * cols + c]!;
          assert.equal(y[t * rows + rr], dot, `type ${type} row ${rr} token ${t}`);
        }
      }
      const after = ctx.counters();
      assert.equal(after.engineCalls - before.engineCalls, 1);
      assert.equal(after.bytesHostToDevice - before.bytesHostToDevice, eng.blob.length + x.byteLength, 'the blob and the input cross the link');
      assert.equal(after.bytesDeviceToHost - before.bytesDeviceToHost, 4 * rows * nTok);
    }
  } finally {
    ctx.destroy();
  }
});

test('engines: bad blobs, bad bindings and over-capacity loads are typed errors; async streams report failures at synchronize', async () => {
  const rt = await rtP;
  const ctx = rt.createContext(0);
  try {
    const w = new Uint8Array(4 * 34);
    const eng = matmulEngine(GgmlType.Q8_0, w, 4, 32, 2);
    assert.throws(() => ctx.loadEngine(eng.blob.subarray(0, 20)), isErr('BAD_ENGINE', /shorter than the 32-byte header/));
    const bad = eng.blob.slice(); bad[40] ^= 1;
    assert.throws(() => ctx.loadEngine(bad), isErr('BAD_ENGINE', /checksum/));
    const h = ctx.loadEngine(eng.blob);
    const x = ctx.malloc(256), y = ctx.malloc(32), small = ctx.malloc(16);
    assert.throws(() => ctx.execute(h, [x], []), isErr('BAD_IO', /0 outputs bound/));
    assert.throws(() => ctx.execute(h, [x], [small]), isErr('BAD_POINTER', /output 0 \(y\)/));
    assert.throws(() => ctx.execute(99, [x], [y]), isErr('BAD_ENGINE'));
    const s = ctx.createStream();
    ctx.executeAsync(h, [x], [y], s);
    ctx.executeAsync(h, [x], [y], s);
    await s.synchronize();
    ctx.executeAsync(h, [x], [small], s);
    ctx.executeAsync(h, [x], [y], s); // skipped: the stream failed
    await assert.rejects(s.synchronize(), isErr('BAD_POINTER'));
    await s.synchronize();
    assert.equal(ctx.counters().engineCalls, 2);
    assert.throws(() => ctx.free(x + 1), isErr('BAD_POINTER'));
    ctx.unloadEngine(h);
    assert.throws(() => ctx.engineInfo(h), isErr('BAD_ENGINE'));
    // weights past the capacity
    const big = new Uint8Array(2048 * 34 * 16);
    const e2 = matmulEngine(GgmlType.Q8_0, big, 2048, 512, 1);
    const free = rt.deviceInfo(0).memFree;
    assert.throws(() => ctx.loadEngine(e2.blob), isErr('OUT_OF_DEVICE_MEMORY'));
    assert.equal(rt.deviceInfo(0).memFree, free, 'a failed load holds nothing');
  } finally {
    ctx.destroy();
  }
});
