// qwen2: llama with Q/K/V biases (picked up from the file) and NeoX RoPE (set in hparams).
import type { ArchSpec } from './transformer.js';
import { llama } from './llama.js';

export const qwen2: ArchSpec = { ...llama, names: ['qwen2'] };
