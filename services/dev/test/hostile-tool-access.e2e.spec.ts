// A hostile tenant against a production-shaped stack: the shipped NATS permissions (each service its own user,
// the attacker holding the `client` credential), inline plans off as the planner service defaults, agents per
// tenant, the projector requiring tokens. A payment tool charges through a witness that counts every request:
// whatever the attacker submits, forks or claims, the witness sees no call.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jetstream, type JetStreamClient } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { connectDuraClient, type ConnectedDuraClient } from '@dura/client';
import { FORK_VERSION, RUN_REQUEST_VERSION, SUBJECTS, type RunEvent } from '@dura/contracts';
import { fold } from '@dura/core';
import { connectAs, securityOf } from './secured-nats';
import { scriptedAgent, useHostileStack } from './hostile-support';
import { eventually } from './system';

const TOKEN = 'tenant-default-read-token-7d1e';
const payStep = { tool: 'pay.charge', args: { amount: 5000 } };
const stack = useHostileStack({
  name: 'dura-hostile-',
  agents: [
    scriptedAgent('support', ['echo'], { tool: 'echo', args: { hi: 1 } }),
    scriptedAgent('billing', ['pay.charge'], payStep),
    scriptedAgent('spawner', [], {
      tool: 'dura.run_agent',
      args: { agent: { kind: 'scripted', steps: [payStep] } },
    }),
  ],
  tenantAgents: 'default=support|spawner,*=-',
  tokens: [{ name: 'default-app', token: TOKEN, tenant: 'default', scopes: ['read', 'signal'] }],
});
let client: NatsConnection;
let js: JetStreamClient;
let reader: ConnectedDuraClient;

beforeAll(async () => {
  const { nats } = stack();
  client = await connectAs(nats.url, 'client');
  js = jetstream(client);
  reader = connectDuraClient({ natsUrl: nats.url, security: securityOf('client') });
});

afterAll(async () => {
  await client?.close();
  await reader?.close();
});

async function submit(body: { runId: string; [field: string]: unknown }): Promise<void> {
  await js.publish(SUBJECTS.submit, JSON.stringify({ v: RUN_REQUEST_VERSION, ...body }), {
    msgID: body.runId,
  });
}

/** The run's log as the client user reads it, once `done` holds. */
function untilLog(runId: string, done: (log: RunEvent[]) => boolean): Promise<RunEvent[]> {
  return eventually(
    async () => {
      const log = await reader.readEvents(runId);
      return log.length > 0 && done(log) ? log : undefined;
    },
    `the log of ${runId}`,
    60_000,
  );
}

/** The refusal as the client sees it (`run_rejected`) and as the API shows it to the tenant's token. */
async function refusal(runId: string): Promise<{ code: string; message: string }> {
  const [first] = await untilLog(runId, (log) => log[0]?.type === 'run_rejected');
  const error = (first as Extract<RunEvent, { type: 'run_rejected' }>).data.error;
  const seen = await eventually(
    async () => {
      const res = await fetch(`${stack().apiUrl}/runs/${runId}`, {
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      if (res.status !== 200) return undefined;
      return (await res.json()) as { status: string; error?: { code: string; message: string } };
    },
    `${runId} through the API`,
    60_000,
  );
  expect(seen.status).toBe('rejected');
  expect(seen.error).toEqual(error);
  return error;
}

describe('a tenant holding the client credential cannot reach a tool its agents do not grant', () => {
  it('runs what the tenant is allowed: an agent with its own tools (the stack works)', async () => {
    await submit({ runId: 'hostile-ok', agent: { kind: 'agent', name: 'support' } });
    const log = await untilLog('hostile-ok', (l) => fold(l).status === 'completed');
    expect(log.filter((e) => e.type === 'tool_call_completed')).toHaveLength(1);
  });

  it('submits an inline plan calling the payment tool: refused, inline plans are off', async () => {
    await submit({ runId: 'hostile-inline', agent: { kind: 'scripted', steps: [payStep] } });
    const error = await refusal('hostile-inline');
    expect(error.code).toBe('inline_plans_disabled');
    expect(error.message).toMatch(/run a registered agent or set DURA_INLINE_PLANS=true/);
  });

  it('runs an agent the tenant is not allowed (the one holding the payment tool): refused', async () => {
    await submit({ runId: 'hostile-billing', agent: { kind: 'agent', name: 'billing' } });
    const error = await refusal('hostile-billing');
    expect(error.code).toBe('agent_not_allowed');
    expect(error.message).toMatch(
      /tenant default may not start agent billing; it may start support, spawner/,
    );
    // Naming another tenant does not help: a tenant not listed may start no agent.
    await submit({ runId: 'hostile-billing-2', agent: { kind: 'agent', name: 'billing' }, tenant: 'acme' });
    expect((await untilLog('hostile-billing-2', () => true))[0]?.type).toBe('run_rejected');
  });

  it('forks a run trying to change its plan: refused, a fork cannot change what it copies', async () => {
    const [first] = await untilLog('hostile-ok', () => true);
    const fork = {
      v: FORK_VERSION,
      sourceRunId: 'hostile-ok',
      atSeq: first!.seq,
      runId: 'hostile-fork',
      agent: { kind: 'scripted', steps: [payStep] },
    };
    await js.publish(SUBJECTS.fork, JSON.stringify(fork), { msgID: 'fork:hostile-fork' });
    const error = await refusal('hostile-fork');
    expect(error.code).toBe('invalid_request');
    expect(error.message).toMatch(
      /a fork copies its source run's request and cannot change it \(got agent\)/,
    );
  });

  it('asks for a child inline plan, through an allowed agent and as a forged child: both refused', async () => {
    await submit({ runId: 'hostile-spawn', agent: { kind: 'agent', name: 'spawner' } });
    const child = await refusal('hostile-spawn-c1');
    expect(child.code).toBe('inline_plans_disabled');
    const parent = await untilLog('hostile-spawn', (l) => fold(l).status === 'failed');
    expect(parent.some((e) => e.type === 'child_run_completed' && e.data.status === 'failed')).toBe(true);

    await submit({
      runId: 'hostile-forged',
      agent: { kind: 'scripted', steps: [payStep] },
      parent: { runId: 'hostile-spawn', callId: 'call-1' },
    });
    expect((await refusal('hostile-forged')).code).toBe('forged_child');
  });

  it('sends a signal through the API that tries to carry a tool call: refused, a signal body is only name and payload', async () => {
    const res = await fetch(`${stack().apiUrl}/runs/hostile-spawn/signals`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'approve', tool: 'pay.charge', args: { amount: 5000 } }),
    });
    expect(res.status).toBe(400);
    expect(JSON.stringify(await res.json())).toMatch(/the body of a signal is invalid/);
  });

  it('the payment witness saw no request at all', () => {
    expect(stack().witness.totals()).toEqual({ requests: 0, effects: 0, lookups: 0, keys: 0 });
    for (const output of stack().services.outputs()) expect(output).not.toMatch(/Permissions Violation/);
  });
});
