import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { DuraError } from '@dura/contracts';
import { CONFIG_EXIT_CODE, ConfigError, configFields, loadConfig } from '../src/index';

const schema = z.object({
  NATS_URL: configFields.natsUrl,
  DATABASE_URL: configFields.databaseUrl.optional(),
  HTTP_PORT: configFields.port.default(8080),
  LOG_LEVEL: configFields.logLevel,
  LOG_FORMAT: configFields.logFormat,
  REPLICAS: configFields.replicas,
});

function configError(env: Record<string, string | undefined>): ConfigError {
  try {
    loadConfig('planner', schema, env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error(`expected ${JSON.stringify(env)} to be refused`);
}

describe('loadConfig', () => {
  it('reads the variables named by the schema, coerces them and applies defaults', () => {
    const config = loadConfig('planner', schema, {
      NATS_URL: 'nats://127.0.0.1:4222',
      REPLICAS: '3',
      UNRELATED: 'ignored',
    });
    expect(config).toEqual({
      NATS_URL: 'nats://127.0.0.1:4222',
      HTTP_PORT: 8080,
      LOG_LEVEL: 'info',
      LOG_FORMAT: 'json',
      REPLICAS: 3,
    });
  });

  it('treats an empty variable as unset, so the default applies', () => {
    const config = loadConfig('planner', schema, {
      NATS_URL: 'nats://n:4222',
      HTTP_PORT: '',
      LOG_LEVEL: '',
      DATABASE_URL: '',
    });
    expect(config).toMatchObject({ HTTP_PORT: 8080, LOG_LEVEL: 'info' });
    expect(config.DATABASE_URL).toBeUndefined();
  });

  it('names a missing variable and says it is not set', () => {
    const error = configError({});
    expect(error.problems).toHaveLength(1);
    expect(error.problems[0]).toMatch(/^NATS_URL: .* \(not set\)$/);
    expect(error.message).toMatch(/^planner: invalid configuration\n {2}- NATS_URL: /);
  });

  it('says "(not set)" for a required variable set to the empty string, as it is treated as unset', () => {
    expect(configError({ NATS_URL: '' }).problems).toEqual([
      expect.stringMatching(/^NATS_URL: .* \(not set\)$/),
    ]);
  });

  it('names each invalid variable with the reason and the value it got', () => {
    const error = configError({
      NATS_URL: 'http://localhost:4222',
      HTTP_PORT: 'eighty',
      LOG_LEVEL: 'verbose',
      REPLICAS: '9',
    });
    expect(error.problems).toEqual([
      'NATS_URL: must be a NATS URL such as nats://127.0.0.1:4222 (got "http://localhost:4222")',
      expect.stringMatching(/^HTTP_PORT: .* \(got "eighty"\)$/),
      expect.stringMatching(/^LOG_LEVEL: .*"debug".* \(got "verbose"\)$/),
      expect.stringMatching(/^REPLICAS: .*5.* \(got "9"\)$/),
    ]);
    for (const problem of error.problems) expect(error.message).toContain(problem);
  });

  it('throws a terminal DuraError that services turn into exit code 2', () => {
    const error = configError({ NATS_URL: 'x' });
    expect(error).toBeInstanceOf(DuraError);
    expect(error).toMatchObject({ code: 'config_error', retryable: false, name: 'ConfigError' });
    expect(CONFIG_EXIT_CODE).toBe(2);
  });

  it('reads process.env when no environment is passed', () => {
    const key = 'DURA_TEST_CONFIG_URL';
    process.env[key] = 'nats://from-env:4222';
    try {
      expect(loadConfig('x', z.object({ [key]: configFields.natsUrl }))).toEqual({
        [key]: 'nats://from-env:4222',
      });
    } finally {
      delete process.env[key];
    }
  });
});
