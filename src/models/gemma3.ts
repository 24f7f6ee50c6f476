// gemma3: gemma2 without soft-capping, plus Q/K norms; 5 sliding-window layers (RoPE base 10000)
// to 1 global layer (hparams).
import type { ArchSpec } from './transformer.js';
import { gemma2 } from './gemma2.js';

export const gemma3: ArchSpec = { ...gemma2, names: ['gemma3'] };
