// Every op of the graph op set on the cpu device against the reference device, through the real
// compute path (a small graph from GraphBuilder, tensors placed in each device's buffers, the
// device's backend computing the nodes): all weight types the loader reads, awkward shapes (odd
// sizes, weight rows not a multiple of 8 or of the thread count, batch 1 and > 1), 1 and 2 threads.
// Prints a max-abs-error table. With numerics 'exact' every result must be bit-identical; the 'fast'
// device (the default: free-order Q8_0/Q4_0/Q4_K kernels, weights in its own layouts through
// prepareWeight as at model load) only agrees to float rounding.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Device } from '../../../src/backends/backend.js';
import { createCpuDevice, LLAMA_EXACT_MATMUL_TYPES } from '../../../src/backends/cpu/device.js';
import { relaxedSimdAvailable } from '../../../src/backends/cpu/wasm.js';
import { referenceDevice } from '../../../src/backends/reference/device.js';
import { ggmlTypeByName } from '../../../src/gguf/ggml-types.js';
import { buildCases, runCase, SUITE_WEIGHT_TYPES, type CaseSpec } from '../conformance/suite.js';

const ref = referenceDevice();
// parallelMinWork 0: even these small ops are split across the threads
const cpu1 = await createCpuDevice({ threads: 1, numerics: 'exact' });
const cpu2 = await createCpuDevice({ threads: 2, parallelMinWork: 0, numerics: 'exact' });
const fast2 = await createCpuDevice({ threads: 2, parallelMinWork: 0, numerics: 'fast' });
// the SIMD128 build of the kernels (the others run the relaxed-SIMD build where the engine has it, as the
// test runner enables it on Node 20): the same integers, so the same bits
const base2 = await createCpuDevice({ threads: 2, parallelMinWork: 0, numerics: 'exact', relaxedSimd: false });
const baseFast2 = await createCpuDevice({ threads: 2, parallelMinWork: 0, numerics: 'fast', relaxedSimd: false });
after(async () => { await cpu1.close(); await cpu2.close(); await fast2.close(); await base2.close(); await baseFast2.close(); });
test('kernel builds: the relaxed-SIMD build runs when the engine has it', () => {
  const relaxed = relaxedSimdAvailable();
  assert.equal(cpu2.runtime.simd, relaxed ? 'relaxed' : 'simd128', 'a relaxed-capable engine failed the kernel self-tests (integer dot, fused relaxed_madd)');
  assert.equal(base2.runtime.simd, 'simd128');
  console.log(`# kernels: ${cpu2.runtime.simd} (relaxed SIMD ${relaxed ? '' : 'not '}available)`);
});

// The cases: the device conformance suite's full set (test/backends/conformance/suite.ts: every op,
// every weight type, the awkward shapes above), run here with the cpu device's stricter rules.
const CASES = buildCases({ size: 'full' });

interface Row { op: string; variant: string; device: string; maxAbs: number; bitExact: boolean }
const table: Row[] = [];

/** Bounds: 0 = bit-identical, else max abs err <= bound * max(1, max |want|). */
async function compare(s: CaseSpec, exactBound: number, fastBound: number): Promise<void> {
  const c = s.make();
  const want = await runCase(ref, c);
  const devices: [string, Device, number][] = [['cpu 1 thread', cpu1, exactBound], ['cpu 2 threads', cpu2, exactBound], ['cpu simd128 2 threads', base2, exactBound],
    ['cpu fast 2 threads', fast2, fastBound], ['cpu fast simd128 2 threads', baseFast2, fastBound]];
  const variant = `[${s.types.join(', ')}] ${s.shape}`;
  for (const [name, d, bound] of devices) {
    const got = await runCase(d, c);
    assert.equal(got.length, want.length);
    let maxAbs = 0, scale = 0, bitExact = true;
    for (let i = 0; i < want.length; i++) {
      if (!Object.is(got[i], want[i])) bitExact = false;
      maxAbs = Math.max(maxAbs, Math.abs(got[i]! - want[i]!));
      scale = Math.max(scale, Math.abs(want[i]!));
    }
    table.push({ op: s.op, variant, device: name, maxAbs, bitExact });
    if (bound === 0) assert.ok(bitExact, `${s.op} ${variant} on ${name}: not bit-identical (max abs err ${maxAbs})`);
    else assert.ok(maxAbs <= bound * Math.max(1, scale), `${s.op} ${variant} on ${name}: max abs err ${maxAbs} > ${bound} x ${scale}`);
  }
}

test('mul_mat: every weight type x shapes x batch', async () => {
  const cases = CASES.filter((s) => s.op === 'mul_mat');
  assert.equal(new Set(cases.map((s) => s.types[0])).size, SUITE_WEIGHT_TYPES.length);
  for (const s of cases) {
    // types without a known llama.cpp order run their WASM kernels in the exact device too
    const wt = ggmlTypeByName(s.types[0]!)!.id;
    await compare(s, LLAMA_EXACT_MATMUL_TYPES.has(wt) ? 0 : 1e-4, 1e-4);
  }
});

test('mul_mat_id: every weight type x expert rows x shared/per-slot input x batch', async () => {
  const cases = CASES.filter((s) => s.op === 'mul_mat_id');
  assert.equal(new Set(cases.map((s) => s.types[0])).size, SUITE_WEIGHT_TYPES.length);
  for (const s of cases) {
    const wt = ggmlTypeByName(s.types[0]!)!.id;
    await compare(s, LLAMA_EXACT_MATMUL_TYPES.has(wt) ? 0 : 1e-4, 1e-4);
  }
});

// every other op runs the same kernels whatever the numerics mode: bit-identical on every build
for (const [title, ops] of [
  ['get_rows: every weight type', ['get_rows']],
  ['elementwise ops: add, mul (full and broadcast), scale, swiglu, geglu, softcap, view_cols', ['add', 'mul', 'scale', 'swiglu', 'geglu', 'softcap', 'view_cols']],
  ['rms_norm: whole rows and per-head chunks', ['rms_norm']],
  ['rope: normal and NeoX, partial dims, freq factors, large positions', ['rope']],
  ['kv_store and attention: f16/f32 cache, prompt then decode steps, GQA, window, softcap', ['kv_store', 'attention']],
  ['recurrent layers: view_blocks, silu, sigmoid, softplus, l2_norm, ssm_conv and gated_delta_net over steps', ['view_blocks', 'scale_rows', 'silu', 'sigmoid', 'softplus', 'l2_norm', 'ssm_conv', 'gated_delta_net']],
  ['MoE routing: soft_max, top_k, moe_weights, moe_sum', ['soft_max', 'top_k', 'moe_weights', 'moe_sum']],
] as const) {
  test(title, async () => {
    const cases = CASES.filter((s) => (ops as readonly string[]).includes(s.op));
    assert.ok(cases.length > 0);
    for (const s of cases) await compare(s, 0, 0);
  });
}

test('max-abs-error table', () => {
  const lines = ['op | variant | device | max abs err | bit-exact', '---|---|---|---|---'];
  for (const r of table) lines.push(`${r.op} | ${r.variant} | ${r.device} | ${r.maxAbs.toExponential(2)} | ${r.bitExact ? 'yes' : 'no'}`);
  console.log(lines.join('\n'));
  assert.ok(table.length > 0);
});
