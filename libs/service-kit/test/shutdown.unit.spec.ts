import { describe, expect, it } from 'vitest';
import {
  DEFAULT_SHUTDOWN_GRACE_MS,
  drainDeadline,
  shutdownHandler,
  type ShutdownPorts,
  type StopOptions,
} from '../src/main-runner';

function recordingPorts(start = 1_000_000) {
  const exits: number[] = [];
  const lines: string[] = [];
  let exited!: (code: number) => void;
  const exitedOnce = new Promise<number>((resolve) => (exited = resolve));
  const ports: ShutdownPorts = {
    exit: (code) => {
      exits.push(code);
      exited(code);
    },
    write: (text) => lines.push(text.trimEnd()),
    now: () => start,
  };
  return { ports, exits, lines, exitedOnce };
}

describe('drainDeadline', () => {
  it('keeps a quarter of the grace period, at most 5 s, for flushing (first half) and closing', () => {
    expect(drainDeadline(0, DEFAULT_SHUTDOWN_GRACE_MS)).toEqual({ deadline: 20_000, flushBy: 22_500 });
    expect(drainDeadline(0, 60_000)).toEqual({ deadline: 55_000, flushBy: 57_500 });
    expect(drainDeadline(1_000, 2_000)).toEqual({ deadline: 2_500, flushBy: 2_750 });
  });
});

describe('shutdownHandler', () => {
  it('drains once on the first signal: stop gets the deadline, then exit 0, each phase written', async () => {
    const { ports, exits, lines, exitedOnce } = recordingPorts();
    const stops: (StopOptions | undefined)[] = [];
    const stop = (drain?: StopOptions) => {
      stops.push(drain);
      return Promise.resolve();
    };
    const handle = shutdownHandler('svc', { graceMs: 2_000, stop }, ports);

    handle('SIGTERM');

    expect(await exitedOnce).toBe(0);
    expect(exits).toEqual([0]);
    expect(stops).toEqual([{ deadline: 1_000_000 + 1_500, flushBy: 1_000_000 + 1_750 }]);
    expect(lines).toEqual([
      'svc: SIGTERM received, draining (in-flight work has 1500 ms, the process 2000 ms)',
      'svc: drained in 0 ms',
    ]);
  });

  it('uses the default grace period when the service names none', async () => {
    const { ports, exitedOnce } = recordingPorts(0);
    const stops: (StopOptions | undefined)[] = [];
    const stop = (drain?: StopOptions) => {
      stops.push(drain);
      return Promise.resolve();
    };
    shutdownHandler('svc', { stop }, ports)('SIGINT');
    await exitedOnce;
    expect(stops).toEqual([drainDeadline(0, DEFAULT_SHUTDOWN_GRACE_MS)]);
  });

  it('exits 1 when the stop outlasts the grace period', async () => {
    const { ports, exits, lines, exitedOnce } = recordingPorts();
    const began = Date.now();
    shutdownHandler(
      'svc',
      { graceMs: 150, stop: () => new Promise<void>(() => undefined) },
      ports,
    )('SIGTERM');

    expect(await exitedOnce).toBe(1);
    expect(Date.now() - began).toBeGreaterThanOrEqual(140);
    expect(exits).toEqual([1]);
    expect(lines.at(-1)).toMatch(/not stopped within the 150 ms grace period \(SHUTDOWN_GRACE_MS\)/);
  });

  it('exits 1 with the reason when the stop fails', async () => {
    const { ports, lines, exitedOnce } = recordingPorts();
    shutdownHandler('svc', { stop: () => Promise.reject(new Error('database gone')) }, ports)('SIGTERM');
    expect(await exitedOnce).toBe(1);
    expect(lines.at(-1)).toBe('svc: stop failed: database gone');
  });

  it('exits at once on a second signal, without waiting for the drain', () => {
    const { ports, exits, lines } = recordingPorts();
    let stops = 0;
    const handle = shutdownHandler(
      'svc',
      {
        graceMs: 60_000,
        stop: () => {
          stops += 1;
          return new Promise<void>(() => undefined);
        },
      },
      ports,
    );

    handle('SIGTERM');
    handle('SIGINT');

    expect(stops).toBe(1);
    expect(exits).toEqual([1]);
    expect(lines.at(-1)).toBe('svc: SIGINT received again; exiting now without finishing the drain');
  });
});
