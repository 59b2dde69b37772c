/**
 * Text every store can hold. JSON may carry `\u0000` and lone surrogates (`\ud800`), but they are not
 * Unicode text: Postgres refuses them in `text` and `jsonb`, and UTF-8 cannot encode a lone surrogate. A
 * message holding one is refused at the intake, before it reaches the log.
 */
// eslint-disable-next-line no-control-regex -- U+0000 is one of the characters looked for.
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** The path of the first string or key in `value` holding U+0000 or a lone surrogate, or undefined. */
export function unstorableTextPath(value: unknown): string | undefined {
  // An explicit stack: a hostile message may nest deeper than the call stack goes.
  const stack: [unknown, string][] = [[value, '(root)']];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const [node, path] = item;
    if (typeof node === 'string') {
      if (UNSTORABLE.test(node)) return path;
    } else if (Array.isArray(node)) {
      node.forEach((child, i) => stack.push([child, `${path}.${i}`]));
    } else if (node !== null && typeof node === 'object') {
      for (const [key, child] of Object.entries(node)) {
        if (UNSTORABLE.test(key)) return `${path} (a key)`;
        stack.push([child, path === '(root)' ? key : `${path}.${key}`]);
      }
    }
  }
  return undefined;
}

/** `text` with U+0000 and lone surrogates replaced, for an error message that must itself be stored. */
export function storableText(text: string): string {
  return text.replace(new RegExp(UNSTORABLE.source, 'g'), '\ufffd');
}

/** The issue a refusal names: where the text is and why it cannot be stored. */
export function unstorableTextIssue(path: string): string {
  return `${path}: holds U+0000 or a lone UTF-16 surrogate, which cannot be stored; remove or escape it`;
}

/** Characters of a reason (an error message, an issue) quoted from a message; longer ones are cut. */
export const MAX_REASON_LENGTH = 2_000;

/**
 * `text` as a reason every store can keep and every reader can show: at most `max` characters (marked when
 * cut, never splitting a character in two), U+0000 and lone surrogates replaced.
 */
export function storableReason(text: string, max: number = MAX_REASON_LENGTH): string {
  const clipped =
    text.length <= max ? text : `${text.slice(0, max)}... (${text.length - max} more characters)`;
  return storableText(clipped);
}
