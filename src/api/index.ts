// gguf-edge as a library: `import { loadModel } from 'gguf-edge'`. The same API in Node and the browser;
// nothing here imports a Node module statically (Node file I/O, worker threads and V8 flags load on demand).
// docs/api.md documents it.
export { loadModel, Model, type LoadModelOptions, type TokenizeOptions, type DetokenizeOptions, type ChatTemplateOptions, type ModelRuntime } from './model.js';
export { ModelContext, Generation, type CreateContextOptions, type GenerateOptions } from './context.js';
export { ChatSession, type ChatSessionOptions, type SendOptions, type ChatTarget } from './chat-session.js';
export { EngineContext } from './engine-context.js';
export type { Engine, TokenEvent, GenerateResult, FinishReason, Usage, Timings } from './generation.js';
export type { SamplingOptions, Penalties } from './sampling.js';
export { jsonSchemaToGrammar, parseGbnf } from '../grammar/index.js';
export type { ModelSource, SourceProgress } from './source.js';
export { opfsStatus as opfsCacheStatus, opfsRemove as opfsCacheRemove } from './opfs.js';
export type { ChatMessage, RenderOptions } from '../tokenizer/chat-template.js';
export { GgufError, TokenizerError, ChatTemplateError, ContextError, DeviceError, GrammarError, UsageError, type UsageErrorCode, type GgufErrorCode, type DeviceErrorCode, type GrammarErrorCode } from './errors.js';
export { deviceNames, closeDevices, registerDevice, getDevice, type DeviceOptions } from '../backends/registry.js';
export type { Device } from '../backends/backend.js';

/**
 * Node 20 only: turns on relaxed SIMD (V8 flags) so the cpu device runs its faster kernel build. Call it
 * before the first loadModel (kernels compile when the cpu device starts). Elsewhere, and on engines that
 * have relaxed SIMD already, it does nothing. Without it the SIMD128 build runs (same results, slower).
 */
export async function enableRelaxedSimd(): Promise<void> {
  const p = (globalThis as { process?: { versions?: { node?: string } } }).process;
  if (p?.versions?.node) (await import('../backends/cpu/node-flags.js')).enableRelaxedSimd();
}
