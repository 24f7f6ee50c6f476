// The part of node-llama-cpp 3.21.1's API this repository uses, so it type-checks without the optional peer
// setup installed (bench/peers.ts loads the real module from peers/node_modules at run time).
declare module 'node-llama-cpp' {
  export type Token = number & { readonly __token: unique symbol };
  export enum LlamaLogLevel { disabled = 'disabled', fatal = 'fatal', error = 'error', warn = 'warn', info = 'info', log = 'log', debug = 'debug' }
  export interface GenerateNext { generateNext: { token?: boolean; probabilities?: boolean; options?: { temperature?: number } } }
  export interface ControlledEvaluateResult { next?: { token?: Token | null; probabilities?: Map<Token, number> } }
  export interface LlamaContextSequence {
    clearHistory(): Promise<void>;
    controlledEvaluate(input: (Token | [Token, GenerateNext])[]): Promise<(ControlledEvaluateResult | undefined)[]>;
    /** llama_memory_seq_rm of each [start, end), then seq_add of the later cells (the K-shift) */
    eraseContextTokenRanges(ranges: { start: number; end: number }[]): Promise<void>;
  }
  export interface LlamaContext {
    getSequence(): LlamaContextSequence;
    dispose(): Promise<void>;
  }
  export interface LlamaModel {
    readonly tokens: { readonly bos: Token | null; readonly eos: Token | null };
    createContext(o: { contextSize?: number; batchSize?: number; threads?: number; flashAttention?: boolean; sequences?: number; experimentalKvCacheKeyType?: string; experimentalKvCacheValueType?: string }): Promise<LlamaContext>;
    tokenize(text: string, specialTokens?: boolean): Token[];
    detokenize(tokens: readonly Token[], specialTokens?: boolean): string;
    isEogToken(token: Token): boolean;
    dispose(): Promise<void>;
  }
  export interface Llama {
    readonly gpu: string | false;
    readonly llamaCppRelease: { readonly repo: string; readonly release: string };
    loadModel(o: { modelPath: string }): Promise<LlamaModel>;
    dispose(): Promise<void>;
  }
  export function getLlama(o?: { gpu?: false | string; build?: 'never' | 'auto' | 'forceRebuild'; skipDownload?: boolean; maxThreads?: number; logLevel?: LlamaLogLevel }): Promise<Llama>;
}
