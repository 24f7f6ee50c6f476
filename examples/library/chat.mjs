// A two-turn conversation with a system prompt, through the model's chat template (ChatML when it has none).
//   node examples/library/chat.mjs MODEL.gguf
import { loadModel, ChatSession } from 'gguf-edge';

const model = await loadModel(process.argv[2] ?? 'stories260K.gguf');
const ctx = await model.createContext({ ctx: 1024 });
const chat = new ChatSession(ctx, { system: 'You tell stories.', temperature: 0, maxTokens: 24 });
for (const question of ['Once upon a time', 'What did Lily do?']) {
  const reply = chat.send(question);
  for await (const { text } of reply) process.stdout.write(text);
  process.stdout.write('\n');
}
console.log(JSON.stringify(chat.conversation()));
await model.close();
