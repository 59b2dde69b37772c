import { readFile } from 'node:fs/promises';
import { extname, resolve } from 'node:path';
import type { SubmitRunInput } from '@dura/client';
import { jsonFlag, listFlag, stringFlag, booleanFlag } from '../args';
import { EXIT, UsageError, type CommandModule, type ParsedArgs } from '../command';
import { followRun } from '../follow';
import { checkRunIdReuse } from '../run-id-conflict';

/** The request in the file, or one built from --tool/--args pairs. */
async function buildRequest(args: ParsedArgs): Promise<Record<string, unknown>> {
  const file = args.positionals[0];
  const tools = listFlag(args, 'tool');
  if (file !== undefined && tools.length > 0)
    throw new UsageError('give a request file or --tool steps, not both');
  if (file === undefined && tools.length === 0)
    throw new UsageError('nothing to run: give a request file (JSON or YAML) or --tool T [--args JSON]');
  const request =
    file === undefined
      ? { agent: { kind: 'scripted', steps: stepsFromFlags(args, tools) } }
      : await readRequest(file);
  const input = jsonFlag(args, 'input');
  if (input !== undefined) request.input = input;
  const id = stringFlag(args, 'id');
  if (id !== undefined) request.runId = id;
  const tags = listFlag(args, 'tag');
  if (tags.length > 0) request.tags = tags;
  const metadata = listFlag(args, 'meta');
  if (metadata.length > 0) request.metadata = Object.fromEntries(metadata.map(keyValue));
  return request;
}

function stepsFromFlags(args: ParsedArgs, tools: string[]): { tool: string; args: unknown }[] {
  const raw = args.flags.args;
  const values = Array.isArray(raw) ? raw : typeof raw === 'string' ? [raw] : [];
  if (values.length > tools.length)
    throw new UsageError(
      `${values.length} --args for ${tools.length} --tool: the n-th --args belongs to the n-th --tool`,
    );
  return tools.map((tool, i) => {
    const text = values[i] ?? '{}';
    const parsed = jsonFlag({ positionals: [], flags: { args: text } }, 'args');
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
      throw new UsageError(`--args for ${tool} must be a JSON object, got ${text}`);
    return { tool, args: parsed };
  });
}

async function readRequest(file: string): Promise<Record<string, unknown>> {
  const path = resolve(file);
  const text = await readFile(path, 'utf8').catch((err: NodeJS.ErrnoException) => {
    throw new UsageError(`cannot read ${path} (${err.code ?? err.message}): check the path`);
  });
  const yaml = ['.yaml', '.yml'].includes(extname(path).toLowerCase());
  let value: unknown;
  try {
    value = yaml ? (await import('yaml')).parse(text) : JSON.parse(text);
  } catch (err) {
    throw new UsageError(`${path} is not valid ${yaml ? 'YAML' : 'JSON'}: ${(err as Error).message}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new UsageError(`${path} must hold one run request object ({ agent: { kind, steps }, ... })`);
  return value as Record<string, unknown>;
}

function keyValue(pair: string): [string, string] {
  const at = pair.indexOf('=');
  if (at <= 0) throw new UsageError(`--meta takes KEY=VALUE, got "${pair}"`);
  return [pair.slice(0, at), pair.slice(at + 1)];
}

export const run: CommandModule = {
  name: 'run',
  usage:
    'dura run <request.json|request.yaml> [--id RUN_ID] [--detach]\n' +
    'dura run --tool T [--args JSON] [--tool T [--args JSON]]... [--input JSON]',
  flags: {
    tool: {
      type: 'string',
      multiple: true,
      value: 'T',
      description: 'a step of a scripted plan: the tool to call',
    },
    args: {
      type: 'string',
      multiple: true,
      value: 'JSON',
      description: 'arguments of the n-th --tool, in order (default {})',
    },
    input: { type: 'string', value: 'JSON', description: "the run's input" },
    id: {
      type: 'string',
      value: 'RUN_ID',
      description: 'run id (the submit idempotency key; default: generated)',
    },
    tag: { type: 'string', multiple: true, value: 'TAG', description: 'a tag for the run' },
    meta: { type: 'string', multiple: true, value: 'KEY=VALUE', description: 'a metadata entry for the run' },
    detach: { type: 'boolean', description: 'submit, print the run id and exit without following' },
  },
  positionals: { min: 0, max: 1 },
  help: `The request file is a run request (see proto/ and examples/deploy-pipeline.json) in JSON, or in YAML
when it ends in .yaml or .yml; "v" may be left out. Submitting a run id that was already submitted starts
nothing new: with the same request dura follows the existing run; with a different one it refuses with
run_id_conflict (exit 2) and starts nothing.

Exit code: the run's outcome (0 completed, 1 failed, cancelled or rejected); with --detach, 0 once submitted.

Examples:
  dura run examples/deploy-pipeline.json
  dura run --tool echo --args '{"hello":"world"}' --tool demo.fail --json`,
  async run(args, ctx) {
    const request = await buildRequest(args);
    await checkRunIdReuse(ctx.client, request);
    const submitted = await ctx.client.submitRun(request as unknown as SubmitRunInput);
    if (booleanFlag(args, 'detach')) {
      if (ctx.json) ctx.out.json(submitted);
      else ctx.out.line(submitted.runId);
      return EXIT.ok;
    }
    ctx.out.note(
      submitted.duplicate
        ? `run ${submitted.runId} was already submitted; following it`
        : `submitted ${submitted.runId}; its events, live:`,
    );
    // A run already submitted has history; a wait in it that was resolved needs no next step.
    const historyUntil = submitted.duplicate ? await ctx.client.lastSeq(submitted.runId) : 0;
    return followRun(ctx, submitted.runId, 1, { historyUntil });
  },
};
