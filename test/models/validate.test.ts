// Untrusted GGUF metadata and tensor shapes (issue #9 item 2): every case below was reproduced on
// the engine before validation existed (a hang, an infinite head size, a kv_store writing past its
// layer's cache, token ids bounded by the tokenizer rather than by token_embd). Each file is a real
// fixture edited with our GGUF writer; each must now end in a typed GgufError naming the key or tensor.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { parseGguf, readTensorData, type GgufFile } from '../../src/gguf/reader.js';
import { openGguf } from '../../src/gguf/open.js';
import { GgufError } from '../../src/gguf/errors.js';
import { writeGguf, type GgufWriteInput, type GgufWriteValue } from '../../src/gguf/writer.js';
import { toWriteInput } from '../../src/gguf/rewrite.js';
import { GgmlType } from '../../src/gguf/ggml-types.js';
import { readHParams } from '../../src/models/hparams.js';
import { validateTensors } from '../../src/models/validate.js';
import { archSpec } from '../../src/models/index.js';
import { buildTransformer } from '../../src/models/transformer.js';
import { GraphBuilder, GraphShapeError } from '../../src/graph/graph.js';
import { loadModel } from '../../src/runtime/model.js';
import { Context } from '../../src/runtime/context.js';
import { referenceDevice } from '../../src/backends/reference/device.js';
import { fixture } from '../helpers/fixtures.js';

const device = referenceDevice();
const base = toWriteInput(openGguf(fixture('models/stories260K.gguf')));
// stories260K: llama, 5 layers, n_embd 64, 8 heads, 4 KV heads (head dim 8), ffn 172, 512 tokens

function edited(change: (w: GgufWriteInput) => void): GgufFile {
  const w: GgufWriteInput = { ...base, metadata: base.metadata.map(([k, v]) => [k, v]), tensors: base.tensors.map((t) => ({ ...t })) };
  change(w);
  return parseGguf(writeGguf(w), 'edited.gguf');
}
function setMeta(w: GgufWriteInput, key: string, value: GgufWriteValue | undefined): void {
  const i = w.metadata.findIndex(([k]) => k === key);
  if (value === undefined) { if (i >= 0) w.metadata.splice(i, 1); return; }
  if (i >= 0) w.metadata[i] = [key, value]; else w.metadata.push([key, value]);
}
function setTensor(w: GgufWriteInput, name: string, dims: number[], type: number = GgmlType.F32): void {
  const i = w.tensors.findIndex((t) => t.name === name);
  const bytes = dims.reduce((a, b) => a * b, 1) * (type === GgmlType.F16 ? 2 : 4);
  const t = { name, dims, type, data: new Uint8Array(bytes) };
  if (i >= 0) w.tensors[i] = t; else w.tensors.push(t);
}
const u32 = (value: number): GgufWriteValue => ({ type: 'u32', value });
const f32 = (value: number): GgufWriteValue => ({ type: 'f32', value });

function expectLoadError(f: GgufFile, code: string, names: RegExp): GgufError {
  try {
    loadModel(f, { device });
  } catch (e) {
    assert.ok(e instanceof GgufError, `expected a GgufError, got ${String(e)}`);
    assert.equal(e.code, code, e.message);
    assert.match(e.message, names);
    return e;
  }
  assert.fail(`expected GgufError ${code}, the model loaded`);
}

test('block_count = 0xFFFFFFFF, reached by flipping one byte of the real file, is refused (it hung the loader)', { timeout: 20_000 }, () => {
  const bytes = new Uint8Array(readFileSync(fixture('models/stories260K.gguf')));
  const f0 = parseGguf(bytes);
  const key = 'llama.block_count';
  const at = f0.metaEntries.get(key)!.offset + 8 + key.length + 4; // u64 key length, key, u32 type, then the u32 value
  assert.equal(new DataView(bytes.buffer).getUint32(at, true), 5);
  bytes[at + 3] = 0xff; // 0xFF000005
  const e = expectLoadError(parseGguf(bytes, 'flipped.gguf'), 'BAD_HPARAM', /llama\.block_count/);
  assert.equal(e.detail?.key, key);
  assert.equal(e.detail?.found, String(0xff000005));
  expectLoadError(edited((w) => setMeta(w, key, u32(0xffffffff))), 'BAD_HPARAM', /block_count is 4294967295/);
});

test('head_count = 0 (an infinite head size before) and other impossible head layouts -> BAD_HPARAM', () => {
  expectLoadError(edited((w) => setMeta(w, 'llama.attention.head_count', u32(0))), 'BAD_HPARAM', /llama\.attention\.head_count is 0/);
  // 8 query heads over 3 KV heads: not a grouped-query layout
  const gqa = expectLoadError(edited((w) => setMeta(w, 'llama.attention.head_count_kv', u32(3))), 'BAD_HPARAM', /head_count_kv/);
  assert.match(gqa.message, /divisor of head_count 8/);
  // 64 / 7 is not a head size (no key_length)
  expectLoadError(edited((w) => setMeta(w, 'llama.attention.head_count', u32(7))), 'BAD_HPARAM', /embedding_length 64 is not a multiple of .*head_count 7/);
  expectLoadError(edited((w) => setMeta(w, 'llama.attention.head_count_kv', u32(16))), 'BAD_HPARAM', /head_count_kv/);
});

test('RoPE dims, eps, context length, soft-caps, windows: range, integrality, finiteness', () => {
  const cases: [string, GgufWriteValue, RegExp][] = [
    ['llama.rope.dimension_count', u32(10), /rope\.dimension_count is 10; expected an even number of dims <= the head dim 8/],
    ['llama.rope.dimension_count', u32(7), /rope\.dimension_count is 7/],
    ['llama.rope.dimension_count', u32(0), /rope\.dimension_count is 0/],
    ['llama.attention.layer_norm_rms_epsilon', f32(0), /layer_norm_rms_epsilon is 0/],
    ['llama.attention.layer_norm_rms_epsilon', f32(NaN), /layer_norm_rms_epsilon is NaN/],
    ['llama.attention.layer_norm_rms_epsilon', f32(-1e-5), /layer_norm_rms_epsilon/],
    ['llama.context_length', u32(0), /context_length is 0/],
    ['llama.embedding_length', f32(64.5), /embedding_length is 64\.5; expected an integer/],
    ['llama.attention.sliding_window', { type: 'i32', value: -1 }, /sliding_window is -1/],
    ['llama.attn_logit_softcapping', f32(Infinity), /attn_logit_softcapping is Infinity/],
    ['llama.final_logit_softcapping', f32(-30), /final_logit_softcapping is -30/],
    ['llama.rope.freq_base', f32(0), /rope\.freq_base is 0/],
    ['llama.rope.scaling.factor', f32(NaN), /rope\.scaling\.factor is NaN/],
    ['llama.attention.key_length', u32(0), /key_length is 0/],
  ];
  for (const [key, value, msg] of cases) {
    const f = edited((w) => setMeta(w, key, value));
    const e = expectLoadError(f, 'BAD_HPARAM', msg);
    assert.equal(e.detail?.key, key, e.message);
    assert.equal(e.offset, f.metaEntries.get(key)!.offset, 'the error points at the key in the file');
  }
  // a required key absent
  expectLoadError(edited((w) => setMeta(w, 'llama.attention.head_count', undefined)), 'MISSING_KEY', /llama\.attention\.head_count is missing/);
});

test('per-layer arrays: one value per layer, all equal (uniform layers)', () => {
  const arr = (xs: number[]): GgufWriteValue => ({ type: 'array', itemType: 'u32', value: xs });
  expectLoadError(edited((w) => setMeta(w, 'llama.attention.head_count_kv', arr([4, 4, 4]))), 'BAD_HPARAM', /head_count_kv is an array of 3; expected 5 values/);
  expectLoadError(edited((w) => setMeta(w, 'llama.attention.head_count_kv', arr([4, 4, 2, 4, 4]))), 'BAD_HPARAM', /4 for layer 0 and 2 for layer 2/);
  expectLoadError(edited((w) => setMeta(w, 'llama.attention.head_count_kv', arr([4, 4, 0, 4, 4]))), 'BAD_HPARAM', /head_count_kv\[2\] is 0/);
  // the same values as an array load fine
  const ok = loadModel(edited((w) => setMeta(w, 'llama.attention.head_count_kv', arr([4, 4, 4, 4, 4]))), { device });
  assert.equal(ok.hp.nHeadKv, 4);
});

test('oversized attn_k rows are refused at load (the cpu kv_store wrote past its layer cache) and by the graph builder', () => {
  const f = edited((w) => setTensor(w, 'blk.2.attn_k.weight', [64, 64]));
  const e = expectLoadError(f, 'BAD_TENSOR_SHAPE', /blk\.2\.attn_k\.weight" has shape \[64, 64\]; expected \[64, 32\] \(head_count_kv 4 x key_length 8\)/);
  assert.deepEqual(e.detail, { tensor: 'blk.2.attn_k.weight', expected: '[64, 32]', found: '[64, 64]' });
  // defense in depth: a graph built from such weights (validation bypassed) never reaches a kernel
  const hp = readHParams(f);
  const weights = new Map(f.tensors.map((t) => [t.name, { dtype: t.type, dims: t.dims }]));
  assert.throws(() => buildTransformer(archSpec('llama')!, hp, weights, { nTokens: 1, nOutputs: 1, nCtx: 16, kvType: 'f16' }),
    (err: unknown) => err instanceof GraphShapeError && /kv_store: .*rows of 64 into cache_k_l2 rows of 32/.test(err.message));
});

test('graph builder refuses mismatched shapes op by op', () => {
  const b = new GraphBuilder();
  const x = b.leaf('x', 'input', 'f32', [32, 2]);
  const pos = b.leaf('pos', 'input', 'i32', [2]);
  const cache = b.leaf('cache', 'state', 'f16', [16, 8]);
  const shapeErr = (fn: () => unknown, re: RegExp) => assert.throws(fn, (e: unknown) => e instanceof GraphShapeError && re.test(e.message));
  shapeErr(() => b.kvStore(cache, x, pos), /kv_store/);
  shapeErr(() => b.viewCols(x, 20, 16), /view_cols: columns \[20, 36\)/);
  shapeErr(() => b.addT(x, b.leaf('w', 'weight', 0, [5])), /add/);
  shapeErr(() => b.rmsNorm(x, 1e-5, 5), /rms_norm/);
  shapeErr(() => b.rope(x, pos, { headDim: 8, nDims: 10, neox: false, freqBase: 1e4, freqScale: 1 }), /rope: rotating 10 of 8/);
  shapeErr(() => b.rope(x, pos, { headDim: 8, nDims: 8, neox: false, freqBase: 1e4, freqScale: 1 }, b.leaf('ff', 'weight', 0, [3])), /factors/);
  shapeErr(() => b.swiglu(x, b.leaf('y', 'input', 'f32', [16, 2])), /swiglu/);
  const kc = b.leaf('kc', 'state', 'f16', [16, 8]), vc = b.leaf('vc', 'state', 'f16', [16, 8]);
  shapeErr(() => b.attention(x, kc, vc, pos, { nHead: 4, nHeadKv: 3, headDimK: 8, headDimV: 8, scale: 1, softcap: 0, window: 0 }, []), /4 query heads over 3/);
  shapeErr(() => b.attention(x, kc, vc, pos, { nHead: 4, nHeadKv: 4, headDimK: 8, headDimV: 8, scale: 1, softcap: 0, window: 0 }, []), /kc rows of 16 for 4 heads of 8/);
});

test('token ids are bounded by token_embd: the vocabulary size must be its row count (and output\'s)', async () => {
  // 512 tokens in the tokenizer, 256 embedding rows: token 300 used to read past token_embd
  const f = edited((w) => { setTensor(w, 'token_embd.weight', [64, 256]); });
  expectLoadError(f, 'BAD_TENSOR_SHAPE', /token_embd\.weight" has shape \[64, 256\]; expected \[64, 512\].*tokenizer\.ggml\.tokens/);
  expectLoadError(edited((w) => setTensor(w, 'output.weight', [64, 500])), 'BAD_TENSOR_SHAPE', /output\.weight/);
  expectLoadError(edited((w) => setMeta(w, 'llama.vocab_size', u32(600))), 'BAD_HPARAM', /vocab_size is 600; expected the number of tokens in tokenizer\.ggml\.tokens \(512\)/);
  // without a tokenizer the vocabulary is token_embd's rows, and decode bounds ids by it
  const noTok = edited((w) => { w.metadata = w.metadata.filter(([k]) => !k.startsWith('tokenizer.')); });
  const model = loadModel(noTok, { device });
  assert.equal(model.hp.nVocab, 512);
  const ctx = new Context(model, { nCtx: 8 });
  await assert.rejects(ctx.decode([512]), /outside the vocabulary \(0\.\.511\)/);
  ctx.close();
});

test('tensor set: missing, unexpected (incl. layers beyond block_count), vectors not F32', () => {
  expectLoadError(edited((w) => { w.tensors = w.tensors.filter((t) => t.name !== 'blk.3.ffn_norm.weight'); }), 'MISSING_TENSOR', /blk\.3\.ffn_norm\.weight/);
  expectLoadError(edited((w) => setMeta(w, 'llama.block_count', u32(4))), 'UNEXPECTED_TENSOR', /blk\.4\..* \(block_count is 4\)/);
  expectLoadError(edited((w) => setMeta(w, 'llama.block_count', u32(6))), 'MISSING_TENSOR', /blk\.5\.attn_norm\.weight/);
  expectLoadError(edited((w) => setTensor(w, 'blk.0.mystery.weight', [64])), 'UNEXPECTED_TENSOR', /blk\.0\.mystery\.weight/);
  expectLoadError(edited((w) => setTensor(w, 'blk.1.attn_norm.weight', [64], GgmlType.F16)), 'BAD_TENSOR_TYPE', /blk\.1\.attn_norm\.weight" has type F16; expected F32/);
  expectLoadError(edited((w) => setTensor(w, 'blk.1.ffn_down.weight', [172, 63])), 'BAD_TENSOR_SHAPE', /ffn_down/);
  expectLoadError(edited((w) => setTensor(w, 'rope_freqs.weight', [8])), 'BAD_TENSOR_SHAPE', /rope_freqs\.weight" has shape \[8\]; expected \[4\]/);
  expectLoadError(edited((w) => setTensor(w, 'blk.0.attn_q.bias', [63])), 'BAD_TENSOR_SHAPE', /attn_q\.bias/);
  // optional tensors of the right shape are accepted (a bias, Q/K norms)
  const ok = edited((w) => { setTensor(w, 'blk.0.attn_q.bias', [64]); setTensor(w, 'blk.0.attn_k_norm.weight', [8]); });
  validateTensors(ok, readHParams(ok));
});

test('no false alarms: every fixture of a supported architecture validates, byte-identical tensors untouched', () => {
  const names = [
    ...readdirSync(fixture('models')).map((n) => `models/${n}`),
    ...readdirSync(fixture('parity')).filter((n) => n.endsWith('.gguf')).map((n) => `parity/${n}`),
  ];
  let checked = 0;
  for (const rel of names) {
    const f = openGguf(fixture(rel));
    try {
      const arch = f.metadata.get('general.architecture') as string;
      if (!archSpec(arch)) continue;
      validateTensors(f, readHParams(f));
      checked++;
    } finally { f.source.close?.(); }
  }
  // 5 llama model files + 6 architectures x 7 types + llama/qwen3 x 12 more types
  assert.ok(checked >= 5 + 42 + 24, `${checked} fixtures checked`);
  // a tensor's bytes are what the file holds (validation reads no data)
  const f = openGguf(fixture('models/stories260K.gguf'));
  assert.equal(readTensorData(f, 'output_norm.weight').length, 64 * 4);
});

test('recurrent architectures: lfm2 short-conv and qwen35 Gated DeltaNet keys and tensors are checked (typed errors)', () => {
  const from = (rel: string) => toWriteInput(openGguf(fixture(rel)));
  const lfm2 = from('parity/lfm2-f32.gguf'), qwen35 = from('parity/qwen35-f32.gguf');
  const edit = (src: GgufWriteInput, change: (w: GgufWriteInput) => void): GgufFile => {
    const w: GgufWriteInput = { ...src, metadata: src.metadata.map(([k, v]) => [k, v]), tensors: src.tensors.map((t) => ({ ...t })) };
    change(w);
    return parseGguf(writeGguf(w), 'edited.gguf');
  };
  const arr = (xs: number[]): GgufWriteValue => ({ type: 'array', itemType: 'u32', value: xs });
  // lfm2: 5 layers C C A C A, dim 128, conv width 3
  expectLoadError(edit(lfm2, (w) => setMeta(w, 'lfm2.attention.head_count_kv', arr([0, 0, 2, 0, 4]))), 'BAD_HPARAM', /has 2 and 4 on attention layers/);
  expectLoadError(edit(lfm2, (w) => setMeta(w, 'lfm2.attention.head_count_kv', arr([0, 0, 2, 0]))), 'BAD_HPARAM', /an array of 4; expected 5 values/);
  expectLoadError(edit(lfm2, (w) => setMeta(w, 'lfm2.shortconv.l_cache', undefined)), 'MISSING_KEY', /lfm2\.shortconv\.l_cache/);
  expectLoadError(edit(lfm2, (w) => setTensor(w, 'blk.0.shortconv.conv.weight', [4, 128])), 'BAD_TENSOR_SHAPE', /shortconv\.conv\.weight" has shape \[4, 128\]; expected \[3, 128\] \(shortconv\.l_cache 3/);
  expectLoadError(edit(lfm2, (w) => setTensor(w, 'blk.1.shortconv.conv.weight', [3, 128], GgmlType.F16)), 'BAD_TENSOR_TYPE', /expected F32/);
  expectLoadError(edit(lfm2, (w) => setTensor(w, 'blk.2.shortconv.in_proj.weight', [128, 384])), 'UNEXPECTED_TENSOR', /blk\.2\.shortconv\.in_proj/);
  expectLoadError(edit(lfm2, (w) => { w.tensors = w.tensors.filter((t) => t.name !== 'token_embd_norm.weight'); }), 'MISSING_TENSOR', /token_embd_norm\.weight/);
  // qwen35: layers G G G A, S 32, 2 k-heads, 4 v-heads, conv 4
  expectLoadError(edit(qwen35, (w) => { setMeta(w, 'qwen35.ssm.time_step_rank', u32(3)); setMeta(w, 'qwen35.ssm.inner_size', u32(96)); }), 'BAD_HPARAM', /time_step_rank is 3; expected a multiple of ssm\.group_count 2/);
  expectLoadError(edit(qwen35, (w) => setMeta(w, 'qwen35.ssm.inner_size', u32(96))), 'BAD_HPARAM', /inner_size is 96; expected state_size 32 x time_step_rank 4/);
  expectLoadError(edit(qwen35, (w) => setMeta(w, 'qwen35.ssm.state_size', undefined)), 'MISSING_KEY', /qwen35\.ssm\.state_size/);
  expectLoadError(edit(qwen35, (w) => setTensor(w, 'blk.0.ssm_conv1d.weight', [3, 256])), 'BAD_TENSOR_SHAPE', /ssm_conv1d\.weight" has shape \[3, 256\]; expected \[4, 256\]/);
  expectLoadError(edit(qwen35, (w) => setTensor(w, 'blk.3.attn_q.weight', [128, 256])), 'BAD_TENSOR_SHAPE', /attn_q\.weight" has shape \[128, 256\]; expected \[128, 512\] \(.*query and gate/);
  expectLoadError(edit(qwen35, (w) => { w.tensors = w.tensors.filter((t) => t.name !== 'blk.1.ssm_a'); }), 'MISSING_TENSOR', /blk\.1\.ssm_a/);
  expectLoadError(edit(qwen35, (w) => setTensor(w, 'blk.3.ssm_norm.weight', [32])), 'UNEXPECTED_TENSOR', /blk\.3\.ssm_norm/);
  // qwen35moe: the shared expert and its 1-row f32 gate
  const q35moe = from('parity/qwen35moe-f32.gguf');
  expectLoadError(edit(q35moe, (w) => setTensor(w, 'blk.1.ffn_up_shexp.weight', [128, 32])), 'BAD_TENSOR_SHAPE', /ffn_up_shexp\.weight" has shape \[128, 32\]; expected \[128, 64\] \(.*expert_shared_feed_forward_length 64/);
  expectLoadError(edit(q35moe, (w) => setTensor(w, 'blk.0.ffn_gate_inp_shexp.weight', [128], GgmlType.F16)), 'BAD_TENSOR_TYPE', /ffn_gate_inp_shexp\.weight" has type F16; expected F32/);
  expectLoadError(edit(q35moe, (w) => { w.tensors = w.tensors.filter((t) => t.name !== 'blk.2.ffn_down_shexp.weight'); }), 'MISSING_TENSOR', /blk\.2\.ffn_down_shexp/);
  expectLoadError(edit(q35moe, (w) => setMeta(w, 'qwen35moe.expert_used_count', u32(5))), 'BAD_HPARAM', /expert_used_count/);
  // the layer pattern follows full_attention_interval: with 2, layer 1 would be attention (and lacks attn_q)
  expectLoadError(edit(qwen35, (w) => setMeta(w, 'qwen35.full_attention_interval', u32(2))), 'MISSING_TENSOR', /"blk\.1\.attn_(q|k|v|output)\.weight"/);
});

test('mixture of experts (qwen3moe): expert keys and 3-D expert tensors are checked', () => {
  const moe = toWriteInput(openGguf(fixture('parity/qwen3moe-f32.gguf')));
  const editMoe = (change: (w: GgufWriteInput) => void): GgufFile => {
    const w: GgufWriteInput = { ...moe, metadata: moe.metadata.map(([k, v]) => [k, v]), tensors: moe.tensors.map((t) => ({ ...t })) };
    change(w);
    return parseGguf(writeGguf(w), 'edited.gguf');
  };
  expectLoadError(editMoe((w) => setMeta(w, 'qwen3moe.expert_count', undefined)), 'MISSING_KEY', /qwen3moe\.expert_count/);
  expectLoadError(editMoe((w) => setMeta(w, 'qwen3moe.expert_used_count', u32(7))), 'BAD_HPARAM', /expert_used_count is 7; expected an integer in \[1, expert_count 6\]/);
  expectLoadError(editMoe((w) => setMeta(w, 'qwen3moe.expert_count', u32(100000))), 'BAD_HPARAM', /expert_count/);
  // one expert fewer in a layer's experts tensor than expert_count
  expectLoadError(editMoe((w) => setTensor(w, 'blk.1.ffn_up_exps.weight', [128, 64, 5])), 'BAD_TENSOR_SHAPE', /blk\.1\.ffn_up_exps\.weight" has shape \[128, 64, 5\]; expected \[128, 64, 6\]/);
  expectLoadError(editMoe((w) => setTensor(w, 'blk.0.ffn_down_exps.weight', [64, 128])), 'BAD_TENSOR_SHAPE', /ffn_down_exps/);
  expectLoadError(editMoe((w) => { w.tensors = w.tensors.filter((t) => t.name !== 'blk.0.ffn_gate_inp.weight'); }), 'MISSING_TENSOR', /blk\.0\.ffn_gate_inp\.weight/);
  // a dense FFN tensor in a MoE layer is not read by the graph: refused
  expectLoadError(editMoe((w) => setTensor(w, 'blk.0.ffn_down.weight', [256, 128])), 'UNEXPECTED_TENSOR', /blk\.0\.ffn_down\.weight/);
});

test('gemma4: per-layer FFN widths and head sizes, the SWA pattern, KV-shared layers and per-layer embeddings are checked', () => {
  const g4 = toWriteInput(openGguf(fixture('parity/gemma4-f32.gguf')));
  const edit = (change: (w: GgufWriteInput) => void): GgufFile => {
    const w: GgufWriteInput = { ...g4, metadata: g4.metadata.map(([k, v]) => [k, v]), tensors: g4.tensors.map((t) => ({ ...t })) };
    change(w);
    return parseGguf(writeGguf(w), 'edited.gguf');
  };
  const arr = (xs: number[]): GgufWriteValue => ({ type: 'array', itemType: 'u32', value: xs });
  // 4 layers S F S F, head sizes 32 (SWA) / 64, FFN 128 128 256 256, layers 2-3 share the KV of 0-1
  expectLoadError(edit((w) => setMeta(w, 'gemma4.attention.sliding_window_pattern', undefined)), 'MISSING_KEY', /gemma4\.attention\.sliding_window_pattern/);
  expectLoadError(edit((w) => setMeta(w, 'gemma4.attention.sliding_window_pattern', { type: 'array', itemType: 'bool', value: [true, false, true] })), 'BAD_HPARAM', /sliding_window_pattern is an array of 3; expected an array of 4 bools/);
  expectLoadError(edit((w) => setMeta(w, 'gemma4.feed_forward_length', arr([128, 128, 256]))), 'BAD_HPARAM', /feed_forward_length is an array of 3; expected 4 values/);
  expectLoadError(edit((w) => setMeta(w, 'gemma4.feed_forward_length', arr([128, 128, 128, 256]))), 'BAD_TENSOR_SHAPE', /blk\.2\.ffn_gate\.weight" has shape \[128, 256\]; expected \[128, 128\] \(.*feed_forward_length\[2\] 128/);
  expectLoadError(edit((w) => setMeta(w, 'gemma4.attention.shared_kv_layers', u32(3))), 'BAD_HPARAM', /shared_kv_layers is 3; expected at most block_count - 2 = 2/);
  expectLoadError(edit((w) => setMeta(w, 'gemma4.attention.value_length_swa', u32(16))), 'BAD_HPARAM', /value_length_swa is 16; expected key_length_swa 32/);
  // a KV-shared layer has no K/V projections: one there is not read, so the file is refused
  expectLoadError(edit((w) => setTensor(w, 'blk.2.attn_k.weight', [128, 32])), 'UNEXPECTED_TENSOR', /blk\.2\.attn_k\.weight/);
  // an SWA layer's Q has head size key_length_swa
  expectLoadError(edit((w) => setTensor(w, 'blk.0.attn_q.weight', [128, 256])), 'BAD_TENSOR_SHAPE', /blk\.0\.attn_q\.weight" has shape \[128, 256\]; expected \[128, 128\] \(head_count 4 x key_length_swa 32/);
  expectLoadError(edit((w) => setTensor(w, 'per_layer_token_embd.weight', [128, 512])), 'BAD_TENSOR_SHAPE', /per_layer_token_embd\.weight.*expected \[256, 512\]/);
  expectLoadError(edit((w) => { w.tensors = w.tensors.filter((t) => t.name !== 'blk.3.inp_gate.weight'); }), 'MISSING_TENSOR', /blk\.3\.inp_gate\.weight/);
});
