// The webgpu tests' device: Dawn (npm `webgpu`) over Mesa's lavapipe (backend=vulkan) or llvmpipe GLES
// (backend=opengles). Where no adapter exists at all the tests skip with the reason; in CI (.ci/run installs
// the Mesa drivers) a missing adapter fails instead, as the peer tests do.
import type { TestContext } from 'node:test';
import { DeviceError } from '../../../src/backends/backend.js';
import { createWebGpuDevice, type WebGpuDevice } from '../../../src/backends/webgpu/index.js';
import { inCi } from '../../helpers/peers.js';

const made = new Map<string, Promise<WebGpuDevice | string>>();

/** The webgpu device on `backend` (one per backend and process), or the reason there is none. */
export function gpuDevice(backend: 'vulkan' | 'opengles'): Promise<WebGpuDevice | string> {
  let p = made.get(backend);
  if (!p) {
    p = createWebGpuDevice({ backend }).catch((e: unknown) => {
      if (e instanceof DeviceError && e.code === 'UNSUPPORTED') return e.message;
      throw e;
    });
    made.set(backend, p);
  }
  return p;
}

/** The device, or (no adapter) fail in CI / skip `t` with the reason elsewhere. */
export async function needGpu(t: TestContext, backend: 'vulkan' | 'opengles' = 'vulkan'): Promise<WebGpuDevice | null> {
  const d = await gpuDevice(backend);
  if (typeof d !== 'string') return d;
  const msg = `no WebGPU adapter (backend=${backend}): ${d}`;
  if (inCi()) throw new Error(`CI installs Mesa's lavapipe/llvmpipe (.ci/run): ${msg}`);
  t.skip(msg);
  return null;
}

export async function closeGpus(): Promise<void> {
  for (const p of made.values()) { const d = await p; if (typeof d !== 'string') await d.close(); }
  made.clear();
}
