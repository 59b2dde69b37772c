import { describe, expect, it } from 'vitest';
import { DEFAULT_TENANT, type RunRequest } from '@dura/contracts';
import { fold, nextAction } from '../src/index';
import { RunLog, requestedData } from '../src/testing';

/** A run whose request names `tenant` (or none), started. */
function runOf(tenant: string | undefined): RunLog {
  const data = requestedData('run-1');
  const request: RunRequest & { runId: string } = {
    ...data.request,
    ...(tenant === undefined ? {} : { tenant }),
  };
  return new RunLog().add('run_requested', { request }).start();
}

describe('a run belongs to a tenant', () => {
  it('given a request naming a tenant, the fold carries it', () => {
    expect(fold(runOf('acme').events).tenant).toBe('acme');
  });

  it('given a request without one (every log older than tenants), the run belongs to the default tenant', () => {
    expect(fold(runOf(undefined).events).tenant).toBe(DEFAULT_TENANT);
    expect(fold([]).tenant).toBe(DEFAULT_TENANT);
  });

  it('given a run_agent call, the child request inherits the parent tenant', () => {
    const log = runOf('acme').think([{ tool: 'dura.run_agent', args: { agent: 'researcher' } }]).intents();
    const action = nextAction(fold(log.events));
    if (action.kind !== 'record') throw new Error(`expected a record action, got ${action.kind}`);
    const child = action.events.find((draft) => draft.type === 'child_run_requested');
    expect(child?.data).toMatchObject({ request: { tenant: 'acme', parent: { runId: 'run-1' } } });
  });

  it('given a default-tenant parent, the child request names no tenant (its log reads as before)', () => {
    const log = runOf(undefined).think([{ tool: 'dura.run_agent', args: { agent: 'researcher' } }]).intents();
    const action = nextAction(fold(log.events));
    if (action.kind !== 'record') throw new Error(`expected a record action, got ${action.kind}`);
    const child = action.events.find((draft) => draft.type === 'child_run_requested');
    expect(child?.data).toMatchObject({ request: { parent: { runId: 'run-1' } } });
    expect((child?.data as { request: RunRequest }).request.tenant).toBeUndefined();
  });

  it('given a refused request that named a tenant, the rejected run belongs to it; naming none, to the default', () => {
    const error = { code: 'agent_not_allowed', message: 'refused' };
    expect(fold(new RunLog().add('run_rejected', { error, tenant: 'acme' }).events).tenant).toBe('acme');
    expect(fold(new RunLog().add('run_rejected', { error }).events).tenant).toBe(DEFAULT_TENANT);
  });
});
