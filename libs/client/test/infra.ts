import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { afterAll, beforeAll } from 'vitest';
import type { NewEvent, RunEvent } from '@dura/contracts';
import { RunLog } from '@dura/core/testing';
import { createEventStore, ensureStreams, type EventStore } from '@dura/event-store';
import { useTestInfra } from '@dura/testing';
import { createDuraClient, type DuraClient } from '../src/index';

export interface ClientFixture {
  natsUrl: string;
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
  client: DuraClient;
  /** The log written directly, as the planner and the gateway would: no planner runs in these tests. */
  store: EventStore;
}

/** One nats-server for the spec file, Dura's streams, a client and an event store; the connection closes in afterAll. */
export function useClientFixture(infra = useTestInfra({ database: false })): () => ClientFixture {
  let fixture: ClientFixture | undefined;
  beforeAll(async () => {
    // Reconnects for as long as the spec runs: some tests restart the server under it.
    const nc = await connect({ servers: infra().nats.url, maxReconnectAttempts: -1, reconnectTimeWait: 250 });
    const handles = { js: jetstream(nc), jsm: await jetstreamManager(nc) };
    fixture = {
      natsUrl: infra().nats.url,
      nc,
      ...handles,
      client: createDuraClient(handles),
      store: createEventStore(handles),
    };
    await ensureStreams(handles.jsm);
  });
  afterAll(async () => {
    await fixture?.nc.close();
  });
  return () => {
    if (!fixture) throw new Error('the client fixture did not start; see the beforeAll error');
    return fixture;
  };
}

/** A run's events as the store would be asked to append them (RunLog numbers them; the stream assigns seqs). */
export function toNew(events: readonly RunEvent[]): NewEvent[] {
  return events.map(({ seq: _, ...event }) => event);
}

export function newLog(runId: string): RunLog {
  return new RunLog(runId);
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
