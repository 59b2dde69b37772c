import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  devStateDir,
  devStateFile,
  DevStateTaken,
  readDevState,
  readDevStates,
  removeDevState,
  writeDevState,
  type DevState,
} from '../src/index';

// The registry lives under the home directory ($HOME, which os.homedir() reads on every call): this file gets
// a home of its own, and gives the process its own back when it is done.
const home = mkdtempSync(join(tmpdir(), 'dura-dev-home-'));
beforeAll(() => {
  vi.stubEnv('HOME', home);
});
const dir = mkdtempSync(join(tmpdir(), 'dura-dev-state-'));
afterAll(() => {
  vi.unstubAllEnvs();
  rmSync(dir, { recursive: true, force: true });
  rmSync(home, { recursive: true, force: true });
});

const state = (pid: number, startedAt = '2026-01-01T00:00:00.000Z', port = 8080): DevState => ({
  v: 1,
  pid,
  natsUrl: `nats://127.0.0.1:${port - 3857}`,
  apiUrl: `http://127.0.0.1:${port}`,
  consoleUrl: `http://127.0.0.1:${port}/ui/`,
  startedAt,
});

describe('the dev stack state file', () => {
  it('is a file of its own per stack in ~/.dura/stacks, unless DURA_DEV_STATE_FILE names one', () => {
    expect(devStateFile({}, 123)).toBe(join(home, '.dura', 'stacks', '123.json'));
    expect(devStateFile({ DURA_DEV_STATE_FILE: '/x/y.json' }, 123)).toBe('/x/y.json');
    expect(devStateFile({ DURA_DEV_STATE_FILE: '' }, 123)).toBe(join(devStateDir(), '123.json'));
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

  it('is removed on stop only by the stack that wrote it', () => {
    const file = join(dir, 'owned.json');
    const env = { DURA_DEV_STATE_FILE: file };
    writeDevState(file, state(process.pid));
    removeDevState(file, process.pid + 1);
    expect(readDevState(env)).toBeDefined();
    removeDevState(file, process.pid);
    expect(readDevState(env)).toBeUndefined();
  });

  it("is never overwritten while it describes another running stack; a dead stack's file is taken over", () => {
    const file = join(dir, 'shared.json');
    const alive = (pid: number) => pid === 1001 || pid === 1002;
    writeDevState(file, state(1001), alive);
    expect(() => writeDevState(file, state(1002), alive)).toThrow(DevStateTaken);
    expect(() => writeDevState(file, state(1002), alive)).toThrow(
      /describes the dev stack of process 1001.*still running/,
    );
    expect(readDevState({ DURA_DEV_STATE_FILE: file }, alive)?.pid).toBe(1001);
    writeDevState(file, state(1002), (pid) => pid === 1002);
    expect(readDevState({ DURA_DEV_STATE_FILE: file }, alive)?.pid).toBe(1002);
  });
});

describe('two dev stacks side by side (the registry)', () => {
  it('each keeps its own file; the CLI talks to the newest, and the other survives the newest stopping', () => {
    const alive = new Set([2001, 2002]);
    const isAlive = (pid: number) => alive.has(pid);
    const first = state(2001, '2026-01-01T00:00:00.000Z', 8080);
    const second = state(2002, '2026-01-01T00:05:00.000Z', 8090);
    writeDevState(devStateFile({}, first.pid), first, isAlive);
    writeDevState(devStateFile({}, second.pid), second, isAlive);
    expect(readDevStates({}, isAlive)).toEqual([second, first]);
    expect(readDevState({}, isAlive)).toEqual(second);

    // The second stops (its exit removes its own file only): the CLI finds the first again.
    removeDevState(devStateFile({}, second.pid), second.pid);
    alive.delete(second.pid);
    expect(readDevState({}, isAlive)).toEqual(first);

    // A stack killed without cleaning up is left out, and its file goes.
    alive.delete(first.pid);
    expect(readDevStates({}, isAlive)).toEqual([]);
    expect(readDevStates({}, () => true)).toEqual([]);
  });
});
