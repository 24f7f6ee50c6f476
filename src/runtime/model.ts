// A loaded model: the parsed GGUF, its hyperparameters and architecture spec, and every weight
// placed on a device. Tensor bytes go from the file straight into the device buffer.

import type { Device, DeviceBuffer, Placement } from '../backends/backend.js';
import { GgufError } from '../gguf/errors.js';
import { metaString, readTensorData, type GgufFile } from '../gguf/reader.js';
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
  for (const t of file.tensors) {
    const off = offsets.get(t.name)!;
    const view = buf.hostView?.(off, t.nBytes);
    if (view) readTensorData(file, t, view); // straight from the file into device memory
    else buf.set(off, readTensorData(file, t));
    const placement = { buffer: buf, offset: off, nBytes: t.nBytes };
    placements.set(t.name, { device: opts.device, placement });
    // the device may repack the bytes into its own layout (a new type id for the graph)
    const dtype = opts.device.prepareWeight?.(placement, t.type, t.dims) ?? t.type;
    if (dtype !== t.type) weights.set(t.name, { dtype, dims: t.dims });
    done += t.nBytes;
    opts.onProgress?.(done, total);
  }
  return { file, hp, spec: spec!, weights, placements, weightBuffers: [buf], weightBytes: total };
}
