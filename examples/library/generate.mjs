// Greedy generation, streamed: the README's first example.
//   node examples/library/generate.mjs MODEL.gguf [PROMPT]
import { loadModel } from 'gguf-edge';

const [path = 'stories260K.gguf', prompt = 'Once upon a time'] = process.argv.slice(2);
const model = await loadModel(path);
const ctx = await model.createContext({ ctx: 256 });
for await (const { text } of ctx.generate(prompt, { maxTokens: 16, temperature: 0 }))
  process.stdout.write(text);
process.stdout.write('\n');
await model.close();
