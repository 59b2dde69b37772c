// The catalogue announcer on a real nats-server: writes at start, again when told the set changed and at each
// refresh, nothing after stop; a write that fails is logged and never thrown at the service.
import { describe, expect, it } from 'vitest';
import { connect } from '@nats-io/transport-node';
import { jetstream } from '@nats-io/jetstream';
import { CATALOGUE_VERSION, catalogueToolKey, type CatalogueTool } from '@dura/contracts';
import { readCatalogue, type CatalogueEntry } from '@dura/event-store';
import { startCatalogueAnnouncer } from '../src/index';
import { eventually, recordingLogger, sleep, useNatsConnections, useTestInfra } from './infra';

const infra = useTestInfra({ database: false });
const nats = useNatsConnections(infra);

const tool = (name: string, announcedAt: string): CatalogueEntry => {
  const value: CatalogueTool = {
    v: CATALOGUE_VERSION,
    name,
    description: name,
    safety: 'read_only',
    limits: { timeoutMs: 1000, attempts: 1, approval: { required: false } },
    announcedAt,
  };
  return { key: catalogueToolKey(name), value };
};

describe('startCatalogueAnnouncer', () => {
  it('announces at start, on a change and at each refresh, and stops writing when stopped', async () => {
    const { js } = await nats();
    const { log } = recordingLogger();
    let names = ['alpha'];
    let writes = 0;
    let notify: (() => void) | undefined;
    const announcer = startCatalogueAnnouncer({
      js,
      log,
      refreshMs: 200,
      entries: () =>
        names.map((name) => tool(name, new Date(Date.UTC(2026, 0, 1, 0, 0, ++writes)).toISOString())),
      onChange: (changed) => {
        notify = changed;
        return () => (notify = undefined);
      },
    });
    try {
      await eventually(async () =>
        expect((await readCatalogue(js)).tools.map((t) => t.name)).toEqual(['alpha']),
      );
      names = ['alpha', 'beta'];
      notify?.();
      await eventually(async () =>
        expect((await readCatalogue(js)).tools.map((t) => t.name)).toEqual(['alpha', 'beta']),
      );
      // Refreshed without being told: each write stamps a later time.
      const before = (await readCatalogue(js)).tools[0]?.announcedAt ?? '';
      await eventually(async () =>
        expect(((await readCatalogue(js)).tools[0]?.announcedAt ?? '') > before).toBe(true),
      );
    } finally {
      await announcer.stop();
    }
    expect(notify).toBeUndefined();
    const stoppedAt = writes;
    await sleep(600);
    expect(writes).toBe(stoppedAt);
  });

  it('logs a failed announcement, naming why, and goes on', async () => {
    const nc = await connect({ servers: infra().nats.url });
    await nc.close();
    const { log, records } = recordingLogger();
    const announcer = startCatalogueAnnouncer({
      js: jetstream(nc),
      log,
      entries: () => [tool('gamma', new Date().toISOString())],
    });
    await eventually(() =>
      expect(
        records.find(
          (r) => r['msg'] === 'announcing to the catalogue failed; trying again at the next refresh',
        ),
      ).toMatchObject({
        reason: expect.stringMatching(/closed/i),
      }),
    );
    await announcer.stop();
  });
});
