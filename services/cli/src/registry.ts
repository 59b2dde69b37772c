import type { CommandEntry } from './command';
import { COMMANDS } from './commands/index';

export { COMMANDS };

export function findCommand(name: string): CommandEntry | undefined {
  return COMMANDS.find((command) => command.name === name);
}
