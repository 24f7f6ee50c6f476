// `gguf-edge/runtime`: the engine's low-level pieces under the library API, for callers that drive the
// runtime themselves (our server, tools, tests): the GGUF reader, the runtime model and Context (KV cache,
// decode()), the sampler chain, the tokenizer and chat templates, the generation loop and the devices.
// Like the main entry, browser-safe (no static Node import); openGguf (a file path) is Node-only and async here.
export { parseGguf, parseGgufSource, readTensorData, metaString, metaNumber, metaBool, metaArray, metaArrayLength, type GgufFile, type GgufMetaValue, type GgufTensorInfo } from '../gguf/reader.js';
export { memorySource, type ByteSource } from '../gguf/source.js';
export { ggmlTypeName } from '../gguf/ggml-types.js';
export { loadModel as loadRuntimeModel, type Model as RuntimeModel, type LoadOptions as RuntimeLoadOptions } from '../runtime/model.js';
export { Context, ContextError, type ContextOptions } from '../runtime/context.js';
export { createSampler, defaultSamplerParams, topProbs, argmax, type Sampler, type SamplerParams } from '../runtime/sampler.js';
export { tokenizerFromGguf, StreamingDetokenizer, ChatFormatter, renderJinja, renderBuiltin, detectBuiltin, builtinByName, BUILTIN_TEMPLATES, type Tokenizer, type TokenizeOptions as RuntimeTokenizeOptions, type ChatMessage, type RenderOptions, type BuiltinTemplate } from '../tokenizer/index.js';
export { generationLoop, yieldToEventLoop, type Engine, type LoopOptions } from './generation.js';
export { RuntimeEngine, type ContextHost } from './context.js';
export { StopMatcher } from './stop.js';
export { buildSampler, samplerParams, samplingOptions } from './sampling.js';
export { openSource } from './source.js';
export { getDevice, deviceNames, registerDevice, closeDevices, defaultDeviceName, DEFAULT_DEVICE, type DeviceOptions, type DeviceFactory } from '../backends/registry.js';
export type { Device, DeviceBuffer, Placement } from '../backends/backend.js';
export { Profiler } from '../sched/profile.js';

/** Node only: opens a GGUF file from a path (read in place, nothing loaded up front). */
export async function openGguf(path: string): Promise<import('../gguf/reader.js').GgufFile> {
  return (await import('../gguf/open.js')).openGguf(path);
}
