import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  createSecretsBox,
  isSecretEnvelope,
  openSecretFields,
  sealSecretFields,
  SecretsKeyMissing,
} from '../src';

const key = (kid: string) => `${kid}:${randomBytes(32).toString('base64')}`;

describe('secret fields', () => {
  const box = createSecretsBox(key('k1'))!;
  const args = { amount: 5, card: { token: 'tok_123456' }, items: [{ pin: '1111' }, { pin: '2222' }] };

  it('seals only the marked fields, deterministically, and opens them back for the same run tree', () => {
    const sealed = sealSecretFields(args, ['card.token', 'items.*.pin'], box, 'run-1', 'test') as typeof args;
    expect(sealed.amount).toBe(5);
    expect(isSecretEnvelope(sealed.card.token)).toBe(true);
    expect(JSON.stringify(sealed)).not.toContain('tok_123456');
    expect(JSON.stringify(sealed)).not.toContain('1111');
    expect(sealSecretFields(args, ['card.token', 'items.*.pin'], box, 'run-1', 'test')).toEqual(sealed);
    expect(openSecretFields(sealed, ['card.token', 'items.*.pin'], box, 'run-1', 'test')).toEqual(args);
  });

  it('refuses to open a value sealed for another run, or without the key that sealed it', () => {
    const sealed = sealSecretFields(args, ['card.token'], box, 'run-1', 'test');
    expect(() => openSecretFields(sealed, ['card.token'], box, 'run-2', 'test')).toThrow(/does not open/);
    expect(() =>
      openSecretFields(sealed, ['card.token'], createSecretsBox(key('k2')), 'run-1', 'test'),
    ).toThrow(/key "k1"/);
  });

  it('opens with a previous key after rotation', () => {
    const old = key('k1');
    const sealed = sealSecretFields(args, ['card.token'], createSecretsBox(old), 'run-1', 'test');
    expect(
      openSecretFields(sealed, ['card.token'], createSecretsBox(key('k2'), old), 'run-1', 'test'),
    ).toEqual(args);
  });

  it('refuses a secret value when no key is configured, and rejects malformed keys without echoing them', () => {
    expect(() => sealSecretFields(args, ['card.token'], undefined, 'run-1', 'plan step 0')).toThrow(
      SecretsKeyMissing,
    );
    expect(() => createSecretsBox('k1:c2hvcnQ=')).toThrow(/5 key bytes/);
    expect(() => createSecretsBox('c2hvcnQ=')).toThrow(/no key id/);
  });
});
