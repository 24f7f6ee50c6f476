// The webgpu device's last-bit numerics (small, fast): fmaX's emulation is a correctly rounded fused
// multiply-add (against quant/rounding.ts fmaf), and the quantized matmuls equal the reference device bit for
// bit where ggml's rules are easy to miss: Q8_K blocks holding both +amax and -amax (the 4x8 GEMM quantizer's
// sign choice; it flips q and d together, so it cancels in the products), Q4_0/Q4_K with repacked (rows % 8 == 0) and
// plain row counts, one token (GEMV) and batches of 4 + a remainder; F32/F16 in tinyBLAS's and vec_dot's lanes.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { referenceDevice } from '../../../src/backends/reference/device.js';
import { fmaWgsl, probeFusedFma } from '../../../src/backends/webgpu/fma.js';
import { GraphBuilder } from '../../../src/graph/graph.js';
import { GgmlType, rowBytes } from '../../../src/gguf/ggml-types.js';
import { quantizer } from '../../../src/quant/index.js';
import { fmaf } from '../../../src/quant/rounding.js';
import { runCase, type Case } from '../conformance/suite.js';
import { closeGpus, needGpu } from './adapter.js';

after(closeGpus);

test('fmaX (emulated) rounds once, as fmaf; the probe tells a fused fma from an unfused one', async (t) => {
  const d = await needGpu(t);
  if (!d) return;
  const dev = d.gpu.device;
  const N = 8192, f = Math.fround;
  const data = new Float32Array(4 * N);
  let s = 7;
  const rnd = () => { s = (Math.imul(s, 1103515245) + 12345) >>> 0; return s / 2 ** 32; };
  for (let i = 0; i < N; i++) {
    const a = f((2 * rnd() - 1) * 2 ** Math.floor(20 * rnd() - 10)), b = f((2 * rnd() - 1) * 2 ** Math.floor(20 * rnd() - 10));
    // c: random, or nearly cancelling a*b (the residual steps of divisions and square roots)
    const c = i % 2 ? f((2 * rnd() - 1) * 2 ** Math.floor(20 * rnd() - 10)) : f(-a * b);
    data.set([a, b, c, 0], 4 * i);
  }
  data.set([1 + 2 ** -12, 1 + 2 ** -12, -(1 + 2 ** -11), 0], 0);
  const code = `struct P { n: u32, never: u32 }
@group(0) @binding(0) var<uniform> p: P;
@group(0) @binding(1) var<storage, read_write> B: array<vec4<f32>>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3<u32>) {
  if (g.x >= p.n) { return; }
  let v = B[g.x]; B[g.x].w = fmaX(v.x, v.y, v.z);
}` + fmaWgsl(false);
  const pipe = dev.createComputePipeline({ layout: 'auto', compute: { module: dev.createShaderModule({ code }), entryPoint: 'main' } });
  const buf = dev.createBuffer({ size: data.byteLength, usage: 0x80 | 0x04 | 0x08 });
  const out = dev.createBuffer({ size: data.byteLength, usage: 0x01 | 0x08 });
  const ub = dev.createBuffer({ size: 16, usage: 0x40 | 0x08 });
  dev.queue.writeBuffer(buf, 0, data);
  dev.queue.writeBuffer(ub, 0, new Uint32Array([N, 0, 0, 0]));
  const enc = dev.createCommandEncoder();
  const pass = enc.beginComputePass();
  pass.setPipeline(pipe);
  pass.setBindGroup(0, dev.createBindGroup({ layout: pipe.getBindGroupLayout(0), entries: [{ binding: 0, resource: { buffer: ub } }, { binding: 1, resource: { buffer: buf } }] }));
  pass.dispatchWorkgroups(N / 64);
  pass.end();
  enc.copyBufferToBuffer(buf, 0, out, 0, data.byteLength);
  dev.queue.submit([enc.finish()]);
  await out.mapAsync(1);
  const r = new Float32Array(out.getMappedRange().slice(0));
  out.unmap();
  const bad: string[] = [];
  for (let i = 0; i < N; i++) {
    const want = fmaf(data[4 * i]!, data[4 * i + 1]!, data[4 * i + 2]!);
    if (!Object.is(r[4 * i + 3], want)) bad.push(`fma(${data[4 * i]}, ${data[4 * i + 1]}, ${data[4 * i + 2]}) = ${r[4 * i + 3]}, not ${want}`);
  }
  assert.deepEqual(bad.slice(0, 5), []);
  for (const b of [buf, out, ub]) b.destroy();
  // the device's choice agrees with the probe, and the description says which
  const fused = await probeFusedFma(dev);
  assert.match(d.description, fused ? /fma native/ : /fma emulated/);
});

function mulMatCase(wt: number, k: number, n: number, m: number, x: Float32Array, seed: number): Case {
  const b = new GraphBuilder();
  const w = b.leaf('w', 'weight', wt, [k, n]);
  const xl = b.leaf('x', 'input', 'f32', [k, m]);
  const out = b.mulMat(w, xl);
  const graph = b.finish({ tokens: -1, positions: -1, outputRows: -1 }, out, m, m);
  let s = seed;
  const wf = Float32Array.from({ length: k * n }, () => { s = (Math.imul(s, 1103515245) + 12345) >>> 0; return (s / 2 ** 32 - 0.5) * 2; });
  const rb = rowBytes(wt, k), wb = new Uint8Array(rb * n), q = quantizer(wt);
  for (let i = 0; i < n; i++) q(wf, i * k, wb, i * rb, k);
  const data = new Map([[w.id, wb], [xl.id, new Uint8Array(x.buffer)]]);
  return { graph, data, steps: [new Map()] };
}

test('matmuls equal the reference bit for bit (Q8_K sign ties, repacked and plain rows, GEMV/GEMM, F32/F16 lane orders)', async (t) => {
  const d = await needGpu(t);
  if (!d) return;
  const ref = referenceDevice();
  const diffs: string[] = [];
  // F32/F16: tinyBLAS (rows % 4 == 0, a batch) or vec_dot (one token, 13 rows), 208 = 3 x 64 + a 16-value tail
  const shapes = [[GgmlType.Q4_K, 16, 512], [GgmlType.Q4_K, 12, 512], [GgmlType.Q6_K, 16, 512], [GgmlType.Q4_0, 16, 512], [GgmlType.Q4_0, 12, 512], [GgmlType.Q8_0, 16, 512],
    [GgmlType.F32, 16, 208], [GgmlType.F32, 13, 208], [GgmlType.F16, 16, 208], [GgmlType.F16, 13, 208]] as const;
  for (const [wt, n, k] of shapes) {
    for (const m of [1, 6]) {
      let s = 99 + m;
      const x = Float32Array.from({ length: k * m }, () => { s = (Math.imul(s, 1103515245) + 12345) >>> 0; return (s / 2 ** 32 - 0.5) * 4; });
      // every 256-block holds -3 first and +3 later (ggml's reference quantizer takes the negative, the 4x8
      // GEMM quantizer the positive)
      for (let r = 0; r < m; r++) for (let blk = 0; blk < Math.floor(k / 256); blk++) { x[r * k + blk * 256 + 5] = -3; x[r * k + blk * 256 + 200] = 3; }
      const c = mulMatCase(wt, k, n, m, x, 5 + n);
      const [got, want] = [await runCase(d, c), await runCase(ref, c)];
      const bad = want.findIndex((v, i) => !Object.is(v, got[i]));
      if (bad >= 0) diffs.push(`type ${wt} rows ${n} tokens ${m}: [${bad}] ${got[bad]} vs ${want[bad]}`);
    }
  }
  assert.deepEqual(diffs, []);
});
