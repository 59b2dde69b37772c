// The production-shaped stack the hostile-tenant tests attack: the shipped NATS permissions (each service its
// own user), a payment witness counting every charge, inline plans off as the planner service defaults, agents
// per tenant, and the projector requiring the tokens of a tokens file.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { startPaymentWitness, useTestInfra, type PaymentWitness } from '@dura/testing';
import { WITNESS_TOOLS } from './crash-harness';
import {
  startSecuredNats,
  startShippedServices,
  type SecuredNats,
  type ShippedServices,
} from './secured-nats';

/** A scripted model answering `steps`, in an agents file's `model` field. */
const scripted = (steps: object[]) => ({ provider: 'scripted', steps });

/** An agents-file entry: `name`@1 granted `tools`, whose scripted model plans `steps`. */
export const scriptedAgent = (name: string, tools: string[], ...steps: object[]) => ({
  name,
  version: '1',
  model: scripted(steps),
  tools,
});

/** An entry of the projector's tokens file. */
export interface TokenEntry {
  name: string;
  token: string;
  tenant: string;
  scopes: string[];
}

export interface HostileStack {
  nats: SecuredNats;
  witness: PaymentWitness;
  services: ShippedServices;
  /** The projector's API. */
  apiUrl: string;
}

/**
 * Registers beforeAll/afterAll in the calling spec file: a secured nats-server, a payment witness, and the
 * planner (with `agents` and PLANNER_TENANT_AGENTS=`tenantAgents`), the tool gateway (the witness tools) and
 * the projector (tokens required, `tokens` its file) as real processes. Teardown runs whether or not the
 * tests passed; a file's own afterAll registered after this one runs before it.
 */
export function useHostileStack(options: {
  /** The temp directory's prefix. */
  name: string;
  agents: object[];
  tenantAgents: string;
  tokens: TokenEntry[];
}): () => HostileStack {
  const infra = useTestInfra({ nats: false });
  let stack: HostileStack | undefined;
  // What started, closed last-started first whether or not the rest started.
  const stops: (() => Promise<unknown> | void)[] = [];
  beforeAll(async () => {
    const nats = await startSecuredNats();
    stops.push(() => nats.close());
    const witness = await startPaymentWitness();
    stops.push(() => witness.close());
    const dir = mkdtempSync(join(tmpdir(), options.name));
    stops.push(() => rmSync(dir, { recursive: true, force: true }));
    const agents = join(dir, 'agents.json');
    writeFileSync(agents, JSON.stringify({ agents: options.agents }));
    const tokens = join(dir, 'tokens.json');
    writeFileSync(tokens, JSON.stringify(options.tokens));
    const services = await startShippedServices(nats, infra().db.url, {
      env: { DURA_TOOLS_MODULES: WITNESS_TOOLS, WITNESS_URL: witness.url },
      planner: {
        // The production default, stated: the harness turns inline plans on for every other test.
        DURA_INLINE_PLANS: 'false',
        DURA_AGENTS: agents,
        PLANNER_TENANT_AGENTS: options.tenantAgents,
      },
      projector: { PROJECTOR_AUTH_REQUIRED: 'true', PROJECTOR_API_TOKENS_FILE: tokens },
    });
    stops.push(() => services.stop());
    stack = { nats, witness, services, apiUrl: services.apiUrl };
  }, 180_000);
  afterAll(async () => {
    for (const stop of stops.reverse()) await stop();
  });
  return () => {
    if (!stack) throw new Error('useHostileStack(): the stack is only there inside tests, after beforeAll');
    return stack;
  };
}
