// The page harness of `npm run bench:web` (bench/web.ts drives it): the same page, files and thread count for
// both engines. `globalThis.bench.load(engine, url, threads)` then `bench.run(prompt, maxTokens)` returns the
// engine's own llama-server-style timings (prompt_n, prompt_per_second, predicted_n, predicted_per_second);
// each run starts from an empty KV cache (no prompt reuse), generates greedily and ignores end-of-generation.
const log = (s) => { document.getElementById('log').textContent += '\n' + s; };

let engine = null;

async function loadGgufEdge(url, threads, nCtx) {
  const { loadModel } = await import('/gguf-edge.js');
  const model = await loadModel(url, { threads });
  const ctx = await model.createContext({ ctx: nCtx, batch: 512 });
  return {
    info: () => ({ device: model.runtime.device.description, isolated: crossOriginIsolated }),
    async run(prompt, maxTokens) {
      ctx.clear();
      const r = await ctx.generate(prompt, { maxTokens, temperature: 0, ignoreEos: true }).result;
      return r.timings;
    },
    close: () => model.close(),
  };
}

async function loadWllama(url, threads, nCtx) {
  const { Wllama } = await import('/wllama/index.js');
  const w = new Wllama({ default: '/wllama/wasm/wllama.wasm' }, { suppressNativeLog: true, logger: { debug() {}, log() {}, warn: console.warn, error: console.error } });
  await w.loadModelFromUrl(url, { n_threads: threads, n_ctx: nCtx, n_batch: 512, n_gpu_layers: 0, useCache: false });
  // wllama's isSupportWebGPU() only sees navigator.gpu; what counts is whether an adapter exists (none with --disable-gpu)
  const adapter = navigator.gpu ? await navigator.gpu.requestAdapter().catch(() => null) : null;
  return {
    info: () => ({ device: `wllama (llama.cpp wasm), ${threads} threads, n_gpu_layers 0, WebGPU adapter: ${adapter ? 'yes' : 'none'}`, isolated: crossOriginIsolated, ctx: w.getLoadedContextInfo() }),
    async run(prompt, maxTokens) {
      const r = await w.createCompletion({ prompt, max_tokens: maxTokens, temperature: 0, ignore_eos: true, cache_prompt: false });
      return r.timings;
    },
    close: () => w.exit(),
  };
}

globalThis.bench = {
  async load(name, url, threads, nCtx) {
    if (engine) { await engine.close(); engine = null; }
    const t0 = performance.now();
    engine = name === 'wllama' ? await loadWllama(url, threads, nCtx) : await loadGgufEdge(url, threads, nCtx);
    const info = { ...engine.info(), load_ms: performance.now() - t0 };
    log(`${name}: loaded ${url} ${JSON.stringify(info)}`);
    return info;
  },
  async run(prompt, maxTokens) {
    const t = await engine.run(prompt, maxTokens);
    log(JSON.stringify(t));
    return t;
  },
  async close() { if (engine) { await engine.close(); engine = null; } },
};
globalThis.benchReady = true;
