// The demo page of `gguf-edge web`: the browser build's library API (loadModel, contexts, ChatSession)
// driven from a plain page. Query parameters (for links and tests): ?model=URL loads it at start,
// threads=N, ctx=N, numerics=fast|exact, device=cpu|webgpu|webgpu-prefill, opfs=1. `window.demo` exposes the state (the last reply's tokens
// and timings) to scripts.
import { loadModel, ChatSession } from './gguf-edge.js';

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
const isolated = globalThis.crossOriginIsolated === true;
const cores = navigator.hardwareConcurrency || 1;
const MiB = (n) => `${(n / 1048576).toFixed(n < 10 * 1048576 ? 2 : 1)} MiB`;

const demo = { model: null, context: null, chat: null, busy: false, loads: 0, last: null, loadInfo: null, error: null };
globalThis.demo = demo;

$('env').textContent = isolated
  ? `Cross-origin isolated: the cpu device runs on up to ${cores} threads (Web Workers sharing one WebAssembly.Memory).`
  : 'Not cross-origin isolated (no COOP/COEP headers): SharedArrayBuffer is off, so the engine runs single-threaded.';
$('threads').value = params.get('threads') ?? String(isolated ? cores : 1);
$('threads').disabled = !isolated;
if (params.get('ctx')) $('ctx').value = params.get('ctx');
if (params.get('numerics')) $('numerics').value = params.get('numerics');
if (params.get('opfs') === '1') $('opfs').checked = true;
// WebGPU needs navigator.gpu (a secure context: https or loopback); without it only the cpu device is offered
const hasGpu = typeof navigator !== 'undefined' && !!navigator.gpu;
for (const o of $('device').options) if (o.value !== 'cpu') o.disabled = !hasGpu;
const wantDevice = params.get('device');
if (wantDevice && [...$('device').options].some((o) => o.value === wantDevice && !o.disabled)) $('device').value = wantDevice;
if (!hasGpu) $('env').textContent += ' No WebGPU here (navigator.gpu is missing): the cpu device only.';

function setBusy(b) {
  demo.busy = b;
  for (const id of ['load-server', 'load-url', 'file', 'reset']) $(id).disabled = b;
  const ready = !!demo.context && !b;
  $('prompt').disabled = !demo.context;
  $('prompt').placeholder = demo.context ? 'Type a prompt; Enter sends (Shift+Enter: new line)' : 'Load a model, then type here';
  $('send').disabled = !ready;
  $('stop').disabled = !b || !demo.context;
}

function info(rows) {
  const dl = $('info');
  dl.replaceChildren();
  for (const [k, v] of rows) {
    const dt = document.createElement('dt'); dt.textContent = k;
    const dd = document.createElement('dd'); dd.textContent = v; dd.dataset.key = k;
    dl.append(dt, dd);
  }
}

function memoryRows() {
  const rt = demo.model?.runtime.device.runtime;
  const rows = [['weights', MiB(demo.model.weightBytes)]];
  if (demo.context) rows.push(['KV cache', `${MiB(demo.context.runtime.kvBytesPerToken * demo.context.nCtx)} (${demo.context.nCtx} tokens, ${demo.context.kvType})`]);
  if (rt?.memory) rows.push(['memory used', `${MiB(rt.used())} of a ${MiB(rt.memory.buffer.byteLength)} WebAssembly.Memory`]);
  return rows;
}

function planText(c, nTok) {
  const splits = c.runtime.describePlan(nTok);
  const by = new Map();
  for (const s of splits) by.set(s.device, (by.get(s.device) ?? 0) + s.nodes);
  return [...by].map(([d, n]) => `${d} (${n} ops)`).join(' + ');
}

function showModel(label) {
  const m = demo.model, c = demo.context;
  const rows = [
    ['model', `${label}${m.name ? ` — ${m.name}` : ''} (${m.architecture})`],
    ['file', MiB(m.runtime.file.size)],
    ['device', m.runtime.devices.map((d) => `${d.name}: ${d.description ?? d.kind}`).join('; ')],
    ['plan', `decode: ${planText(c, 1)}; prefill ${Math.min(32, c.nCtx)} tokens: ${planText(c, Math.min(32, c.nCtx))}`],
    ...memoryRows(),
    ['load', demo.loadInfo],
  ];
  info(rows);
}

function progress(p) {
  const bar = $('progress');
  if (p.total) { bar.max = p.total; bar.value = p.loaded; } else bar.removeAttribute('value');
  $('progress-text').textContent = p.phase === 'fetch'
    ? `downloading ${MiB(p.loaded)}${p.total ? ` of ${MiB(p.total)}` : ''}`
    : `weights on the device: ${MiB(p.loaded)} of ${MiB(p.total)}`;
}

async function load(source, label) {
  if (demo.busy) return;
  setBusy(true);
  demo.error = null;
  $('progress-text').classList.remove('error-text');
  try {
    if (demo.model) { await demo.model.close(); demo.model = demo.context = demo.chat = null; }
    const t0 = performance.now();
    const threads = Math.max(1, Number($('threads').value) || 1);
    // 'webgpu': the GPU takes every op it has (the cpu device the rest); 'webgpu-prefill': prompt batches on
    // the GPU, one-token decode steps on the cpu device (the scheduler's phase devices)
    const choice = $('device').value;
    const model = await loadModel(source, {
      device: choice === 'cpu' ? 'cpu' : 'webgpu',
      threads, numerics: $('numerics').value,
      cacheInOpfs: $('opfs').checked && typeof source === 'string',
      onProgress: progress,
    });
    const ctx = Math.max(16, Math.min(Number($('ctx').value) || 1024, model.contextLength));
    demo.model = model;
    const [gpu] = model.runtime.devices.filter((d) => d.name === 'webgpu');
    const phases = choice === 'webgpu-prefill' && gpu ? { prefillDevice: gpu, decodeDevice: model.runtime.device } : {};
    demo.context = await model.createContext({ ctx, ...phases });
    demo.chat = null;
    $('mode').value = model.chatTemplate ? 'chat' : 'complete';
    demo.loadInfo = `${((performance.now() - t0) / 1000).toFixed(2)} s`;
    $('progress-text').textContent = `loaded ${label} in ${demo.loadInfo}`;
    showModel(label);
    $('transcript').replaceChildren();
    demo.loads++;
  } catch (e) {
    demo.error = String(e?.message ?? e);
    $('progress-text').textContent = `${e?.code ? `[${e.code}] ` : ''}${demo.error}`;
    $('progress-text').classList.add('error-text');
  } finally {
    setBusy(false);
  }
}

function message(who, text) {
  const div = document.createElement('div');
  div.className = `msg ${who}`;
  const w = document.createElement('span'); w.className = 'who'; w.textContent = who === 'user' ? 'you' : who === 'assistant' ? 'model' : who;
  const t = document.createElement('span'); t.className = 'text'; t.textContent = text;
  div.append(w, t);
  $('transcript').append(div);
  return t;
}

let abort = null;
async function send(text) {
  if (!demo.context || demo.busy || !text) return;
  setBusy(true);
  abort = new AbortController();
  const maxTokens = Math.max(1, Number($('max-tokens').value) || 128);
  const temperature = Math.max(0, Number($('temp').value));
  message('user', text);
  const out = message('assistant', '');
  out.parentElement.classList.add('streaming');
  let gen;
  if ($('mode').value === 'chat') {
    demo.chat ??= new ChatSession(demo.context, {});
    gen = demo.chat.send(text, { maxTokens, temperature, signal: abort.signal });
  } else {
    gen = demo.context.generate(text, { maxTokens, temperature, signal: abort.signal });
    out.textContent = '';
  }
  const t0 = performance.now();
  let first = 0, n = 0;
  try {
    for await (const ev of gen) {
      n++;
      if (n === 1) first = performance.now();
      out.textContent += ev.text;
      if (n > 1) $('stats').textContent = `decoding: ${n} tokens, ${((n - 1) / ((performance.now() - first) / 1000)).toFixed(1)} tok/s`;
      $('transcript').scrollTop = $('transcript').scrollHeight;
    }
    const r = await gen.result;
    const t = r.timings;
    demo.last = { text: r.text, tokens: r.tokens, finishReason: r.finishReason, timings: t, wallMs: performance.now() - t0 };
    $('stats').textContent = `prefill ${t.prompt_n} tok ${t.prompt_per_second.toFixed(1)} tok/s · decode ${t.predicted_n} tok ${t.predicted_per_second.toFixed(1)} tok/s · ${r.finishReason}`;
    info([...[...$('info').querySelectorAll('dd')].map((dd) => [dd.dataset.key, dd.textContent]).filter(([k]) => !['weights', 'KV cache', 'memory used'].includes(k)), ...memoryRows()]);
  } catch (e) {
    message('error', String(e?.message ?? e));
    demo.error = String(e?.message ?? e);
  } finally {
    out.parentElement.classList.remove('streaming');
    abort = null;
    setBusy(false);
  }
}

$('load-url').onclick = () => { const u = $('url').value.trim(); if (u) void load(u, u); };
$('file').onchange = () => { const f = $('file').files?.[0]; if (f) void load(f, f.name); };
$('prompt-form').onsubmit = (e) => { e.preventDefault(); const t = $('prompt').value; $('prompt').value = ''; void send(t); };
$('prompt').onkeydown = (e) => { if (e.key === 'Enter' && !e.shiftKey) { e.preventDefault(); $('prompt-form').requestSubmit(); } };
$('stop').onclick = () => abort?.abort();
$('reset').onclick = () => { demo.chat = null; demo.context?.clear(); $('transcript').replaceChildren(); $('stats').textContent = ''; };

const config = await fetch('config.json').then((r) => (r.ok ? r.json() : null)).catch(() => null);
if (config?.model) {
  $('server-row').hidden = false;
  $('server-model').textContent = `${config.model.name} (${MiB(config.model.size)})`;
  $('load-server').onclick = () => void load(new URL(config.model.url, location.href).href, config.model.name);
}
setBusy(false);
demo.ready = true;
const auto = params.get('model') ?? (config?.model && params.get('autoload') !== '0' ? config.model.url : null);
if (auto) void load(new URL(auto, location.href).href, auto === config?.model?.url ? config.model.name : auto);
