import type { JetStreamClient } from '@nats-io/jetstream';
import {
  CATALOGUE_REFRESH_MS,
  createCatalogueWriter,
  explainPermissionViolation,
  type CatalogueEntry,
} from '@dura/event-store';
import type { Logger } from './logger';

export interface CatalogueAnnouncerOptions {
  js: JetStreamClient;
  log: Logger;
  /** What the service serves now; read at each announcement, so a changed set is announced as it is. */
  entries: () => readonly CatalogueEntry[];
  replicas?: number;
  /** How often the entries are written again, keeping them within the bucket's time to live. */
  refreshMs?: number;
  /** Registers a call for when the set changes (e.g. an MCP server's tools); answers how to unregister it. */
  onChange?: (changed: () => void) => () => void;
}

export interface CatalogueAnnouncer {
  /** Announces the entries again now (the set changed). */
  changed(): void;
  stop(): Promise<void>;
}

/**
 * Announces what a service serves into the catalogue at once, again whenever `changed()` is called, and
 * every `refreshMs`. The catalogue only informs the API: a failed announcement is logged (naming a denied
 * subject) and tried again at the next one; it never stops the service.
 */
export function startCatalogueAnnouncer(options: CatalogueAnnouncerOptions): CatalogueAnnouncer {
  const writer = createCatalogueWriter({
    js: options.js,
    ...(options.replicas === undefined ? {} : { replicas: options.replicas }),
  });
  let running: Promise<void> = Promise.resolve();
  let stopped = false;
  const announce = (): void => {
    if (stopped) return;
    running = running.then(async () => {
      const entries = options.entries();
      try {
        await writer.put(entries);
        options.log.debug('announced to the catalogue', { entries: entries.length });
      } catch (err) {
        options.log.warn('announcing to the catalogue failed; trying again at the next refresh', {
          reason: explainPermissionViolation(err, undefined) ?? (err as Error).message,
        });
      }
    });
  };
  const timer = setInterval(announce, options.refreshMs ?? CATALOGUE_REFRESH_MS);
  timer.unref();
  const unsubscribe = options.onChange?.(announce);
  announce();
  return {
    changed: announce,
    async stop() {
      stopped = true;
      clearInterval(timer);
      unsubscribe?.();
      await running;
    },
  };
}

interface StartStop {
  start(): Promise<void>;
  stop(...args: never[]): Promise<void>;
}

/** `service`, announcing to the catalogue from when it has started until it stops. */
export function announcingWhileStarted<S extends StartStop>(
  service: S,
  options: CatalogueAnnouncerOptions,
): S {
  let announcer: CatalogueAnnouncer | undefined;
  return {
    ...service,
    async start() {
      await service.start();
      announcer ??= startCatalogueAnnouncer(options);
    },
    async stop(...args: Parameters<S['stop']>) {
      await announcer?.stop();
      announcer = undefined;
      await service.stop(...args);
    },
  };
}
