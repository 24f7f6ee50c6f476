// loadModel(): a GGUF model from a path, URL, bytes or Blob, its weights on a device, with the tokenizer
// and chat templates; contexts are created from it. The runtime objects stay reachable (model.runtime)
// for callers that drive the engine themselves.
import type { Device } from '../backends/backend.js';
import { runsEverything } from '../backends/describe.js';
import { DEFAULT_DEVICE, getDevice, type DeviceOptions } from '../backends/registry.js';
import type { GgufFile, GgufMetaValue } from '../gguf/reader.js';
import { Context } from '../runtime/context.js';
import { loadModel as loadRuntimeModel, loadModelStreaming, weightBytesFor, type Model as RuntimeModel } from '../runtime/model.js';
import { ChatFormatter, type ChatMessage, type RenderOptions } from '../tokenizer/chat-template.js';
import { tokenizerFromGguf, type Tokenizer } from '../tokenizer/index.js';
import { ModelContext, type ContextHost, type CreateContextOptions } from './context.js';
import { UsageError } from './errors.js';
import { isKvType, isQuantizedKv, KV_TYPES } from '../graph/kv-type.js';
import { completeSplit, openSource, parseAny, type ModelSource, type SourceProgress } from './source.js';

export interface LoadModelOptions extends Omit<DeviceOptions, 'threads' | 'numerics'> {
  /**
   * The compute device: a registered name ('cpu' by default, 'reference', 'sim-npu', a plug-in's) or a Device.
   * An accelerator that does not run every op (an NPU) runs what it claims, the default device the rest.
   */
  device?: string | Device;
  /** worker threads of the cpu device (default: the available cores) */
  threads?: number;
  /** the cpu device's matmul float order: 'fast' (default) or 'exact' (llama.cpp's, bit for bit) */
  numerics?: 'exact' | 'fast';
  /** bytes fetched ('fetch': URLs and Blobs) and weights placed on the device ('weights') */
  onProgress?: (p: SourceProgress) => void;
  /** cancels a download */
  signal?: AbortSignal;
  /**
   * Browser: an http(s) URL is downloaded into the Origin Private File System first and loaded from there;
   * the next load reads it from OPFS, and an interrupted download resumes where it stopped.
   */
  cacheInOpfs?: boolean;
  /** cacheInOpfs: bytes per chunk file, the unit an interrupted download keeps (default 16 MiB) */
  opfsChunkBytes?: number;
}

export interface TokenizeOptions {
  /** add BOS/EOS as the model's metadata says (default true) */
  addSpecial?: boolean;
  /** recognise special-token text such as "<|im_start|>" (default false) */
  parseSpecial?: boolean;
}

export interface DetokenizeOptions {
  /** render special tokens' text (default false) */
  special?: boolean;
  /** drop a leading BOS and a trailing EOS (default false) */
  removeSpecial?: boolean;
}

export interface ChatTemplateOptions extends RenderOptions {
  /** a built-in format by name (chatml, llama3, gemma, ...) or Jinja source; default: the model's own */
  template?: string;
}

/** The runtime pieces under the API (the escape hatch for callers that drive the engine themselves). */
export interface ModelRuntime {
  model: RuntimeModel;
  tokenizer: Tokenizer;
  file: GgufFile;
  /** holds the weights */
  device: Device;
  /** a context's default device list, priority order, the weights' device last */
  devices: Device[];
}

export class Model {
  /** every metadata key of the file, values as the GGUF reader gives them (bigint beyond 2^53, typed arrays) */
  readonly metadata: Readonly<Record<string, GgufMetaValue>>;
  readonly runtime: ModelRuntime;
  private readonly contexts = new Set<ModelContext>();
  private readonly formatters = new Map<string, ChatFormatter>();
  private closed = false;
  private closedPromise: Promise<void> | undefined;

  constructor(runtime: ModelRuntime) {
    this.runtime = runtime;
    // fromEntries defines own properties: a key named '__proto__' is a key, not the prototype
    this.metadata = Object.freeze(Object.fromEntries(runtime.file.metadata));
  }

  /** general.architecture (llama, qwen2, ...) */
  get architecture(): string { return String(this.metadata['general.architecture'] ?? 'llama'); }
  /** general.name, when the file has one */
  get name(): string | undefined { const n = this.metadata['general.name']; return typeof n === 'string' ? n : undefined; }
  get vocabSize(): number { return this.runtime.model.hp.nVocab; }
  /** the training context length */
  get contextLength(): number { return this.runtime.model.hp.nCtxTrain; }
  get bos(): number | null { return this.runtime.tokenizer.bos; }
  get eos(): number | null { return this.runtime.tokenizer.eos; }
  /** the file's own chat template (tokenizer.chat_template), if any */
  get chatTemplate(): string | undefined { return this.runtime.tokenizer.chatTemplate; }
  /** bytes of weights on the device */
  get weightBytes(): number { return this.runtime.model.weightBytes; }

  private live(): void {
    if (this.closed) throw new UsageError('CLOSED', 'the model is closed');
  }

  tokenize(text: string, o: TokenizeOptions = {}): number[] {
    this.live();
    if (typeof text !== 'string') throw new UsageError('USAGE', `tokenize needs a string, got ${typeof text}`, 'text');
    return this.runtime.tokenizer.tokenize(text, { addSpecial: o.addSpecial ?? true, parseSpecial: o.parseSpecial ?? false });
  }

  detokenize(tokens: ArrayLike<number>, o: DetokenizeOptions = {}): string {
    this.live();
    const ids = Array.from(tokens);
    for (const t of ids) if (!Number.isInteger(t) || t < 0 || t >= this.vocabSize) throw new UsageError('USAGE', `token id ${t} is outside the vocabulary (0..${this.vocabSize - 1})`, 'tokens');
    return this.runtime.tokenizer.detokenize(ids, { special: o.special ?? false, removeSpecial: o.removeSpecial ?? false });
  }

  /** true for end-of-generation tokens (EOS, EOT, ...) */
  isEog(token: number): boolean { return this.runtime.tokenizer.isEog(token); }

  /** The chat format for `template` (a built-in name or Jinja source; default: the model's own, else ChatML). */
  chatFormatter(template?: string): ChatFormatter {
    const key = template ?? '\0model';
    let f = this.formatters.get(key);
    if (!f) { f = new ChatFormatter(this.runtime.tokenizer, template); this.formatters.set(key, f); }
    return f;
  }

  /** Renders a conversation with the chat template (ending with the assistant's turn opening by default). */
  applyChatTemplate(messages: ChatMessage[], o: ChatTemplateOptions = {}): string {
    this.live();
    const { template, ...render } = o;
    return this.chatFormatter(template).render(messages, render);
  }

  /** A context: a KV cache of `ctx` tokens (allocated now) and the compute buffers for it. */
  async createContext(o: CreateContextOptions = {}): Promise<ModelContext> {
    this.live();
    const { ctx, batch, kvType, flashAttn, ...advanced } = o;
    const nCtx = ctx ?? Math.min(4096, this.contextLength);
    if (!Number.isInteger(nCtx) || nCtx < 1) throw new UsageError('USAGE', `ctx must be a positive integer, got ${String(ctx)}`, 'ctx');
    if (kvType !== undefined && !isKvType(kvType)) throw new UsageError('USAGE', `kvType must be one of ${KV_TYPES.map((t) => `'${t}'`).join(', ')}, got ${String(kvType)}`, 'kvType');
    if (flashAttn !== undefined && flashAttn !== 'on' && flashAttn !== 'off' && flashAttn !== 'auto') throw new UsageError('USAGE', `flashAttn must be 'on', 'off' or 'auto', got ${String(flashAttn)}`, 'flashAttn');
    if (kvType !== undefined && isQuantizedKv(kvType) && flashAttn === 'off') {
      throw new UsageError('USAGE', `kvType '${kvType}' needs flash attention (llama.cpp refuses a quantized V cache without it): use flashAttn 'on' or 'auto'`, 'flashAttn');
    }
    const nBatch = batch ?? 512;
    if (!Number.isInteger(nBatch) || nBatch < 1) throw new UsageError('USAGE', `batch must be a positive integer, got ${String(batch)}`, 'batch');
    const rt = await Context.create(this.runtime.model, { devices: this.runtime.devices, ...advanced, nCtx, kvType, nBatch, flashAttn: flashAttn ?? 'auto' });
    if (this.closed) { rt.close(); throw new UsageError('CLOSED', 'the model was closed while the context was created'); }
    const host: ContextHost = {
      tokenizer: this.runtime.tokenizer,
      nVocab: this.vocabSize,
      tokenize: (text, t) => this.tokenize(text, t),
      forget: (c) => { this.contexts.delete(c); },
    };
    const c = new ModelContext(host, rt);
    this.contexts.add(c);
    return c;
  }

  /**
   * Closes every context (stopping their generations), frees the weights and closes the file. Idempotent.
   * Devices are shared between models and stay up: closeDevices() stops their threads.
   */
  close(): Promise<void> {
    this.closedPromise ??= (async () => {
      this.closed = true;
      await Promise.all([...this.contexts].map((c) => c.close()));
      for (const b of this.runtime.model.weightBuffers) b.free();
      this.runtime.model.weightBuffers.length = 0;
      this.runtime.file.source.close?.();
    })();
    return this.closedPromise;
  }
}

const GIB = 1024 ** 3;
const sizeText = (n: number) => `${(n / GIB).toFixed(2)} GiB (${n.toLocaleString('en-US')} bytes)`;

/** Weights beyond the device's memory (the cpu device: wasm32's 4 GiB) fail before any tensor is read. */
function checkFits(file: GgufFile, device: Device): void {
  const need = weightBytesFor(file, device.bufferType().alignment);
  const { total } = device.memory();
  if (total > 0 && need > total) { // 0: a device that does not know its memory
    throw new UsageError('TOO_LARGE', `${file.name}: the model's weights are ${sizeText(need)} (the file ${sizeText(file.size)}), more than the ${device.name} device can hold: ${sizeText(total)}${device.kind === 'cpu' ? ' (a WebAssembly memory addresses at most 4 GiB: wasm32)' : ''}`, 'source');
  }
}

const isAccelerator = (d: Device): boolean => !!d.claimGroups || d.kind === 'npu';

/** Loads a model: `source` is a file path, a URL (file:, http(s):), an ArrayBuffer / typed array, or a Blob. */
export async function loadModel(source: ModelSource, o: LoadModelOptions = {}): Promise<Model> {
  if (o.threads !== undefined && !(Number.isInteger(o.threads) && o.threads >= 1)) throw new UsageError('USAGE', `threads must be a positive integer, got ${String(o.threads)}`, 'threads');
  if (o.numerics !== undefined && o.numerics !== 'exact' && o.numerics !== 'fast') throw new UsageError('USAGE', `numerics must be 'exact' or 'fast', got ${String(o.numerics)}`, 'numerics');
  const { device: dev, onProgress, signal, cacheInOpfs, opfsChunkBytes, ...deviceOptions } = o;
  // the device first: a bad name fails before any reading
  const get = (name: string) => Promise.resolve().then(() => getDevice(name, deviceOptions)).catch((e: { code?: string; message?: string }) => {
    throw e?.code === 'USAGE' ? new UsageError('USAGE', e.message ?? String(e), 'device') : e;
  });
  const main = typeof dev === 'object' && dev !== null ? dev : await get(dev ?? DEFAULT_DEVICE);
  // an accelerator, or a device that runs only part of the op set, runs ahead of the default device
  const host = isAccelerator(main) || !runsEverything(main) ? await get(DEFAULT_DEVICE) : main;
  const devices = main === host ? [host] : [main, host];
  const src = await openSource(source, { onProgress, signal, cacheInOpfs, opfsChunkBytes });
  let file: GgufFile | undefined;
  let model: RuntimeModel | undefined;
  try {
    // a split model named by its first shard gets its other shards merged in
    file = await completeSplit(await parseAny(src), source, { onProgress, signal });
    checkFits(file, host);
    const progress = onProgress && ((loaded: number, total: number) => onProgress({ phase: 'weights', loaded, total }));
    // a URL or Blob streams its tensors into the device buffers; a path or bytes are read in place
    model = file.source.readAsync ? await loadModelStreaming(file, { device: host, onProgress: progress }) : loadRuntimeModel(file, { device: host, onProgress: progress });
    const tokenizer = tokenizerFromGguf(file);
    return new Model({ model, tokenizer, file, device: host, devices });
  } catch (e) {
    for (const b of model?.weightBuffers ?? []) b.free();
    (file?.source ?? src).close?.();
    throw e;
  }
}
