export { type CliOptions, runCli } from './cli';
export {
  type CommandContext,
  type CommandModule,
  EXIT,
  type ExitCode,
  type FlagSpec,
  type Output,
  type ParsedArgs,
  UsageError,
} from './command';
export { COMMANDS } from './commands/index';
