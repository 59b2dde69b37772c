import * as z from 'zod';
import type { JsonValue } from './ids';
import { isSecretEnvelope } from './secret-envelope';
import type { ConcurrencyKey } from './run-request';

/**
 * An agent's concurrency key, as its definition declares it: `key` is a template, literal text with
 * `{{input.<path>}}` placeholders that the run's input fills in (`"customer:{{input.customerId}}"`). A path is
 * field names and list indices separated by dots (`input.order.lines.0.sku`); `{{input}}` is the whole input.
 * Nothing is evaluated: a placeholder only reads a value out of the input.
 */
export interface ConcurrencyKeyTemplate {
  key: string;
  limit: number;
}

const PLACEHOLDER = /\{\{\s*([^{}]*?)\s*\}\}/g;
const PATH = /^input(\.[A-Za-z0-9_-]+)*$/;

/** What is wrong with a key template, or undefined when it is well formed. */
export function keyTemplateIssue(template: string): string | undefined {
  for (const [, path] of template.matchAll(PLACEHOLDER))
    if (!PATH.test(path ?? ''))
      return `placeholder {{${path ?? ''}}} in concurrency key "${template}" is not a path into the input; write {{input.field}} or {{input.a.b.0}}`;
  const rest = template.replace(PLACEHOLDER, '');
  if (rest.includes('{{') || rest.includes('}}'))
    return `concurrency key "${template}" has an unclosed or stray "{{" / "}}"; placeholders are {{input.field}}`;
  return undefined;
}

/** A concurrency key an agent definition declares: a template over the input (`keyTemplateIssue`), and a limit. */
export const ConcurrencyKeyTemplateSchema = z.strictObject({
  key: z
    .string()
    .min(1)
    .max(200)
    .superRefine((key, ctx) => {
      const issue = keyTemplateIssue(key);
      if (issue) ctx.addIssue({ code: 'custom', message: issue });
    }),
  limit: z.number().int().min(1).max(10_000),
});

/** The input paths a key template reads (`input.customerId`), in order. */
export function keyTemplatePaths(template: string): string[] {
  return [...template.matchAll(PLACEHOLDER)].map(([, path]) => path ?? '');
}

/**
 * What is wrong with a key template reading an input field declared secret (`secretPaths`, as an agent's
 * `secrets.input` lists them), or undefined: a key is shown in waits, metrics and the run's state.
 */
export function keyTemplateSecretIssue(template: string, secretPaths: readonly string[]): string | undefined {
  for (const path of keyTemplatePaths(template)) {
    const fields = path.split('.').slice(1);
    for (const secret of secretPaths) {
      const parts = secret.split('.');
      const shared = Math.min(fields.length, parts.length);
      if (parts.slice(0, shared).every((part, i) => part === '*' || part === fields[i]))
        return `concurrency key "${template}" reads ${path}, which is declared secret (${secret}); a key is shown in waits and metrics, so key runs by a field that is not secret`;
    }
  }
  return undefined;
}

/** Why a key template cannot be filled from an input: the path, and what it found there. */
export interface UnresolvedKey {
  path: string;
  problem: string;
}

/**
 * The concurrency key of a run whose agent declares `template`, filled from its `input`: a string as it is,
 * a number or a boolean as its JSON text. A path that is missing, null, empty, a list, an object or a sealed
 * secret is not a key: it is returned as unresolved (a run without its key must not share one with others).
 */
export function resolveKeyTemplate(
  template: ConcurrencyKeyTemplate,
  input: JsonValue | undefined,
): { ok: true; key: ConcurrencyKey } | ({ ok: false } & UnresolvedKey) {
  let unresolved: UnresolvedKey | undefined;
  const key = template.key.replace(PLACEHOLDER, (_match, path: string) => {
    if (unresolved) return '';
    const text = keyText(valueAt(input, path));
    if (typeof text === 'string') return text;
    unresolved = { path, problem: text.problem };
    return '';
  });
  if (unresolved) return { ok: false, ...unresolved };
  if (key.length > 200)
    return {
      ok: false,
      path: template.key,
      problem: `makes a key of ${key.length} characters (at most 200)`,
    };
  return { ok: true, key: { key, limit: template.limit } };
}

function valueAt(input: JsonValue | undefined, path: string): JsonValue | undefined {
  let value: JsonValue | undefined = input;
  for (const segment of path.split('.').slice(1)) {
    if (value === null || typeof value !== 'object') return undefined;
    value = Array.isArray(value)
      ? /^\d+$/.test(segment)
        ? value[Number(segment)]
        : undefined
      : Object.hasOwn(value, segment)
        ? value[segment]
        : undefined;
  }
  return value;
}

/** A value as it goes into a key, or why it cannot. */
function keyText(value: JsonValue | undefined): string | { problem: string } {
  if (value === undefined) return { problem: 'is missing' };
  if (value === null) return { problem: 'is null' };
  if (value === '') return { problem: 'is an empty string' };
  if (isSecretEnvelope(value)) return { problem: 'is a sealed secret (a key is shown in waits and metrics)' };
  if (Array.isArray(value)) return { problem: 'is a list, not a string or a number' };
  if (typeof value === 'object') return { problem: 'is an object, not a string or a number' };
  return typeof value === 'string' ? value : JSON.stringify(value);
}
