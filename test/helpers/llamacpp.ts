// llama.cpp itself, through node-llama-cpp's prebuilt CPU build from the optional peer setup (peers/,
// `npm run setup:peers`): greedy generation as llama.cpp runs it, for tests that compare against it.
import { readFileSync } from 'node:fs';
import type { LlamaContextSequence, LlamaModel, Token } from 'node-llama-cpp';
import { importPeer } from '../../bench/peers.js';

/**
 * True where llama.cpp's CPU build runs quantized matmuls on AMX tiles (Linux x86 with amx_int8: its
 * sapphirerapids variant adds the AMX buffer type for Q4_0/Q4_1/Q8_0/K-quants), whose float order is not the
 * AVX one the fixtures' references were made with and the cpu device's exact numerics reproduce.
 */
export function llamaCppUsesAmx(): boolean {
  try { return /\bamx_int8\b/.test(readFileSync('/proc/cpuinfo', 'utf8')); } catch { return false; }
}
const nodeLlamaCpp = () => importPeer<typeof import('node-llama-cpp')>('node-llama-cpp');
async function getLlama() {
  const { getLlama: get, LlamaLogLevel } = await nodeLlamaCpp();
  return get({ gpu: false, build: 'never', skipDownload: true, logLevel: LlamaLogLevel.error });
}
/**
 * Runs `fn` on one sequence of a fresh 1-thread, non-flash llama.cpp context over the model at `path`: 256 cells
 * unless `opts` says otherwise.
 */
async function withSequence<T>(path: string, fn: (seq: LlamaContextSequence, model: LlamaModel) => Promise<T>, opts: { contextSize?: number; batchSize?: number; swaFullCache?: boolean } = {}): Promise<T> {
  const llama = await getLlama();
  const model = await llama.loadModel({ modelPath: path });
  const ctx = await model.createContext({ contextSize: 256, threads: 1, flashAttention: false, ...opts });
  try {
    return await fn(ctx.getSequence(), model);
  } finally {
    await ctx.dispose();
    await model.dispose();
    await llama.dispose();
  }
}
/** llama.cpp's greedy tokens for `text` (BOS added, specials parsed) on the model at `path`. */
export async function llamaGreedy(path: string, text: string, n: number): Promise<{ ids: number[]; text: string }> {
  return withSequence(path, async (seq, model) => {
    // BOS as llama.cpp adds it for these models (add_bos), then the text with specials parsed
    const prompt = [model.tokens.bos!, ...model.tokenize(text, true)];
    const ids: number[] = [];
    let res = await seq.controlledEvaluate([...prompt.slice(0, -1), [prompt[prompt.length - 1]!, { generateNext: { token: true, options: { temperature: 0 } } }]]);
    for (let i = 0; i < n; i++) {
      const t = res[res.length - 1]!.next!.token! as Token;
      if (model.isEogToken(t)) break;
      ids.push(t as unknown as number);
      if (i === n - 1) break;
      res = await seq.controlledEvaluate([[t, { generateNext: { token: true, options: { temperature: 0 } } }]]);
    }
    return { ids, text: model.detokenize(ids as unknown as Token[]) };
  });
}


/**
 * llama.cpp's context shift: `tokens[0, fill)` evaluated, then positions [keep, keep + discard) erased with
 * node-llama-cpp's eraseContextTokenRanges (llama_memory_seq_rm, then seq_add of -discard on the later
 * cells: the K-shift runs at the next decode), then tokens[fill, fill + steps) one at a time. Returns each
 * step's next-token distribution, the top `top` tokens with their probabilities (softmax of the raw logits),
 * highest first.
 */
export async function llamaShifted(path: string, tokens: number[], fill: number, keep: number, discard: number, steps: number, top = 10): Promise<[number, number][][]> {
  return withSequence(path, async (seq, model) => {
    const t = (x: number) => x as unknown as Token;
    await seq.controlledEvaluate(tokens.slice(0, fill).map(t));
    await seq.eraseContextTokenRanges([{ start: keep, end: keep + discard }]);
    const out: [number, number][][] = [];
    for (let k = 0; k < steps; k++) {
      const res = await seq.controlledEvaluate([[t(tokens[fill + k]!), { generateNext: { probabilities: true, options: { temperature: 0 } } }]]);
      const probs = res[res.length - 1]!.next!.probabilities!;
      out.push([...probs.entries()].slice(0, top).map(([id, p]) => [id as unknown as number, p]));
    }
    return out;
  });
}

/**
 * llama.cpp's greedy tokens with a context shift, the way `run --keep` shifts: `prompt` (ids, BOS included)
 * evaluated, then each step's argmax token; when the cache holds nCtx tokens before a token is evaluated, the
 * cells [keep, keep + discard) are erased (discard = half of the tokens past keep, at least 1) and the later
 * ones shifted down (eraseContextTokenRanges: seq_rm + seq_add, llama.cpp's K-shift).
 */
export async function llamaGreedyShifted(path: string, prompt: number[], nCtx: number, keep: number, n: number): Promise<number[]> {
  return withSequence(path, async (seq, model) => {
    const t = (x: number) => x as unknown as Token;
    const next = { generateNext: { token: true, options: { temperature: 0 } } };
    let res = await seq.controlledEvaluate([...prompt.slice(0, -1).map(t), [t(prompt[prompt.length - 1]!), next]]);
    let cached = prompt.length;
    const ids: number[] = [];
    for (let i = 0; i < n; i++) {
      const id = res[res.length - 1]!.next!.token! as unknown as number;
      ids.push(id);
      if (i === n - 1) break;
      if (cached >= nCtx) {
        const k = Math.min(keep, cached - 1), discard = Math.max(1, Math.floor((cached - k) / 2));
        await seq.eraseContextTokenRanges([{ start: k, end: k + discard }]);
        cached -= discard;
      }
      res = await seq.controlledEvaluate([[t(id), next]]);
      cached++;
    }
    return ids;
  });
}

/**
 * llama.cpp's next-token distributions along `tokens` (BOS included) in a context of `contextSize` cells with
 * `batchSize`-token batches (n_batch = n_ubatch) and its sliding-window ring (swaFullCache false: an SWA cache of
 * GGML_PAD(min(contextSize, n_swa + batchSize), 256) cells): tokens[0, prompt) in one evaluation, then one token at
 * a time; the top `top` (id, probability) after each of tokens[prompt - 1 ..] but the last.
 */
export async function llamaRingProbs(path: string, tokens: number[], prompt: number, o: { contextSize: number; batchSize: number }, top = 10): Promise<[number, number][][]> {
  return withSequence(path, async (seq) => {
    const t = (x: number) => x as unknown as Token;
    const next = { generateNext: { probabilities: true, options: { temperature: 0 } } };
    const out: [number, number][][] = [];
    let res = await seq.controlledEvaluate([...tokens.slice(0, prompt - 1).map(t), [t(tokens[prompt - 1]!), next]]);
    for (let k = prompt; ; k++) {
      const probs = res[res.length - 1]!.next!.probabilities!;
      out.push([...probs.entries()].slice(0, top).map(([id, p]) => [id as unknown as number, p]));
      if (k >= tokens.length - 1) break;
      res = await seq.controlledEvaluate([[t(tokens[k]!), next]]);
    }
    return out;
  }, { ...o, swaFullCache: false });
}
