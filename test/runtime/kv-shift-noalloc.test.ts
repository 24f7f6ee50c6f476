// Context shift in place allocates nothing (src/runtime/kv-shift.ts). A file of its own: run after the other
// shift tests (other models, other cache types) the same loop shows ~40 bytes per step of JIT residue (the
// hot functions grown polymorphic), which a process of its own does not.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createCpuDevice } from '../../src/backends/cpu/device.js';
import { openGguf } from '../../src/gguf/open.js';
import { loadModel } from '../../src/runtime/model.js';
import { Context } from '../../src/runtime/context.js';
import { fixture } from '../helpers/fixtures.js';
import { readRef } from '../helpers/parity.js';
import { probeAllocation } from '../helpers/alloc-probe.js';

const cpu = await createCpuDevice({ threads: 2 });
after(() => cpu.close());
const KEEP = 4, FILL = 40;

test('shiftSeq allocates nothing: 1,000 steps of a shift by one and a decode (llama-f32, f16 cache)', async () => {
  const name = 'llama-f32', s = readRef(name).sequences[0]!, toks = [...s.prompt, ...s.continuation];
  const file = openGguf(fixture(`parity/${name}.gguf`));
  try {
    const model = loadModel(file, { device: cpu });
    const ctx = new Context(model, { nCtx: 64 });
    await ctx.decode(toks.slice(0, FILL));
    const one = [toks[FILL]!];
    const step = () => { ctx.shiftSeq(0, KEEP, 1); void ctx.decode(one); };
    for (let i = 0; i < 200; i++) step();
    const { grown, scavenges } = await probeAllocation(step, 10);
    console.log(`# shift + decode: new space +${grown} bytes over 1,000 steps, ${scavenges} scavenges`);
    assert.equal(scavenges, 0);
    assert.ok(grown < 10240, `the new space grew by ${grown} bytes`);
    assert.equal(ctx.nPast, FILL);
    ctx.close();
  } finally {
    file.source.close?.();
  }
});
