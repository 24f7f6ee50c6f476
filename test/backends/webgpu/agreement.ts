// Forced decoding against the cpu device (after webgpu-bench's consistency check): the cpu device decodes
// greedily; the webgpu device is fed the cpu's tokens, so a near tie that flips one argmax never derails
// the rest. Per step: top-1 agreement, and the webgpu probabilities of the cpu's top-10 tokens.
import type { Device } from '../../../src/backends/backend.js';
import { openGguf } from '../../../src/gguf/open.js';
import { Context, type ContextOptions } from '../../../src/runtime/context.js';
import { loadModel } from '../../../src/runtime/model.js';
import { fixture } from '../../helpers/fixtures.js';
import { argmax, readRef, softmaxAt } from '../../helpers/parity.js';

export interface ForcedReport {
  name: string;
  steps: number;
  top1Agree: number;
  /** max over steps of |p_webgpu - p_cpu| over the cpu's top-10 tokens */
  maxTop10Err: number;
  worst: string;
  /** device of each split of the one-token plan */
  decodeSplits: string[];
}

function top10(logits: Float32Array): number[] {
  const ids = Array.from(logits.keys());
  ids.sort((a, b) => logits[b]! - logits[a]! || a - b);
  return ids.slice(0, 10);
}

/** `steps` forced steps per prompt of the fixture's first `seqs` sequences (its recorded prompts). */
export async function forcedAgreement(name: string, cpu: Device, gpuOpts: Partial<ContextOptions>, seqs: number, steps: number): Promise<ForcedReport> {
  const ref = readRef(name);
  const file = openGguf(fixture(`parity/${name}.gguf`));
  const model = loadModel(file, { device: cpu });
  const r: ForcedReport = { name, steps: 0, top1Agree: 0, maxTop10Err: 0, worst: '', decodeSplits: [] };
  let same = 0;
  try {
    for (const [si, seq] of ref.sequences.slice(0, seqs).entries()) {
      const c = await Context.create(model, { nCtx: 256, devices: [cpu] });
      const g = await Context.create(model, { nCtx: 256, ...gpuOpts });
      if (si === 0) r.decodeSplits = g.describePlan(1).map((s) => s.device);
      try {
        let lc = await c.decode(seq.prompt), lg = await g.decode(seq.prompt);
        for (let k = 0; k < steps; k++) {
          const want = argmax(lc);
          if (argmax(lg) === want) same++;
          const ids = top10(lc);
          const pc = softmaxAt(lc, ids), pg = softmaxAt(lg, ids);
          ids.forEach((id, i) => {
            const e = Math.abs(pg[i]! - pc[i]!);
            if (e > r.maxTop10Err) { r.maxTop10Err = e; r.worst = `seq ${si} step ${k}: p(${id}) ${pg[i]!.toFixed(5)} vs cpu ${pc[i]!.toFixed(5)}`; }
          });
          r.steps++;
          if (k + 1 < steps) { lc = await c.decode([want]); lg = await g.decode([want]); }
        }
      } finally { c.close(); g.close(); }
    }
  } finally { file.source.close?.(); }
  r.top1Agree = r.steps ? same / r.steps : 0;
  return r;
}
