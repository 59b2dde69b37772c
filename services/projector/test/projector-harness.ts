import { afterAll, beforeAll } from 'vitest';
import { STREAMS, SUBJECTS } from '@dura/contracts';
import type { Db } from '@dura/db';
import { startHttpServer, type HttpServerHandle, type Logger } from '@dura/service-kit';
import { TEST_STREAM_OPTIONS, testLogger } from '@dura/service-kit/testing';
import type { TestInfra } from '@dura/testing';
import { useTestInfra } from '@dura/testing';
import {
  createAuthenticator,
  createProjector,
  parseTokenFile,
  migrateProjector,
  projectorRoutes,
  type Authenticator,
  type Projector,
  type ReadApiDeps,
} from '../src/index';
import { appendInterleaved, caughtUp, connect, prepare, type Connections, type RunScript } from './support';

/** A projector and its HTTP API on a free port, over the file's NATS and database (see `startProjectorApi`). */
export interface ProjectorApi {
  /** Plain connections for the test's own appends and reads. */
  setup: Connections;
  /** The projector's connections. */
  conn: Connections;
  projector: Projector;
  http: HttpServerHandle;
  /** Appends the scripts' events interleaved (`appendInterleaved`) and waits for the projection to reach them. */
  project(scripts: RunScript[]): Promise<number>;
  /** One more server of `projectorRoutes` over the same projector with `routes` on top; closed by `close`. */
  serve(
    routes: ProjectorApiRoutes,
    options?: { trustedOrigins?: ReadonlySet<string> },
  ): Promise<HttpServerHandle>;
  close(): Promise<void>;
}

/** The routes served on top of `projectorRoutes`' defaults; `log` also goes to the projector and the server. */
export type ProjectorApiRoutes = Partial<Omit<ReadApiDeps, 'db' | 'position'>>;

export interface ProjectorApiOptions {
  /** Start the projector (default true); the routes still read its position. */
  startProjector?: boolean;
  /** The logger of the projector, the routes and the server (default: test loggers). */
  log?: Logger;
}

/**
 * Prepares the streams and tables, starts a projector (unless `startProjector: false`) and serves
 * `projectorRoutes` with `routes` on top (auth, console, ...): the setup of every API test file.
 */
export async function startProjectorApi(
  infra: TestInfra,
  routes: ProjectorApiRoutes = {},
  options: ProjectorApiOptions = {},
): Promise<ProjectorApi> {
  const setup = await prepare(infra.nats.url, infra.db.url);
  const conn = await connect(infra.nats.url, infra.db.url, 'projector');
  const log = (name: string) => options.log ?? testLogger(name);
  const projector = createProjector({ ...conn, log: log('projector'), streams: TEST_STREAM_OPTIONS });
  if (options.startProjector ?? true) await projector.start();
  const servers: HttpServerHandle[] = [];
  const serve = async (more: ProjectorApiRoutes, o: { trustedOrigins?: ReadonlySet<string> } = {}) => {
    const server = await startHttpServer({
      port: 0,
      host: '127.0.0.1',
      routes: projectorRoutes({ ...conn, position: projector.position, log: log('http'), ...more }),
      log: log('http'),
      ...(o.trustedOrigins ? { trustedOrigins: o.trustedOrigins } : {}),
    });
    servers.push(server);
    return server;
  };
  const http = await serve(routes);
  return {
    setup,
    conn,
    projector,
    http,
    serve,
    async project(scripts) {
      await appendInterleaved(setup.store, scripts);
      return caughtUp(setup, projector.position);
    },
    async close() {
      await Promise.allSettled(servers.map((server) => server.close()));
      await projector.stop();
      await conn.close();
      await setup.close();
    },
  };
}

/**
 * The file's projector API: started in `beforeAll` over `useTestInfra()` (with `routes()` evaluated there, so
 * they may use what earlier hooks made), closed in `afterAll` whether or not the tests passed.
 */
export function useProjectorApi(
  routes: () => ProjectorApiRoutes | Promise<ProjectorApiRoutes> = () => ({}),
  options: ProjectorApiOptions = {},
): () => ProjectorApi {
  const infra = useTestInfra();
  let api: ProjectorApi | undefined;
  beforeAll(async () => {
    api = await startProjectorApi(infra(), await routes(), options);
  });
  afterAll(async () => {
    await api?.close();
  });
  return () => {
    if (api === undefined)
      throw new Error('useProjectorApi(): the API is only available inside tests and hooks');
    return api;
  };
}

/** The file's prepared streams and tables, and projectors each on its own connections (see `useProjectors`). */
export interface ProjectorsFile {
  infra: () => TestInfra;
  /** Plain connections for the test's own appends and reads, on prepared streams and tables. */
  setup: () => Connections;
  /** Starts a projector on new connections named `name` (over `databaseUrl`, default the file's database). */
  start(
    name: string,
    options: { batchSize: number; databaseUrl?: string; migrate?: boolean; db?: (db: Db) => Db },
  ): Promise<{ projector: Projector; conn: Connections }>;
}

/**
 * Prepares the file's streams and tables in `beforeAll`; every projector `start` made is stopped, and every
 * connection closed, in `afterAll` whether or not the tests passed.
 */
export function useProjectors(): ProjectorsFile {
  const infra = useTestInfra();
  let setup: Connections | undefined;
  const opened: Connections[] = [];
  const started: Projector[] = [];
  beforeAll(async () => {
    setup = await prepare(infra().nats.url, infra().db.url);
  });
  afterAll(async () => {
    await Promise.allSettled(started.map((projector) => projector.stop()));
    await Promise.allSettled(opened.map((conn) => conn.close()));
    await setup?.close();
  });
  return {
    infra,
    setup: () => {
      if (setup === undefined) throw new Error('useProjectors(): only available inside tests and hooks');
      return setup;
    },
    async start(name, { batchSize, databaseUrl = infra().db.url, migrate = false, db }) {
      const conn = await connect(infra().nats.url, databaseUrl, name);
      opened.push(conn);
      if (migrate) await migrateProjector(conn.database);
      const projector = createProjector({
        ...conn,
        ...(db ? { db: db(conn.db) } : {}),
        log: testLogger(name),
        batchSize,
        streams: TEST_STREAM_OPTIONS,
      });
      started.push(projector);
      await projector.start();
      return { projector, conn };
    },
  };
}

/** GETs `path` from the API at `url` and reads its status and JSON body. */
export async function getJson(url: string, path: string): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${url}${path}`);
  return { status: response.status, body: await response.json() };
}

/** An authenticator over a tokens file's text (the shipped format). */
export const tokenAuth = (tokenFile: string): Authenticator =>
  createAuthenticator({ tokens: parseTokenFile(tokenFile, 'tokens.json') });

/** Every request published on `dura.submit`, in order, with its `Nats-Msg-Id`. */
export async function submitted(conn: Connections): Promise<{ id: string; json: unknown }[]> {
  const info = await conn.jsm.streams.info(STREAMS.requests);
  const found: { id: string; json: unknown }[] = [];
  for (let seq = info.state.first_seq; seq <= info.state.last_seq && info.state.messages > 0; seq += 1) {
    const msg = await conn.jsm.streams.getMessage(STREAMS.requests, { seq }).catch(() => null);
    if (msg?.subject === SUBJECTS.submit) found.push({ id: msg.header.get('Nats-Msg-Id'), json: msg.json() });
  }
  return found;
}

/** The status and JSON body of an API answer. */
export interface ApiAnswer {
  status: number;
  body: { error?: { code: string; message: string }; [key: string]: unknown };
}

/** A JSON call to the API at `url`, presenting `token`. */
export async function callApi(
  url: string,
  token: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<ApiAnswer> {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as ApiAnswer['body']) : {} };
}
