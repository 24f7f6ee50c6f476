// Zero allocation per decoded token, end to end: 1,000 one-token Context.decode() calls (scheduler,
// context and cpu device; the sampler's argmax picks the next token) start no young-generation (scavenge)
// collection and leave V8's new space where they found it. An allocation of even 8 bytes per token would
// show as 12 KB at least (the smallest object, a boxed number, is 12 bytes) against a bound of 10 KB; the probe itself costs ~2 KB. Covers llama and qwen3, gemma2 (softcap attention and
// logits, geglu), gemma3 (geglu, sliding window), lfm2 (short-conv layers) and qwen35 (Gated DeltaNet layers,
// gated attention), whose recurrent states are updated in place, qwen3moe (router softmax, top-k, mul_mat_id,
// moe_sum; qwen35moe adds its sigmoid-gated shared expert), smollm3, gemma4 (per-layer inputs, KV-shared layers) and --numerics exact (qwen35-q4_k_m's 4-row Q4_K ssm_alpha/ssm_beta run the reference's
// Q4_K dot there, llama.cpp's order for rows % 8 != 0).
// Also with a quantized KV cache (q8_0, q4_0).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { probeAllocation } from '../helpers/alloc-probe.js';
import v8 from 'node:v8';
import { createCpuDevice } from '../../src/backends/cpu/device.js';
import { openGguf } from '../../src/gguf/open.js';
import { loadModel } from '../../src/runtime/model.js';
import { Context } from '../../src/runtime/context.js';
import { argmax } from '../../src/runtime/sampler.js';
import { fixture } from '../helpers/fixtures.js';

const fast = await createCpuDevice({ threads: 2 });
const exact = await createCpuDevice({ threads: 2, numerics: 'exact' });
after(async () => { await fast.close(); await exact.close(); });

// Optimized code is what allocates nothing (unoptimized code boxes every double it computes): compile it on
// the main thread as soon as functions are hot, so a loaded machine starving V8's background compiler cannot
// leave the measured steps running unoptimized.
v8.setFlagsFromString('--no-concurrent-recompilation');
v8.setFlagsFromString('--no-concurrent-osr');


for (const [name, numerics, attn] of ([['llama-q8_0', 'fast'], ['qwen3-q4_k_m', 'fast'], ['gemma2-q4_0', 'fast'], ['gemma3-q4_k_m', 'fast'],
  ['lfm2-q4_0', 'fast'], ['qwen35-q8_0', 'fast'], ['qwen35-q4_k_m', 'fast'],
  ['qwen3-q4_k_m', 'exact'], ['gemma2-q4_k', 'exact'], ['gemma3-q4_0', 'exact'], ['lfm2-q4_k_m', 'exact'], ['qwen35-q4_k_m', 'exact'],
  ['qwen3moe-q4_k_m', 'fast'], ['qwen3moe-f32', 'fast'], ['qwen3moe-q8_0', 'exact'], ['smollm3-q4_0', 'fast'],
  ['gemma4-q4_0', 'fast'], ['gemma4-q4_k_m', 'exact'], ['qwen35moe-q4_k_m', 'fast'], ['qwen35moe-q8_0', 'exact'],
  // flash attention end to end (its kernels' cases: test/backends/cpu/decode-noalloc.test.ts, at one position)
  ['qwen3-q4_k_m', 'fast', 'fa'],
  // a quantized KV cache: q8_0 (the WASM kernel; the Hadamard rotation of heads of 64k) and q4_0 (the reference kernel)
  ['qwen3-q4_k_m', 'fast', 'kv q8_0'], ['gemma2-q4_k', 'exact', 'kv q8_0'], ['llama-q8_0', 'fast', 'kv q4_0']] as const).map((e) => [e[0], e[1], (e as readonly string[])[2] ?? ''] as const)) {
  test(`Context.decode, ${name} (${numerics}${attn ? `, ${attn}` : ''}): 1,000 tokens allocate nothing`, async () => {
    const device = numerics === 'fast' ? fast : exact;
    const file = openGguf(fixture(`parity/${name}.gguf`));
    try {
      const model = loadModel(file, { device });
      // room for the prompt, the warm-up and the 1,000 measured tokens
      const opts = attn === 'fa' ? { flashAttn: 'on' as const } : attn.startsWith('kv ') ? { kvType: attn.slice(3) as 'q8_0' | 'q4_0' } : {};
      const ctx = new Context(model, { nCtx: 4096 + 1024, ...opts });
      let logits = await ctx.decode([1, 2, 3, 4, 5]);
      const tok = [argmax(logits)];
      // one token: the context's synchronous path (it returns a promise already resolved)
      const step = () => { void ctx.decode(tok); tok[0] = argmax(logits); };
      logits = await ctx.decode(tok);
      const { grown, scavenges } = await probeAllocation(step, 15);
      console.log(`# ${name} ${numerics} ${attn}: new space +${grown} bytes over 1,000 tokens, ${scavenges} scavenges`);
      assert.equal(scavenges, 0, `${scavenges} young-generation collections during 1,000 decoded tokens`);
      assert.ok(grown < 10240, `the new space grew by ${grown} bytes over 1,000 decoded tokens`);
      ctx.close();
    } finally {
      file.source.close?.();
    }
  });
}

// Continuous batching: 1,000 steps of 4 sequences x 1 token through one decodeSeqs call each (one plan, reused;
// the result array and its resolved promise are reused too) allocate nothing either.
const argmaxAt = (l: Float32Array, off: number, n: number) => {
  let best = off;
  for (let i = off + 1; i < off + n; i++) if (l[i]! > l[best]!) best = i;
  return best - off;
};
// (gemma2/gemma3/llama showed ~58 bytes per step here after the other tests of this file: decodeSeqs' plan
// lookup, no longer inlined once its callers were polymorphic, boxed its key number for a Map update; the last
// plan is now reused while the shape stays)
for (const [name, numerics] of [['qwen3-q4_k_m', 'fast'], ['gemma2-q4_0', 'fast'], ['gemma3-q4_k_m', 'exact'], ['llama-q8_0', 'fast']] as const) {
  test(`Context.decodeSeqs, ${name} (${numerics}): 1,000 steps of 4 sequences x 1 token allocate nothing`, async () => {
    const device = numerics === 'fast' ? fast : exact;
    const file = openGguf(fixture(`parity/${name}.gguf`));
    try {
      const model = loadModel(file, { device });
      const N = 4, nv = model.hp.nVocab;
      const ctx = new Context(model, { nCtx: N * (6144 + 1024), nSeq: N });
      let out = await ctx.decodeSeqs(Array.from({ length: N }, (_, seq) => ({ seq, tokens: [1, 2 + seq, 3, 4 + seq], logits: 'last' as const })));
      const toks = Array.from({ length: N }, (_, s) => [argmaxAt(out, s * nv, nv)]);
      const batch = toks.map((tokens, seq) => ({ seq, tokens, logits: 'last' as const }));
      out = await ctx.decodeSeqs(batch);
      const step = () => {
        void ctx.decodeSeqs(batch);
        for (let s = 0; s < N; s++) toks[s]![0] = argmaxAt(out, s * nv, nv);
      };
      // steady state: past the positions (~1,000-2,000 here) where the four tokens' attention starts using the
      // worker threads, a one-time change the JIT pays for once (measured: later windows of 1,000 steps stay flat)
      for (let i = 0; i < 2000; i++) step();
      const { grown, scavenges } = await probeAllocation(step, 15);
      console.log(`# ${name} ${numerics}: new space +${grown} bytes over 1,000 steps of ${N} sequences, ${scavenges} scavenges`);
      assert.equal(scavenges, 0, `${scavenges} young-generation collections during 1,000 batched steps`);
      assert.ok(grown < 10240, `the new space grew by ${grown} bytes over 1,000 batched steps`);
      assert.ok(ctx.seqPast(3) > 1000);
      ctx.close();
    } finally {
      file.source.close?.();
    }
  });
}
