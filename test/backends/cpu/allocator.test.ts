// The cpu runtime's allocator returns memory: random allocate/free cycles (mixed sizes and alignments)
// never overlap live allocations and, once warm, never grow the wasm memory; buffers the device hands out
// give their range back on free(); a model's Context created and closed many times leaves the memory
// where the first one put it. And the device checks a plan's operands against their placements once, with
// a typed error, instead of letting a kernel write outside its buffer.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createCpuRuntime } from '../../../src/backends/cpu/runtime.js';
import { createCpuDevice } from '../../../src/backends/cpu/device.js';
import type { Placement } from '../../../src/backends/backend.js';
import { GraphBuilder } from '../../../src/graph/graph.js';
import { openGguf } from '../../../src/gguf/open.js';
import { loadModel } from '../../../src/runtime/model.js';
import { Context } from '../../../src/runtime/context.js';
import { fixture } from '../../helpers/fixtures.js';
import { rng } from './ref.js';

const device = await createCpuDevice({ threads: 1 });
after(() => device.close());

test('allocate/free cycles: no overlap, alignment kept, the memory stops growing, everything comes back', async () => {
  const rt = await createCpuRuntime({ threads: 1 });
  try {
    const base = rt.used();
    const rnd = rng(31);
    const live = new Map<number, number>(); // ptr -> bytes
    let bytesAfterWarmup = 0;
    for (let step = 0; step < 6000; step++) {
      if (step === 3000) bytesAfterWarmup = rt.memory.buffer.byteLength;
      if (live.size > 0 && (rnd() < 0.5 || live.size > 40)) {
        const ptrs = [...live.keys()];
        const p = ptrs[Math.floor(rnd() * ptrs.length)]!;
        rt.free(p);
        live.delete(p);
      } else {
        // sizes from a few bytes to 256 KiB, log-uniform; alignments 1..4096
        const bytes = Math.floor(2 ** (rnd() * 18));
        const align = 2 ** Math.floor(rnd() * 13);
        const p = rt.alloc(bytes, align);
        assert.equal(p % align, 0, `alignment ${align}`);
        for (const [q, n] of live) assert.ok(p + Math.max(bytes, 1) <= q || q + Math.max(n, 1) <= p, `[${p}, +${bytes}) overlaps [${q}, +${n})`);
        // a write fills exactly the allocation; the overlap check above keeps it from touching another
        rt.u8(p, bytes).fill(step & 255);
        live.set(p, bytes);
      }
    }
    assert.equal(rt.memory.buffer.byteLength, bytesAfterWarmup, 'the memory grew after 3,000 warm-up cycles');
    for (const p of live.keys()) rt.free(p);
    assert.equal(rt.used(), base, 'freeing everything brings the top back down');
    assert.equal(rt.liveBytes(), 0);
    assert.throws(() => rt.free(base + 64 * 1024 * 1024), (e: Error & { code?: string }) => e.code === 'BAD_SHAPE');
  } finally {
    await rt.close();
  }
});

test('a freed range of the right size is reused, freed neighbours coalesce', async () => {
  const rt = await createCpuRuntime({ threads: 1 });
  try {
    const a = rt.alloc(1 << 20), b = rt.alloc(1 << 20), c = rt.alloc(1 << 20);
    rt.free(a);
    assert.equal(rt.alloc(1 << 20), a, 'first fit takes the hole');
    rt.free(a); rt.free(b);
    // a and b merged: a 2 MiB request fits below c
    assert.equal(rt.alloc(2 << 20), a);
    rt.free(a); rt.free(c);
    assert.equal(rt.liveBytes(), 0);
  } finally {
    await rt.close();
  }
});

test('cpu buffers: free() returns the range, 200 allocate/free cycles keep the memory flat', () => {
  const bt = device.bufferType();
  // the largest pair of the cycle first: later cycles must fit in what it grew
  const first = bt.allocate(3 << 20, 'compute'), second = bt.allocate(12345, 'state');
  first.free(); second.free();
  const bytes = device.runtime.memory.buffer.byteLength, live = device.runtime.liveBytes();
  for (let i = 0; i < 200; i++) {
    const a = bt.allocate((1 + (i % 3)) << 20, 'compute'), b = bt.allocate(12345, 'state');
    a.free(); b.free();
    b.free(); // twice: no effect
  }
  assert.equal(device.runtime.memory.buffer.byteLength, bytes);
  assert.equal(device.runtime.liveBytes(), live);
  assert.throws(() => first.get(0, 4), /after free/);
});

test('a Context created and closed 42 times (a new prompt length each time) does not grow the memory', async () => {
  const file = openGguf(fixture('parity/llama-q8_0.gguf'));
  try {
    const model = loadModel(file, { device });
    const afterLoad = device.runtime.liveBytes();
    let bytes1 = 0, live1 = 0, used1 = 0;
    for (let i = 0; i < 42; i++) {
      const ctx = new Context(model, { nCtx: 256 });
      // prompt lengths cycle through 7 values: a plan (and arena) per batch shape, the runtime's scratch
      // growing to the largest once
      await ctx.decode(Array.from({ length: 1 + (i % 7) * 3 }, (_, j) => 1 + ((i + j) % 50)));
      await ctx.decode([3]);
      ctx.close();
      // what stays after close(): the runtime's scratch (quantized activations, rope rows, attention), < 1 MiB here
      assert.ok(device.runtime.liveBytes() - afterLoad < 1 << 20, `context ${i}: close() left ${device.runtime.liveBytes() - afterLoad} bytes allocated`);
      if (i === 6) { bytes1 = device.runtime.memory.buffer.byteLength; live1 = device.runtime.liveBytes(); used1 = device.runtime.used(); }
      if (i > 6) assert.equal(device.runtime.liveBytes(), live1, `context ${i}: close() did not return the context's memory`);
    }
    assert.equal(device.runtime.memory.buffer.byteLength, bytes1, 'the wasm memory grew after every shape had been seen once');
    assert.ok(device.runtime.used() <= used1, `allocation top rose from ${used1} to ${device.runtime.used()}`);
  } finally {
    file.source.close?.();
  }
});

/** a kv_store graph: rows of `xRow` values stored into a cache with rows of `cacheRow` */
function kvStoreCase(xRow: number, cacheRow: number, slots: number, positions: number[]) {
  const b = new GraphBuilder();
  const cache = b.leaf('cache', 'state', 'f16', [cacheRow, slots]);
  const x = b.leaf('x', 'input', 'f32', [cacheRow, positions.length]);
  const pos = b.leaf('pos', 'input', 'i32', [positions.length]);
  const s = b.kvStore(cache, x, pos, 'store');
  // the graph builder refuses mismatched rows too: the device must not rely on it (defence in depth)
  x.shape[0] = xRow;
  const g = b.finish({ tokens: x.id, positions: pos.id, outputRows: x.id }, s, positions.length, 1);
  const bt = device.bufferType();
  const placements: Placement[] = [];
  const put = (id: number, nBytes: number) => { placements[id] = { buffer: bt.allocate(nBytes, 'compute'), offset: 0, nBytes }; };
  put(cache.id, cacheRow * slots * 2);
  put(x.id, xRow * positions.length * 4);
  put(pos.id, positions.length * 4);
  put(s.id, 4);
  placements[pos.id]!.buffer.set(0, new Uint8Array(Int32Array.from(positions).buffer));
  // a guard buffer right after the cache: a write past the cache would land here
  const guard = bt.allocate(1 << 16, 'compute');
  guard.clear(0x5a);
  return { g, at: (id: number) => placements[id]!, guard, free: () => { for (const p of placements) p?.buffer.free(); guard.free(); } };
}

test('a plan whose operands overrun their placements is refused with OUT_OF_BOUNDS, before any kernel runs', async () => {
  const backend = device.createBackend();
  // kv_store rows wider than the cache's rows (an oversized attn_k in a file): refused at compile
  const wide = kvStoreCase(96, 64, 4, [3]);
  try {
    assert.throws(() => backend.compute({ graph: wide.g, placement: wide.at }, wide.g.nodes),
      (e: Error & { code?: string }) => e.code === 'OUT_OF_BOUNDS' && /rows of 96 values stored into a cache with rows of 64/.test(e.message));
    assert.ok(wide.guard.get(0, 1 << 16).every((v) => v === 0x5a), 'the neighbouring buffer was written');
  } finally {
    wide.free();
  }
  // a placement smaller than its tensor's shape
  const small = kvStoreCase(64, 64, 4, [0]);
  try {
    const at = (id: number) => (id === small.g.tensors.find((t) => t.name === 'cache')!.id ? { ...small.at(id), nBytes: 64 * 2 } : small.at(id));
    assert.throws(() => backend.compute({ graph: small.g, placement: at }, small.g.nodes),
      (e: Error & { code?: string }) => e.code === 'OUT_OF_BOUNDS' && /cache needs 512 bytes/.test(e.message));
  } finally {
    small.free();
  }
  // a position past the cache's slots: refused when it arrives, nothing written
  const far = kvStoreCase(64, 64, 4, [4]);
  try {
    assert.throws(() => backend.compute({ graph: far.g, placement: far.at }, far.g.nodes),
      (e: Error & { code?: string }) => e.code === 'OUT_OF_BOUNDS' && /position 4 outside the cache's 4 slots/.test(e.message));
    assert.ok(far.guard.get(0, 1 << 16).every((v) => v === 0x5a), 'the neighbouring buffer was written');
  } finally {
    far.free();
  }
  // the same graph in bounds computes
  const ok = kvStoreCase(64, 64, 4, [3]);
  try {
    await backend.compute({ graph: ok.g, placement: ok.at }, ok.g.nodes);
    assert.ok(ok.guard.get(0, 1 << 16).every((v) => v === 0x5a));
  } finally {
    ok.free();
  }
});
