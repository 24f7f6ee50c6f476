// `--phase-policy auto`: each phase runs on the device predicted fastest for it. Accelerators answer
// from their cost model (Device.estimate); the host (cpu) is measured: one timed prefill chunk and one
// timed decode step on a throw-away context at load.

import type { Device, Phase } from '../backends/backend.js';
import { buildTransformer } from '../models/transformer.js';
import { Context } from '../runtime/context.js';
import type { Model } from '../runtime/model.js';

export interface PhasePick { device: Device; seconds: number; candidates: { device: string; seconds: number; how: 'cost model' | 'measured' }[] }

export async function pickPhaseDevices(model: Model, devices: Device[], host: Device, nBatch: number): Promise<Record<Phase, PhasePick>> {
  const accels = devices.filter((d) => d !== host && d.estimate);
  const chunk = Math.max(2, Math.min(nBatch, Math.max(...accels.map((d) => Math.max(...(d.staticShapes ?? [nBatch]))), 2)));
  const graph = (n: number) => buildTransformer(model.spec, model.hp, model.weights, { nTokens: n, nOutputs: 1, nCtx: chunk + 2, kvType: 'f16' });
  // the host, measured (second run of each shape: the first binds kernels)
  const ctx = new Context(model, { nCtx: chunk + 2, nBatch: chunk, devices: [host] });
  const toks = Array.from({ length: chunk }, (_, i) => (i * 7919) % model.hp.nVocab);
  let prefill = Infinity, decode = Infinity;
  for (let r = 0; r < 2; r++) {
    ctx.clear();
    const t0 = performance.now();
    await ctx.decode(toks);
    const t1 = performance.now();
    await ctx.decode([1]);
    const t2 = performance.now();
    prefill = Math.min(prefill, (t1 - t0) / 1000);
    decode = Math.min(decode, (t2 - t1) / 1000);
  }
  ctx.close();
  const out = {} as Record<Phase, PhasePick>;
  for (const [phase, g, hostS] of [['prefill', graph(chunk), prefill], ['decode', graph(1), decode]] as const) {
    const cands = [{ device: host, seconds: hostS, how: 'measured' as const }];
    for (const d of accels) cands.push({ device: d, seconds: d.estimate!(phase, g), how: 'cost model' as never });
    const best = cands.reduce((a, b) => (b.seconds < a.seconds ? b : a));
    out[phase] = { device: best.device, seconds: best.seconds, candidates: cands.map((c) => ({ device: c.device.name, seconds: c.seconds, how: c.how })) };
  }
  return out;
}
