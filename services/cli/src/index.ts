export { runCli } from './cli';
export type { CliOptions } from './cli';
export { EXIT, UsageError } from './command';
export type { CommandContext, CommandModule, ExitCode, FlagSpec, Output, ParsedArgs } from './command';
export { COMMANDS } from './commands/index';
