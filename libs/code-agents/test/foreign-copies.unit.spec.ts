// A user's project installs its own copies of Dura's packages, while the planner throws and catches with its
// copies: the engine's errors are recognised by shape, never by class identity.
import { describe, expect, it, vi } from 'vitest';
import type { DuraError } from '@dura/contracts';
import { defineAgent, ToolFailure } from '../src/index';
import { SimRun } from '../src/testing';

async function freshCopy<T>(load: () => Promise<T>): Promise<T> {
  vi.resetModules();
  return load();
}

describe('errors across copies of the packages', () => {
  it('given a ToolFailure of another copy, when checked with instanceof, then it is a ToolFailure', async () => {
    const copy = await freshCopy(() => import('../src/errors'));
    expect(copy.ToolFailure).not.toBe(ToolFailure);

    const foreign = new copy.ToolFailure('pay.charge', 'c-1', { code: 'card_declined', message: 'declined' });

    expect(foreign instanceof ToolFailure).toBe(true);
    expect(new Error('plain') instanceof ToolFailure).toBe(false);
    expect({ code: 'card_declined' } instanceof ToolFailure).toBe(false);
  });

  it('given a DuraError of another copy thrown by the code, when driven, then the run fails with its code', async () => {
    // Named at run time: a second instance of the package, as a user's project has its own install of it.
    const contractsPackage = '@dura/contracts';
    const contracts = await freshCopy(
      () => import(contractsPackage) as Promise<{ DuraError: typeof DuraError }>,
    );
    const strict = defineAgent({
      name: 'strict',
      version: '1',
      tools: [],
      run: () => {
        throw new contracts.DuraError('order_invalid', 'the order has no lines');
      },
    });

    const end = await new SimRun(strict, { tools: {} }).drive();

    expect(end.state.status).toBe('failed');
    expect(end.state.error).toEqual({ code: 'order_invalid', message: 'the order has no lines' });
  });

  it('given a plain Error, when driven, then the run fails as agent_error with its message', async () => {
    const broken = defineAgent({
      name: 'broken',
      version: '1',
      tools: [],
      run: () => {
        throw new Error('lines is undefined');
      },
    });

    const end = await new SimRun(broken, { tools: {} }).drive();

    expect(end.state.error).toEqual({ code: 'agent_error', message: 'lines is undefined' });
  });
});
