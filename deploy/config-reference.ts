// The environment-variable reference of docs/configuration.md, generated from the services' zod config schemas
// (services/*/src/config.ts): the schemas are the one source of truth. `npm run config:docs` rewrites the table
// between the page's config markers; without `--write` this prints the table.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { z } from 'zod';
import { PlannerConfigSchema } from '@dura/planner';
import { ProjectorConfigSchema } from '@dura/projector';
import { GatewayConfigSchema } from '@dura/tool-gateway';
import { WorkerConfigSchema } from '@dura/worker';

/** Each service's config schema, in the order the reference lists them. */
export const CONFIG_SCHEMAS: Record<string, z.ZodObject> = {
  planner: PlannerConfigSchema,
  'tool-gateway': GatewayConfigSchema,
  worker: WorkerConfigSchema,
  projector: ProjectorConfigSchema,
};

export const CONFIG_START = '<!-- config:start -->';
export const CONFIG_END = '<!-- config:end -->';

/** The OpenTelemetry SDK's standard variables: read by every service, not part of any schema. */
const OTEL_ROW = {
  variable: '`OTEL_*`',
  description:
    'The OpenTelemetry SDK variables (see Observability, docs/observability.md); unset: no export.',
};

/** How one variable behaves when unset: required, optional (no value), or its default. */
export type Presence = { kind: 'required' } | { kind: 'optional' } | { kind: 'default'; value: unknown };

/** What the schema does with an unset variable, learnt by parsing `undefined` as `loadConfig` passes it. */
export function presenceOf(field: z.ZodType): Presence {
  const parsed = field.safeParse(undefined);
  if (!parsed.success) return { kind: 'required' };
  return parsed.data === undefined ? { kind: 'optional' } : { kind: 'default', value: parsed.data };
}

/** A schema's fields by variable name. */
const fieldsOf = (schema: z.ZodObject): Record<string, z.ZodType> => schema.shape;

/** The variables a schema cannot start without. */
export function requiredVariables(schema: z.ZodObject): string[] {
  return Object.entries(fieldsOf(schema))
    .filter(([, field]) => presenceOf(field).kind === 'required')
    .map(([name]) => name);
}

function describePresence(presence: Presence): string {
  if (presence.kind === 'required') return '**required**';
  if (presence.kind === 'optional') return '—';
  const { value } = presence;
  return typeof value === 'string' ? `\`${value}\`` : JSON.stringify(value);
}

/** Joins per-service texts: one text when all services agree, else each prefixed by its services. */
function perService(texts: [service: string, text: string][]): string {
  const byText = new Map<string, string[]>();
  for (const [service, text] of texts) byText.set(text, [...(byText.get(text) ?? []), service]);
  if (byText.size === 1) return [...byText.keys()][0]!;
  return [...byText].map(([text, services]) => `${services.join(', ')}: ${text}`).join('; ');
}

const cell = (text: string): string => text.replaceAll('|', '\\|');

/** Prettier's layout of a markdown table: every column padded to its widest cell. */
function markdownTable(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(3, h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

/** The reference table: one row per variable, those every service reads first, then the OTEL_* note. */
export function configReference(schemas: Record<string, z.ZodObject> = CONFIG_SCHEMAS): string {
  const services = Object.keys(schemas);
  const readers = new Map<string, string[]>();
  for (const service of services)
    for (const name of Object.keys(fieldsOf(schemas[service]!)))
      readers.set(name, [...(readers.get(name) ?? []), service]);
  const names = [...readers.keys()].sort(
    (a, b) =>
      Number(readers.get(b)!.length === services.length) - Number(readers.get(a)!.length === services.length),
  );
  const rows = names.map((name) => {
    const readBy = readers.get(name)!;
    const fields = readBy.map((service) => [service, fieldsOf(schemas[service]!)[name]!] as const);
    const missing = fields.filter(([, field]) => !field.description).map(([service]) => service);
    if (missing.length > 0)
      throw new Error(
        `${name} has no description in the config schema of ${missing.join(', ')}: add .describe('...') to it in services/<service>/src/config.ts`,
      );
    return [
      `\`${name}\``,
      readBy.length === services.length ? 'all' : readBy.join(', '),
      perService(fields.map(([service, field]) => [service, describePresence(presenceOf(field))])),
      perService(fields.map(([service, field]) => [service, field.description!])),
    ].map(cell);
  });
  rows.push([OTEL_ROW.variable, 'all', '—', OTEL_ROW.description]);
  return markdownTable(['variable', 'services', 'default', 'description'], rows);
}

/** The text between the config markers of `readme`, trimmed; throws when the markers are missing. */
export function readmeConfigBlock(readme: string): string {
  const start = readme.indexOf(CONFIG_START);
  const end = readme.indexOf(CONFIG_END);
  if (start < 0 || end < start)
    throw new Error(`docs/configuration.md has no ${CONFIG_START} … ${CONFIG_END} block; add the markers`);
  return readme.slice(start + CONFIG_START.length, end).trim();
}

/** `readme` with the config block replaced by `table`. */
export function replaceConfigBlock(readme: string, table: string): string {
  readmeConfigBlock(readme);
  const start = readme.indexOf(CONFIG_START) + CONFIG_START.length;
  return `${readme.slice(0, start)}\n\n${table}\n\n${readme.slice(readme.indexOf(CONFIG_END))}`;
}

/** The page the reference lives on. */
export const CONFIG_DOC_PATH = fileURLToPath(new URL('../docs/configuration.md', import.meta.url));

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const table = configReference();
  if (process.argv.includes('--write')) {
    const readme = readFileSync(CONFIG_DOC_PATH, 'utf8');
    const updated = replaceConfigBlock(readme, table);
    if (updated !== readme) writeFileSync(CONFIG_DOC_PATH, updated);
    process.stdout.write(`${updated === readme ? 'unchanged' : 'updated'}: ${CONFIG_DOC_PATH}\n`);
  } else {
    process.stdout.write(`${table}\n`);
  }
}
