// Human in the loop: build and test an image, then wait durably for a person's verdict before deploying
// to production. Approved: deploy and announce it. Rejected (or no answer within a day): announce why and
// deploy nothing. While it waits the run holds no process; the verdict is the signal `deploy`.
import { z } from 'zod';
import { defineAgent } from '@dura/code-agents';

const Input = z.object({ service: z.string().min(1), commit: z.string().min(7) });
const Built = z.object({ imageTag: z.string() });
const Tested = z.object({ passed: z.boolean(), tests: z.number() });
const Deployed = z.object({ deploymentId: z.string() });

export const approvedRelease = defineAgent({
  name: 'approved-release',
  version: '1',
  input: Input,
  tools: ['demo.build', 'demo.test', 'demo.deploy', 'demo.notify'],
  async run(ctx, { service, commit }) {
    const { imageTag } = Built.parse(await ctx.tool('demo.build', { service, commit }));
    const tested = Tested.parse(await ctx.tool('demo.test', { imageTag }));
    if (!tested.passed) return { imageTag, deployed: false, reason: 'tests failed' };

    const verdict = await ctx.approve('deploy', { timeout: 86_400 });
    if (!verdict.approved) {
      const reason = verdict.reason ?? 'rejected';
      await ctx.tool('demo.notify', {
        channel: '#releases',
        message: `${imageTag} was not deployed: ${reason}`,
      });
      return { imageTag, deployed: false, reason };
    }
    const { deploymentId } = Deployed.parse(
      await ctx.tool('demo.deploy', { imageTag, environment: 'production' }),
    );
    await ctx.tool('demo.notify', {
      channel: '#releases',
      message: `${imageTag} is live (${deploymentId}, ${tested.tests} tests passed)`,
    });
    return { imageTag, deployed: true, deploymentId };
  },
});
