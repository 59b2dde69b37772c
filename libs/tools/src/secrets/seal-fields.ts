import { DuraError, type JsonValue } from '@dura/contracts';
import { isSecretEnvelope, mapSecretFields } from './secret-fields';
import type { SecretsBox } from './secrets-box';

/** A value at a secret field arrived and no key is configured: refused rather than stored in clear. */
export class SecretsKeyMissing extends DuraError {
  constructor(what: string, path: string) {
    super(
      'secrets_key_missing',
      `${what} has a value at secret field "${path}" but no secrets key is configured; set DURA_SECRETS_KEY=<kid>:<base64 of 32 bytes> on the planner and every gateway (it is refused rather than stored in clear)`,
    );
  }
}

/**
 * Seals every plain value at `paths` (values already sealed stay as they are, and so do values `keep`
 * says to leave, such as plan references that resolve later). Throws SecretsKeyMissing without a box.
 */
export function sealSecretFields(
  value: JsonValue,
  paths: readonly string[],
  box: SecretsBox | undefined,
  scope: string,
  what: string,
  keep: (found: JsonValue) => boolean = () => false,
): JsonValue {
  return mapSecretFields(value, paths, (found, path) => {
    if (isSecretEnvelope(found) || keep(found)) return found;
    if (!box) throw new SecretsKeyMissing(what, path);
    return box.seal(found, scope, path);
  });
}

/** Opens every sealed value at `paths`; plain values pass. Envelopes elsewhere stay sealed. */
export function openSecretFields(
  value: JsonValue,
  paths: readonly string[],
  box: SecretsBox | undefined,
  scope: string,
  what: string,
): JsonValue {
  return mapSecretFields(value, paths, (found, path) => {
    if (!isSecretEnvelope(found)) return found;
    if (!box) throw new SecretsKeyMissing(what, path);
    return box.open(found, scope);
  });
}
