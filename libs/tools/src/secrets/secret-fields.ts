import { isSecretEnvelope, type JsonValue } from '@dura/contracts';

// The envelope is a wire contract (the log holds it), so it lives in @dura/contracts; re-exported here.
export {
  SECRET_TAG,
  SecretEnvelopeSchema,
  isSecretEnvelope,
  secretPathIssue,
  type SecretEnvelope,
} from '@dura/contracts';

/**
 * Fields of a tool's arguments and result that hold secrets, as dot paths into the JSON value:
 * `"card.number"`, `"headers.authorization"`, `"items.*.token"` (`*`: every key of an object or element
 * of an array). Their values are sealed before they reach the log and opened only by the gateway, right
 * before the tool runs.
 */
export interface SecretFields {
  args?: readonly string[];
  result?: readonly string[];
}

/**
 * Applies `fn` to every value found at one of `paths` (missing fields are skipped; nothing is created),
 * returning a new value; `fn` gets the concrete path (`items.0.token`). A value already sealed is passed
 * to `fn` as it is; a path never descends into a sealed value.
 */
export function mapSecretFields(
  value: JsonValue,
  paths: readonly string[],
  fn: (found: JsonValue, path: string) => JsonValue,
): JsonValue {
  let result = value;
  for (const path of paths) result = mapAt(result, path.split('.'), [], fn);
  return result;
}

/** Every value at one of `paths`, with its concrete path. */
export function secretValuesAt(
  value: JsonValue,
  paths: readonly string[],
): { path: string; value: JsonValue }[] {
  const found: { path: string; value: JsonValue }[] = [];
  mapSecretFields(value, paths, (item, path) => {
    found.push({ path, value: item });
    return item;
  });
  return found;
}

function mapAt(
  value: JsonValue,
  segments: readonly string[],
  at: readonly string[],
  fn: (found: JsonValue, path: string) => JsonValue,
): JsonValue {
  const [head, ...rest] = segments;
  if (head === undefined) return fn(value, at.join('.'));
  if (value === null || typeof value !== 'object' || isSecretEnvelope(value)) return value;
  // Unchanged parts keep their identity, so a caller can tell whether anything was replaced.
  if (Array.isArray(value)) {
    if (head !== '*' && !/^\d+$/.test(head)) return value;
    const mapped = value.map((item, index) =>
      head === '*' || Number(head) === index ? mapAt(item, rest, [...at, String(index)], fn) : item,
    );
    return mapped.some((item, index) => item !== value[index]) ? mapped : value;
  }
  const keys = head === '*' ? Object.keys(value) : Object.hasOwn(value, head) ? [head] : [];
  let copy: Record<string, JsonValue> | undefined;
  for (const key of keys) {
    const item = value[key] as JsonValue;
    const mapped = mapAt(item, rest, [...at, key], fn);
    if (mapped !== item) (copy ??= { ...value })[key] = mapped;
  }
  return copy ?? value;
}
