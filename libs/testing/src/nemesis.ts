// Faults other than a kill, injected into real processes on this machine: a process paused (SIGSTOP) and
// woken (SIGCONT), a process whose wall clock jumps (libfaketime), a filesystem that fills up (a tmpfs with a
// size limit) or stalls (an ext4 image on a loop device, frozen with fsfreeze: every write waits). Each fault
// is undone by its `heal`, and by the end of the test process at the latest.
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { mkdir, mkdtemp, open, rm, stat, statfs, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { onProcessExit } from './exit-hooks';

const run = promisify(execFile);

/**
 * SIGSTOPs `pid` for `ms`, then SIGCONTs it: the process keeps its sockets, timers and leases in memory and
 * wakes up believing no time passed, while the rest of the system saw it silent. False when it was not running.
 */
export async function pauseProcess(pid: number, ms: number): Promise<boolean> {
  try {
    process.kill(pid, 'SIGSTOP');
  } catch {
    return false;
  }
  const forget = onProcessExit(() => resume(pid));
  try {
    await sleep(ms);
  } finally {
    resume(pid);
    forget();
  }
  return true;
}

function resume(pid: number): void {
  try {
    process.kill(pid, 'SIGCONT');
  } catch {
    // It ended meanwhile (a test killed it): nothing to wake.
  }
}

/** libfaketime from Debian's `faketime` package (multi-threaded build: Node runs threads). */
const LIBFAKETIME = [
  '/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1',
  '/usr/lib/aarch64-linux-gnu/faketime/libfaketimeMT.so.1',
  '/usr/lib/faketime/libfaketimeMT.so.1',
];

/** A wall clock a test moves: the processes started with `env` read it; monotonic time is left alone. */
export interface ClockControl {
  /** Environment that puts a process on this clock (LD_PRELOAD of libfaketime and its control file). */
  readonly env: Record<string, string>;
  /** The current offset from the real time, in seconds. */
  offsetSeconds(): number;
  /** Steps the clock to `offsetSeconds` from real time (negative: back); processes see it within ~1 s. */
  set(offsetSeconds: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * A clock for processes started with its `env`. A step is what NTP does to a host whose clock was off: the
 * wall clock (Date.now, new Date) jumps; CLOCK_MONOTONIC, which Node's timers run on, does not
 * (`FAKETIME_DONT_FAKE_MONOTONIC`). The control file is re-read at most once a second.
 */
export async function createClockControl(): Promise<ClockControl> {
  const library = LIBFAKETIME.find((file) => existsSync(file));
  if (!library)
    throw new Error(
      `a clock nemesis needs libfaketime and found none at ${LIBFAKETIME.join(', ')}: ` +
        '`apt-get install faketime` (Debian) installs it',
    );
  const dir = await mkdtemp(join(tmpdir(), 'dura-clock-'));
  const forget = onProcessExit(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'faketime.rc');
  let offset = 0;
  const write = (seconds: number) => writeFile(file, `${seconds >= 0 ? '+' : ''}${seconds}s\n`);
  await write(0);
  return {
    env: {
      LD_PRELOAD: library,
      FAKETIME_TIMESTAMP_FILE: file,
      FAKETIME_CACHE_DURATION: '1',
      FAKETIME_DONT_FAKE_MONOTONIC: '1',
    },
    offsetSeconds: () => offset,
    async set(offsetSeconds) {
      offset = offsetSeconds;
      await write(offsetSeconds);
    },
    async close() {
      forget();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** A directory on a filesystem of its own, of a fixed size, that a test fills and frees. */
export interface LimitedDisk {
  readonly dir: string;
  /** Writes a ballast file until the filesystem is full (leaving `leaveBytes` free); returns bytes written. */
  fill(leaveBytes?: number): Promise<number>;
  /** Removes the ballast. */
  free(): Promise<void>;
  /** Freezes the filesystem: every write to it waits until `resume` (a disk that stopped answering). */
  stall(): Promise<void>;
  /** Thaws what `stall` froze; the waiting writes go through. */
  resume(): Promise<void>;
  /** Frees, unmounts and removes the directory. */
  close(): Promise<void>;
}

/**
 * Mounts a filesystem of `sizeMb` on a fresh directory (needs root, or CAP_SYS_ADMIN) and gives it to `owner`
 * (a user name, for a server that drops privileges, e.g. `postgres`). The directory `data` inside is the one
 * to hand a server; the ballast sits beside it. A tmpfs by default; with `stallable`, an ext4 image on a loop
 * device, which `stall` can freeze.
 */
export async function mountLimitedDisk(
  sizeMb: number,
  owner?: string,
  options: { stallable?: boolean } = {},
): Promise<LimitedDisk> {
  const dir = await mkdtemp(join(tmpdir(), 'dura-disk-'));
  const image = options.stallable ? `${dir}.img` : undefined;
  let frozen = false;
  try {
    if (image) {
      await run('truncate', ['-s', `${sizeMb}M`, image]);
      await run('mkfs.ext4', ['-q', '-F', '-m', '0', image]);
      await run('mount', ['-o', 'loop', image, dir]);
    } else await run('mount', ['-t', 'tmpfs', '-o', `size=${sizeMb}m,mode=0755`, 'tmpfs', dir]);
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    if (image) await rm(image, { force: true });
    throw new Error(
      `a disk nemesis mounts a ${sizeMb} MB ${image ? 'ext4 image on a loop device' : 'tmpfs'} and could not ` +
        `(${(err as Error).message.trim()}); it needs root or CAP_SYS_ADMIN` +
        (image ? ', a free /dev/loop* and mkfs.ext4 (e2fsprogs)' : ''),
    );
  }
  const ballast = join(dir, 'ballast');
  const forget = onProcessExit(() => {
    try {
      // An exit hook is synchronous; a frozen filesystem is thawed first (a writer waiting on it could not
      // even be killed), and a lazy unmount does not block on a server still holding files.
      if (frozen) execFileSync('fsfreeze', ['--unfreeze', dir]);
      execFileSync('umount', ['-l', dir]);
      rmSync(dir, { recursive: true, force: true });
      if (image) rmSync(image, { force: true });
    } catch {
      // Nothing more can be done at exit.
    }
  });
  const data = join(dir, 'data');
  await mkdir(data);
  if (owner) await run('chown', ['-R', `${owner}:${owner}`, dir]);
  return {
    dir: data,
    async fill(leaveBytes = 0) {
      // The blocks are reserved (`fallocate`), not written: a gigabyte of ballast written through a loop
      // device is a gigabyte of writeback on the host's disk, which stalls every other process's writes
      // there for seconds. What `fallocate` cannot place (the last blocks, or a filesystem without it) is
      // written.
      const room = async () => {
        const { bavail, bsize } = await statfs(dir);
        return Number(bavail) * Number(bsize) - leaveBytes;
      };
      let written = 0;
      for (let want = await room(); want > 1 << 20;) {
        const { size } = await stat(ballast).catch(() => ({ size: 0 }));
        const ok = await run('fallocate', ['-o', String(size), '-l', String(want), ballast]).then(
          () => true,
          () => false,
        );
        const { size: after } = await stat(ballast).catch(() => ({ size: 0 }));
        written += after - size;
        // Refused whole (the filesystem's own blocks take some of what statfs calls free): ask for less.
        want = ok || after > size ? await room() : Math.floor(want / 2);
      }
      const handle = await open(ballast, 'a');
      const chunk = Buffer.alloc(1 << 20, 0x5a);
      try {
        for (let left = await room(); left > 0; left = await room()) {
          const { bytesWritten } = await handle.write(chunk, 0, Math.min(chunk.length, left));
          written += bytesWritten;
        }
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
      } finally {
        await handle.close();
      }
      return written;
    },
    async free() {
      await rm(ballast, { force: true });
    },
    async stall() {
      if (!image) throw new Error('stall() needs a disk mounted with { stallable: true }');
      await run('fsfreeze', ['--freeze', dir]);
      frozen = true;
    },
    async resume() {
      if (!frozen) return;
      await run('fsfreeze', ['--unfreeze', dir]);
      frozen = false;
    },
    async close() {
      forget();
      if (frozen) await run('fsfreeze', ['--unfreeze', dir]).catch(() => undefined);
      frozen = false;
      await rm(ballast, { force: true });
      await run('umount', ['-l', dir]).catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
      if (image) await rm(image, { force: true });
    },
  };
}
