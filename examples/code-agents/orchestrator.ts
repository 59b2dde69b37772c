// Orchestrator-workers: one child run per service, all started at once (`Promise.all` over `ctx.invoke`:
// one decision, several child runs), each building and testing its service; the parent waits for all of
// them and announces the result. A failed child is a `ToolFailure` the parent sees, never a lost one.
import { z } from 'zod';
import { defineAgent, ToolFailure } from '@dura/code-agents';

const Built = z.object({ imageTag: z.string() });
const Tested = z.object({ passed: z.boolean(), tests: z.number() });
const Checked = z.object({
  service: z.string(),
  imageTag: z.string(),
  passed: z.boolean(),
  tests: z.number(),
});

/** The worker: builds one service at a commit and runs its tests. */
export const serviceCheck = defineAgent({
  name: 'service-check',
  version: '1',
  input: z.object({ service: z.string().min(1), commit: z.string().min(7) }),
  tools: ['demo.build', 'demo.test'],
  async run(ctx, { service, commit }) {
    const { imageTag } = Built.parse(await ctx.tool('demo.build', { service, commit }));
    const { passed, tests } = Tested.parse(await ctx.tool('demo.test', { imageTag }));
    return { service, imageTag, passed, tests };
  },
});

/** The orchestrator: a child run of service-check per service, in parallel, then one announcement. */
export const releaseCheck = defineAgent({
  name: 'release-check',
  version: '1',
  input: z.object({
    commit: z.string().min(7),
    services: z.array(z.string().min(1)).min(1).max(8),
  }),
  tools: ['demo.notify'],
  async run(ctx, { commit, services }) {
    const outcomes = await Promise.all(
      services.map((service) =>
        ctx.invoke({ name: serviceCheck.name, version: serviceCheck.version }, { service, commit }).then(
          (output) => ({ service, ok: true as const, checked: Checked.parse(output) }),
          (err: unknown) => {
            if (!(err instanceof ToolFailure)) throw err;
            return { service, ok: false as const, error: err.message };
          },
        ),
      ),
    );
    const ready = outcomes.filter((o) => o.ok && o.checked.passed).map((o) => o.service);
    await ctx.tool('demo.notify', {
      channel: '#releases',
      message: `${commit.slice(0, 7)}: ${ready.length} of ${services.length} services ready (${ready.join(', ') || 'none'})`,
    });
    return { commit, ready, outcomes };
  },
});
