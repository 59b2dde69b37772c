// A concurrency key declared by an agent's definition: filled from the run's input when the run starts (what
// `run_started` records), the request's own key winning, and a path the input lacks refused by name.
import { describe, expect, it } from 'vitest';
import { defineAgent } from '@dura/code-agents';
import { DuraError, type RunRequest } from '@dura/contracts';
import { ToolRegistry } from '@dura/tools';
import { AgentRegistry, createAgentModel, KEY_UNRESOLVED_CODE, withCodeAgents } from '../src/index';

const tools = new ToolRegistry([]);
const agents = new AgentRegistry({
  agents: [
    {
      name: 'refunds',
      version: '1',
      model: { provider: 'scripted', steps: [] },
      concurrency: { key: 'customer:{{input.customerId}}', limit: 2 },
    },
  ],
});
const reviewer = defineAgent({
  name: 'reviewer',
  version: '1',
  tools: [],
  concurrency: { key: 'doc:{{input.doc}}', limit: 1 },
  run: () => Promise.resolve('ok'),
});
const model = withCodeAgents({ agents: [reviewer], base: createAgentModel({ agents, tools }) });

const request = (name: string, input: RunRequest['input'], extra: Partial<RunRequest> = {}) => ({
  v: 1 as const,
  runId: `run-${name}`,
  agent: { kind: 'agent' as const, name },
  ...(input === undefined ? {} : { input }),
  ...extra,
});

describe('concurrency keys of agent definitions', () => {
  it('given a JSON agent and a code agent declaring keys, the run starts under the key its input fills', () => {
    expect(model.start(request('refunds', { customerId: 'c-9' })).concurrency).toEqual({
      key: 'customer:c-9',
      limit: 2,
    });
    expect(model.start(request('reviewer', { doc: 12 })).concurrency).toEqual({ key: 'doc:12', limit: 1 });
  });

  it("given a request naming its own key, the definition's is not used", () => {
    const own = request('refunds', { customerId: 1 }, { concurrency: { key: 'batch', limit: 5 } });
    expect(model.start(own)).not.toHaveProperty('concurrency');
  });

  it('given an input without the path, starting is refused with a message that names it', () => {
    const refused = (() => {
      try {
        model.start(request('refunds', { orderId: 1 }));
      } catch (err) {
        return err;
      }
      return undefined;
    })();
    expect(refused).toBeInstanceOf(DuraError);
    expect(refused).toMatchObject({ code: KEY_UNRESOLVED_CODE, retryable: false });
    expect((refused as Error).message).toBe(
      `agent refunds@1 keys its runs by concurrency key "customer:{{input.customerId}}", but input.customerId in this run's input is missing; send the input with it, or name a key in the request (concurrency: { key, limit })`,
    );
  });

  it('given a template that is not a path into the input, the definition is refused when loaded', () => {
    expect(
      () =>
        new AgentRegistry({
          agents: [
            {
              name: 'bad',
              version: '1',
              model: { provider: 'scripted', steps: [] },
              concurrency: { key: 'customer:{{input.id + 1}}', limit: 1 },
            },
          ],
        }),
    ).toThrow(/placeholder \{\{input.id \+ 1\}\} in concurrency key .* is not a path into the input/);
    expect(() =>
      defineAgent({
        name: 'bad-code',
        version: '1',
        tools: [],
        concurrency: { key: '{{env.SECRET}}', limit: 1 },
        run: () => Promise.resolve(null),
      }),
    ).toThrow(/the concurrency key of code agent bad-code@1 is invalid/);
  });

  it('given a key over an input field declared secret, the definition is refused: a key is shown in waits and metrics', () => {
    expect(
      () =>
        new AgentRegistry({
          agents: [
            {
              name: 'cards',
              version: '1',
              model: { provider: 'scripted', steps: [] },
              secrets: { input: ['cards.*.token'] },
              concurrency: { key: 'card:{{input.cards.0.token}}', limit: 1 },
            },
          ],
        }),
    ).toThrow(/reads input.cards.0.token, which is declared secret \(cards.\*.token\)/);
    expect(() =>
      defineAgent({
        name: 'cards-code',
        version: '1',
        tools: [],
        secrets: { input: ['card'] },
        concurrency: { key: 'card:{{input.card.last4}}', limit: 1 },
        run: () => Promise.resolve(null),
      }),
    ).toThrow(/reads input.card.last4, which is declared secret \(card\)/);
  });
});
