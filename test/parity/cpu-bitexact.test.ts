// The cpu device against the reference backend, bit for bit: every parity fixture's first prompt
// as one all-logits batch, then a few greedy one-token decode steps. The reference reproduces
// llama.cpp's logits exactly (NOTES.md), so equality here is the strongest parity oracle.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createCpuDevice } from '../../src/backends/cpu/device.js';
import { referenceDevice } from '../../src/backends/reference/device.js';
import type { Device } from '../../src/backends/backend.js';
import { openGguf } from '../../src/gguf/open.js';
import { loadModel } from '../../src/runtime/model.js';
import { Context } from '../../src/runtime/context.js';
import { argmax } from '../../src/runtime/sampler.js';
import { fixture } from '../helpers/fixtures.js';
import { PARITY_ARCHS, PARITY_TYPES, type RefFile } from '../helpers/parity.js';

const DECODE_STEPS = 4;
const cpu = await createCpuDevice({ threads: 2, numerics: 'exact' });
const ref = referenceDevice();
after(() => cpu.close());

/** logits of the prompt batch (every row) and of DECODE_STEPS greedy steps after it */
async function run(name: string, device: Device, prompt: number[]): Promise<Float32Array[]> {
  const file = openGguf(fixture(`parity/${name}.gguf`));
  try {
    const model = loadModel(file, { device });
    const ctx = new Context(model, { nCtx: 256 });
    const out = [await ctx.decode(prompt, true)];
    let logits = out[0]!.subarray(out[0]!.length - model.hp.nVocab);
    for (let s = 0; s < DECODE_STEPS; s++) {
      logits = await ctx.decode([argmax(logits)]);
      out.push(logits.slice());
    }
    ctx.close();
    return out;
  } finally {
    file.source.close?.();
  }
}

for (const arch of PARITY_ARCHS) {
  for (const type of PARITY_TYPES) {
    const name = `${arch}-${type}`;
    test(`cpu == reference bit for bit: ${name}`, async () => {
      const seq = (JSON.parse(readFileSync(fixture(`parity/${name}.ref.json`), 'utf8')) as RefFile).sequences[0]!;
      const a = await run(name, ref, seq.prompt);
      const b = await run(name, cpu, seq.prompt);
      for (let s = 0; s < a.length; s++) {
        const x = new Uint32Array(a[s]!.buffer, a[s]!.byteOffset, a[s]!.length);
        const y = new Uint32Array(b[s]!.buffer, b[s]!.byteOffset, b[s]!.length);
        let diff = 0, first = -1, maxErr = 0;
        for (let i = 0; i < x.length; i++) {
          if (x[i] !== y[i]) { diff++; if (first < 0) first = i; maxErr = Math.max(maxErr, Math.abs(a[s]![i]! - b[s]![i]!)); }
        }
        assert.equal(diff, 0, `${name} ${s === 0 ? 'prompt batch' : `decode step ${s}`}: ${diff} logits differ (first at ${first}, max abs err ${maxErr.toExponential(2)})`);
      }
    });
  }
}
