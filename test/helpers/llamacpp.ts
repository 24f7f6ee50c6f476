// llama.cpp itself, through node-llama-cpp's prebuilt CPU build from the optional peer setup (peers/,
// `npm run setup:peers`): greedy generation as llama.cpp runs it, for tests that compare against it.
import type { Token } from 'node-llama-cpp';
import { importPeer } from '../../bench/peers.js';

const nodeLlamaCpp = () => importPeer<typeof import('node-llama-cpp')>('node-llama-cpp');
async function getLlama() {
  const { getLlama: get, LlamaLogLevel } = await nodeLlamaCpp();
  return get({ gpu: false, build: 'never', skipDownload: true, logLevel: LlamaLogLevel.error });
}
/** llama.cpp's greedy tokens for `text` (BOS added, specials parsed) on the model at `path`. */
export async function llamaGreedy(path: string, text: string, n: number): Promise<{ ids: number[]; text: string }> {
  const llama = await getLlama();
  const model = await llama.loadModel({ modelPath: path });
  const ctx = await model.createContext({ contextSize: 256, threads: 1, flashAttention: false });
  try {
    const seq = ctx.getSequence();
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
  } finally {
    await ctx.dispose();
    await model.dispose();
    await llama.dispose();
  }
}

