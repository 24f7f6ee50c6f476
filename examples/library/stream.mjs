// Sampling options, a stop string, an AbortSignal as a time limit, onToken, and the final result.
//   node examples/library/stream.mjs MODEL.gguf
import { loadModel } from 'gguf-edge';

const model = await loadModel(process.argv[2] ?? 'stories260K.gguf');
const ctx = await model.createContext({ ctx: 512 });
let counted = 0;
const gen = ctx.generate('Once upon a time', {
  maxTokens: 64,
  temperature: 0,
  penalties: { repeat: 1.0 },
  stop: ['park'],                     // the text ends before "park"
  signal: AbortSignal.timeout(30_000), // and generation stops after 30 s at the latest
  onToken: () => { counted++; },       // called for every token, also without a for-await loop
});
for await (const { text } of gen) process.stdout.write(text);
const r = await gen.result;
process.stdout.write('\n');
console.log(JSON.stringify({ finishReason: r.finishReason, stoppedBy: r.stoppedBy, usage: r.usage, tokens: counted }));
await model.close();
