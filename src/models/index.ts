// Architecture registry: general.architecture -> its spec.
import type { ArchSpec } from './transformer.js';
import { llama } from './llama.js';
import { qwen2 } from './qwen2.js';
import { qwen3 } from './qwen3.js';
import { phi3 } from './phi3.js';
import { gemma2 } from './gemma2.js';
import { gemma3 } from './gemma3.js';
import { smollm3 } from './smollm3.js';
import { lfm2 } from './lfm2.js';
import { qwen35 } from './qwen35.js';
import { qwen35moe } from './qwen35moe.js';
import { qwen3moe } from './qwen3moe.js';
import { gemma4 } from './gemma4.js';

const specs: ArchSpec[] = [llama, qwen2, qwen3, phi3, gemma2, gemma3, smollm3, lfm2, qwen35, qwen3moe, gemma4, qwen35moe];

export function archSpec(arch: string): ArchSpec | undefined {
  return specs.find((s) => s.names.includes(arch));
}
export const supportedArchitectures = specs.flatMap((s) => s.names);
