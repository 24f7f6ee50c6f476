// A loaded model: the parsed GGUF, its hyperparameters and architecture spec, and every weight
// placed on a device. Tensor bytes go from the file straight into the device buffer.

import type { Device, DeviceBuffer, Placement } from '../backends/backend.js';
import { GgufError } from '../gguf/errors.js';
import { metaString, readTensorData, type GgufFile, type GgufTensorInfo } from '../gguf/reader.js';
import { readHParams, type HParams } from '../models/hparams.js';
import { archSpec, supportedArchitectures } from '../models/index.js';
import type { ArchSpec, WeightInfo } from '../models/transformer.js';
import { validateTensors } from '../models/validate.js';

export interface Model {
  file: GgufFile;
  hp: HParams;
  spec: ArchSpec;
  weights: Map<string, WeightInfo>;
  /** where each weight lives */
  placements: Map<string, { device: Device; placement: Placement }>;
  weightBuffers: DeviceBuffer[];
  /** bytes of weights loaded */
  weightBytes: number;
}

export interface LoadOptions {
  /** device that holds the weights (the first device by default) */
  device: Device;
  /** called with (bytes done, bytes total) while loading */
  onProgress?: (done: number, total: number) => void;
}

export function loadModel(file: GgufFile, opts: LoadOptions): Model {
  const l = startLoad(file, opts);
  try {
    for (const t of file.tensors) {
      const view = l.view(t);
      if (view) readTensorData(file, t, view); // straight from the file into device memory
      else l.buf.set(l.offsets.get(t.name)!, readTensorData(file, t));
      l.placed(t);
    }
  } catch (e) { l.buf.free(); throw e; }
  return l.model;
}

/**
 * loadModel for a streaming source (a URL, a Blob: `source.readAsync`): the tensors in file order, so one
 * response streams through, each straight into its device buffer as its chunks arrive.
 */
export async function loadModelStreaming(file: GgufFile, opts: LoadOptions): Promise<Model> {
  const src = file.source;
  if (!src.readAsync) return loadModel(file, opts);
  const l = startLoad(file, opts);
  try {
    for (const t of [...file.tensors].sort((a, b) => a.fileOffset - b.fileOffset)) {
      const view = l.view(t);
      if (view) await src.readAsync(t.fileOffset, t.nBytes, view, 0);
      else {
        const tmp = new Uint8Array(t.nBytes);
        await src.readAsync(t.fileOffset, t.nBytes, tmp, 0);
        l.buf.set(l.offsets.get(t.name)!, tmp);
      }
      l.placed(t);
    }
  } catch (e) { l.buf.free(); throw e; }
  return l.model;
}

/** Bytes of device memory the weights of `file` take on a buffer type with `alignment`. */
export function weightBytesFor(file: GgufFile, alignment: number): number {
  let total = 0;
  for (const t of file.tensors) total += Math.ceil(t.nBytes / alignment) * alignment;
  return total;
}

/** Checks and allocates; then each tensor's bytes go to view(t) (or buf.set) and placed(t) records it. */
function startLoad(file: GgufFile, opts: LoadOptions) {
  // the architecture first: another one's metadata follows other rules
  const arch = metaString(file, 'general.architecture');
  const spec = arch !== undefined ? archSpec(arch) : undefined;
  if (arch !== undefined && !spec) throw new GgufError('UNSUPPORTED_ARCH', `architecture "${arch}" is not supported (supported: ${supportedArchitectures.join(', ')})`, file.name, file.metaEntries.get('general.architecture')?.offset, { key: 'general.architecture', found: arch });
  const hp = readHParams(file);
  // every tensor against the hyperparameters, before anything is allocated
  validateTensors(file, hp);
  const weights = new Map<string, WeightInfo>();
  for (const t of file.tensors) weights.set(t.name, { dtype: t.type, dims: t.dims });
  const bt = opts.device.bufferType();
  const align = (n: number) => Math.ceil(n / bt.alignment) * bt.alignment;
  let total = 0;
  const offsets = new Map<string, number>();
  for (const t of file.tensors) { offsets.set(t.name, total); total += align(t.nBytes); }
  const buf = bt.allocate(total, 'weights');
  const placements = new Map<string, { device: Device; placement: Placement }>();
  let done = 0;
  const model: Model = { file, hp, spec: spec!, weights, placements, weightBuffers: [buf], weightBytes: total };
  return {
    buf, offsets, model,
    view: (t: GgufTensorInfo) => buf.hostView?.(offsets.get(t.name)!, t.nBytes),
    placed(t: GgufTensorInfo) {
      const placement = { buffer: buf, offset: offsets.get(t.name)!, nBytes: t.nBytes };
      placements.set(t.name, { device: opts.device, placement });
      // the device may repack the bytes into its own layout (a new type id for the graph)
      const dtype = opts.device.prepareWeight?.(placement, t.type, t.dims) ?? t.type;
      if (dtype !== t.type) weights.set(t.name, { dtype, dims: t.dims });
      done += t.nBytes;
      opts.onProgress?.(done, total);
    },
  };
}
