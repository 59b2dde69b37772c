import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { devStateFile, readDevState, removeDevState, writeDevState, type DevState } from '../src/index';

const dir = mkdtempSync(join(tmpdir(), 'dura-dev-state-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const state = (pid: number): DevState => ({
  v: 1,
  pid,
  natsUrl: 'nats://127.0.0.1:4223',
  apiUrl: 'http://127.0.0.1:8080',
  consoleUrl: 'http://127.0.0.1:8080/ui/',
  startedAt: '2026-01-01T00:00:00.000Z',
});

describe('the dev stack state file', () => {
  it('is ~/.dura/dev.json unless DURA_DEV_STATE_FILE names another', () => {
    expect(devStateFile({})).toMatch(/[/\\]\.dura[/\\]dev\.json$/);
    expect(devStateFile({ DURA_DEV_STATE_FILE: '/x/y.json' })).toBe('/x/y.json');
    expect(devStateFile({ DURA_DEV_STATE_FILE: '' })).toMatch(/dev\.json$/);
  });

  it('reads back what the running stack wrote, and nothing once its process is gone', () => {
    const file = join(dir, 'nested', 'dev.json');
    const env = { DURA_DEV_STATE_FILE: file };
    writeDevState(file, state(process.pid));
    expect(readDevState(env)).toEqual(state(process.pid));
    expect(readDevState(env, () => false)).toBeUndefined();
  });

  it('is ignored when missing, unreadable or of another shape', () => {
    const file = join(dir, 'bad.json');
    const env = { DURA_DEV_STATE_FILE: file };
    expect(readDevState(env)).toBeUndefined();
    writeFileSync(file, '{ not json');
    expect(readDevState(env)).toBeUndefined();
    writeFileSync(file, JSON.stringify({ ...state(process.pid), natsUrl: 7 }));
    expect(readDevState(env)).toBeUndefined();
  });

  it('is removed on stop only by the stack that wrote it (a newer stack may have replaced it)', () => {
    const file = join(dir, 'owned.json');
    const env = { DURA_DEV_STATE_FILE: file };
    writeDevState(file, state(process.pid));
    removeDevState(file, process.pid + 1);
    expect(readDevState(env)).toBeDefined();
    removeDevState(file, process.pid);
    expect(readDevState(env)).toBeUndefined();
  });
});
