// The parity rule of the foundation issue, shared by every backend's parity tests:
// fed the reference prompt, our greedy tokens must equal llama.cpp's at every step up to the
// first step where llama.cpp's top-1 probability beats its top-2 by less than 0.01 (comparison
// stops there), and the reference's top-10 probabilities must agree within `tol`.

import { readFileSync } from 'node:fs';
import type { Device } from '../../src/backends/backend.js';
import { openGguf } from '../../src/gguf/open.js';
import { loadModel } from '../../src/runtime/model.js';
import { Context, type ContextOptions } from '../../src/runtime/context.js';
import { argmax } from '../../src/runtime/sampler.js';
import { fixture } from './fixtures.js';

export interface RefStep { token: number; top: [number, number][] }
export interface RefSequence { prompt: number[]; continuation: number[]; steps: RefStep[]; prompt_top: [number, number][][] }
export interface RefFile { sequences: RefSequence[] }

export const MARGIN = 0.01;

export function softmaxAt(logits: Float32Array, ids: number[]): number[] {
  let max = -Infinity;
  for (let i = 0; i < logits.length; i++) if (logits[i]! > max) max = logits[i]!;
  let sum = 0;
  for (let i = 0; i < logits.length; i++) sum += Math.exp(logits[i]! - max);
  return ids.map((id) => Math.exp(logits[id]! - max) / sum);
}

export interface ParityReport {
  name: string;
  compared: number;
  maxProbErr: number;
  failures: string[];
}

/**
 * `ctxOpts`: more context options (e.g. another device for prefill: the rule and tolerances stay the same).
 * The model is loaded on `device`.
 */
export async function runParity(name: string, device: Device, tol: number, margin = MARGIN, kvType: 'f16' | 'f32' = 'f16', ctxOpts: Partial<ContextOptions> = {}): Promise<ParityReport> {
  const ref: RefFile = JSON.parse(readFileSync(fixture(`parity/${name}.ref.json`), 'utf8'));
  const file = openGguf(fixture(`parity/${name}.gguf`));
  const model = loadModel(file, { device });
  const report: ParityReport = { name, compared: 0, maxProbErr: 0, failures: [] };
  try {
    for (const [si, seq] of ref.sequences.entries()) {
      const ctx = new Context(model, { nCtx: 256, kvType, ...ctxOpts });
      await ctx.ready(); // load-time compiles of accelerators
      let logits = await ctx.decode(seq.prompt);
      for (let k = 0; k < seq.steps.length; k++) {
        const st = seq.steps[k]!;
        if (st.top[0]![1] - st.top[1]![1] < margin) break;
        const ours = argmax(logits);
        if (ours !== st.token) report.failures.push(`seq ${si} step ${k}: token ${ours}, llama.cpp ${st.token}`);
        const ps = softmaxAt(logits, st.top.map((t) => t[0]));
        st.top.forEach(([id, p], i) => {
          const err = Math.abs(ps[i]! - p);
          report.maxProbErr = Math.max(report.maxProbErr, err);
          if (err > tol) report.failures.push(`seq ${si} step ${k}: p(${id}) ${ps[i]!.toFixed(5)} vs ${p.toFixed(5)}`);
        });
        report.compared++;
        if (report.failures.length) break;
        logits = await ctx.decode([ours]);
      }
      ctx.close();
    }
  } finally {
    file.source.close?.();
  }
  return report;
}

export const PARITY_ARCHS = ['llama', 'qwen2', 'qwen3', 'gemma2', 'gemma3', 'phi3'];
export const PARITY_TYPES = ['f32', 'f16', 'q8_0', 'q4_0', 'q4_k', 'q6_k', 'q4_k_m'];
export const tolerance = (type: string) => (type === 'f32' || type === 'f16' ? 0.002 : 0.02);
