// gguf-edge command-line entry: dispatches `gguf-edge <command> [args]` to one module per command.
// Each command module exports `run(args): Promise<number>` (the exit code) and a `help` string.
// stdout carries program output only; logs, progress and errors go to stderr.
import { enableRelaxedSimd } from '../backends/cpu/node-flags.js';

export interface Command {
  /** one line for the command list */
  summary: string;
  /** full --help text */
  help: string;
  run(args: string[]): Promise<number>;
}

type Loader = () => Promise<Command>;

// Lazy imports keep `gguf-edge --help` fast and let each command pull only what it needs.
// A Map, not an object: the command name is user input ('__proto__', 'constructor' are not commands).
const commands = new Map<string, Loader>([
  ['run', async () => (await import('./commands/run.js')).command],
  ['inspect', async () => (await import('./commands/inspect.js')).command],
  ['devices', async () => (await import('./commands/devices.js')).command],
  ['tokenize', async () => (await import('./commands/tokenize.js')).command],
  ['detokenize', async () => (await import('./commands/detokenize.js')).command],
  ['convert-tokenizer', async () => (await import('./commands/convert-tokenizer.js')).command],
  ['re', async () => (await import('./commands/re.js')).command],
  ['npu', async () => (await import('./commands/npu.js')).command],
  ['chat', async () => (await import('./commands/chat.js')).command],
  ['bench', async () => (await import('./commands/bench.js')).command],
  ['split', async () => (await import('./commands/split.js')).command],
  ['serve', async () => (await import('./commands/serve.js')).command],
  ['web', async () => (await import('./commands/web.js')).command],
  ['pull', async () => (await import('./commands/pull.js')).command],
  ['verify', async () => (await import('./commands/verify.js')).command],
]);

export function registerCommand(name: string, loader: Loader): void {
  commands.set(name, loader);
}

async function topHelp(): Promise<string> {
  const lines = ['gguf-edge: run GGUF models directly (GGUF in, tokens out).', '', 'Usage: gguf-edge <command> [options]', '', 'Commands:'];
  for (const [name, load] of commands) {
    let summary = '';
    try { summary = (await load()).summary; } catch { summary = '(unavailable)'; }
    lines.push(`  ${name.padEnd(18)} ${summary}`);
  }
  lines.push('', 'Global options:', '  --device-plugin PATH  load extra devices from an ES module (repeatable; also', '                        GGUF_EDGE_DEVICE_PLUGINS=a.js:b.js); see docs/devices.md');
  lines.push('', "Run 'gguf-edge <command> --help' for a command's options.");
  return lines.join('\n');
}

export async function main(argv: string[]): Promise<number> {
  // relaxed SIMD on Node 20 (see src/backends/cpu/node-flags.ts), before any kernel compiles
  enableRelaxedSimd();
  // device plug-ins load first, so every command (and its --help device list) sees their devices
  let args: string[];
  try {
    args = await (await import('../backends/plugins.js')).loadStartupPlugins(argv);
  } catch (e) {
    const err = e as { code?: string; message?: string };
    process.stderr.write(`gguf-edge: ${err.code ? `[${err.code}] ` : ''}${err.message ?? String(e)}\n`);
    return err.code === 'USAGE' ? 2 : 1;
  }
  const [name, ...rest] = args;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write((await topHelp()) + '\n');
    return name ? 0 : 1;
  }
  if (name === '--version' || name === '-v') {
    const { readFileSync } = await import('node:fs');
    const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8'));
    process.stdout.write(`gguf-edge ${pkg.version}\n`);
    return 0;
  }
  const load = commands.get(name);
  if (!load) {
    process.stderr.write(`gguf-edge: unknown command '${name}'. Run 'gguf-edge --help' for the list.\n`);
    return 2;
  }
  const cmd = await load();
  if (rest.includes('--help') || rest.includes('-h')) {
    // the global --device-plugin option, on every command that takes a device
    const pluginHelp = /--device\b/.test(cmd.help) && !cmd.help.includes('--device-plugin') ? '\n\n' + (await import('../backends/plugins.js')).DEVICE_PLUGIN_HELP : '';
    process.stdout.write(cmd.help.trimEnd() + pluginHelp + '\n');
    return 0;
  }
  try {
    return await cmd.run(rest);
  } catch (e) {
    // One clear line, no stack trace, for every error that reaches the top (typed errors carry their code).
    const err = e as { code?: string; message?: string };
    const code = err.code ? `[${err.code}] ` : '';
    process.stderr.write(`gguf-edge ${name}: ${code}${err.message ?? String(e)}\n`);
    if (process.env.GGUF_EDGE_DEBUG) process.stderr.write(String((e as Error).stack) + '\n');
    return 1;
  } finally {
    // worker threads of compute devices would keep the process alive
    await (await import('../backends/registry.js')).closeDevices();
  }
}
