import type { CommandModule } from './command';
import * as modules from './commands/index';

/** The order of `dura --help`; commands not named here follow alphabetically. */
const PREFERRED_ORDER = ['run', 'watch', 'get', 'events', 'ls', 'signal', 'cancel', 'replay', 'fork', 'diff'];

function isCommand(value: unknown): value is CommandModule {
  const candidate = value as Partial<CommandModule> | null;
  return typeof candidate?.name === 'string' && typeof candidate.run === 'function';
}

function rank(name: string): number {
  const index = PREFERRED_ORDER.indexOf(name);
  return index === -1 ? PREFERRED_ORDER.length : index;
}

/** Every command exported by commands/index.ts, in help order. */
export const COMMANDS: readonly CommandModule[] = Object.values(modules as Record<string, unknown>)
  .filter(isCommand)
  .sort((a, b) => rank(a.name) - rank(b.name) || a.name.localeCompare(b.name));

export function findCommand(name: string): CommandModule | undefined {
  return COMMANDS.find((command) => command.name === name);
}
