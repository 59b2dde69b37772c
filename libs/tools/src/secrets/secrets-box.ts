import { createCipheriv, createDecipheriv, createHmac, hkdfSync } from 'node:crypto';
import { CONFIG_ERROR_CODE, DuraError, type JsonValue } from '@dura/contracts';
import { canonicalJson } from '@dura/core';
import { SECRET_TAG, type SecretEnvelope } from './secret-fields';

/** A secrets key is `<kid>:<base64 of 32 random bytes>`, e.g. `k1:$(openssl rand -base64 32)`. */
export const SECRETS_KEY_FORMAT = '<kid>:<base64 of 32 bytes>';

/** Seals and opens secret values with AES-256-GCM. Sealing always uses the current key. */
export interface SecretsBox {
  /** Id of the key new secrets are sealed with. */
  readonly kid: string;
  /**
   * Seals `value` for `scope` (the run's correlation id: a sealed value opens only in the run tree that
   * sealed it). Deterministic: the same value at the same path of the same scope under the same key gives
   * the same envelope, so a re-decided step gets the same idempotency key and a redelivered request is
   * recognised; equal values elsewhere give unrelated envelopes.
   */
  seal(value: JsonValue, scope: string, path: string): SecretEnvelope;
  /** Opens an envelope sealed for `scope`; a `secret_unreadable` DuraError (not retryable) otherwise. */
  open(envelope: SecretEnvelope, scope: string): JsonValue;
}

interface Key {
  enc: Buffer;
  iv: Buffer;
}

/** A missing or malformed secrets key: a configuration error, so a service stops at start with exit code 2. */
export class SecretsConfigError extends DuraError {
  constructor(message: string) {
    super(CONFIG_ERROR_CODE, message);
  }
}

function parseKey(text: string, variable: string): [string, Key] {
  const at = text.indexOf(':');
  const kid = text.slice(0, at).trim();
  const raw = Buffer.from(text.slice(at + 1).trim(), 'base64');
  if (at <= 0 || !/^[A-Za-z0-9._-]+$/.test(kid) || raw.length !== 32)
    throw new SecretsConfigError(
      `${variable} must be ${SECRETS_KEY_FORMAT} (e.g. k1:$(openssl rand -base64 32)); got a value with ${at <= 0 ? 'no key id' : `${raw.length} key bytes`}`,
    );
  // Separate subkeys, so the key that derives IVs never encrypts and vice versa.
  const derive = (info: string) => Buffer.from(hkdfSync('sha256', raw, Buffer.alloc(0), info, 32));
  return [kid, { enc: derive('dura-secret/enc/v1'), iv: derive('dura-secret/iv/v1') }];
}

/**
 * The box for a deployment's keys: `current` seals and opens, each of `previous` (comma-separated) only
 * opens — rotate by making the old current key a previous one. Undefined when no key is configured.
 */
export function createSecretsBox(current?: string, previous?: string): SecretsBox | undefined {
  if (current === undefined || current.trim() === '') return undefined;
  const [kid, key] = parseKey(current, 'DURA_SECRETS_KEY');
  const keys = new Map<string, Key>([[kid, key]]);
  for (const text of (previous ?? '').split(',').filter((part) => part.trim() !== '')) {
    const [oldKid, oldKey] = parseKey(text, 'DURA_SECRETS_PREVIOUS_KEYS');
    if (!keys.has(oldKid)) keys.set(oldKid, oldKey);
  }
  const aad = (keyId: string, scope: string) => Buffer.from(`dura-secret/v1\0${keyId}\0${scope}`, 'utf8');

  return {
    kid,
    seal(value, scope, path) {
      const plain = Buffer.from(canonicalJson(value), 'utf8');
      // A synthetic IV (as in SIV): unique per distinct (scope, path, value), so the GCM nonce never repeats
      // for two different plaintexts, and sealing is deterministic.
      const iv = createHmac('sha256', key.iv)
        .update(`${scope}\0${path}\0`)
        .update(plain)
        .digest()
        .subarray(0, 12);
      const cipher = createCipheriv('aes-256-gcm', key.enc, iv);
      cipher.setAAD(aad(kid, scope));
      const ct = Buffer.concat([cipher.update(plain), cipher.final()]);
      return {
        [SECRET_TAG]: {
          kid,
          iv: iv.toString('base64'),
          ct: ct.toString('base64'),
          tag: cipher.getAuthTag().toString('base64'),
        },
      };
    },
    open(envelope, scope) {
      const sealed = envelope[SECRET_TAG];
      const opener = keys.get(sealed.kid);
      if (!opener)
        throw new DuraError(
          'secret_unreadable',
          `a secret was sealed with key "${sealed.kid}", which this service does not have; add it to DURA_SECRETS_PREVIOUS_KEYS (keys here: ${[...keys.keys()].join(', ')})`,
        );
      try {
        const decipher = createDecipheriv('aes-256-gcm', opener.enc, Buffer.from(sealed.iv, 'base64'));
        decipher.setAAD(aad(sealed.kid, scope));
        decipher.setAuthTag(Buffer.from(sealed.tag, 'base64'));
        const plain = Buffer.concat([decipher.update(Buffer.from(sealed.ct, 'base64')), decipher.final()]);
        return JSON.parse(plain.toString('utf8')) as JsonValue;
      } catch (err) {
        throw new DuraError(
          'secret_unreadable',
          `a secret sealed with key "${sealed.kid}" does not open for run tree ${scope}: it was sealed for another run, altered, or the key changed under the same id`,
          { cause: err },
        );
      }
    },
  };
}

/**
 * The box a service runs with: a deployment whose tools declare secret fields refuses to start without a
 * key, rather than run and refuse each such call later.
 */
export function secretsBoxFor(
  service: string,
  toolsWithSecrets: readonly string[],
  current?: string,
  previous?: string,
): SecretsBox | undefined {
  const box = createSecretsBox(current, previous);
  if (!box && toolsWithSecrets.length > 0)
    throw new SecretsConfigError(
      `${service}: tools ${toolsWithSecrets.join(', ')} declare secret fields but DURA_SECRETS_KEY is not set; set it to ${SECRETS_KEY_FORMAT} (the same on the planner and every gateway)`,
    );
  return box;
}
