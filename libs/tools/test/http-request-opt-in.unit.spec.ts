import * as z from 'zod';
import { describe, expect, it } from 'vitest';
import { builtinToolsFor, httpRequestConfigShape, loadServiceTools } from '../src/index';

const schema = z.object(httpRequestConfigShape);

describe('http.request is opt-in per deployment', () => {
  it('is off by default: neither the planner nor a gateway registers it', async () => {
    const config = schema.parse({});
    expect(config).toMatchObject({
      DURA_HTTP_REQUEST_ENABLED: false,
      DURA_EGRESS_MAX_REDIRECTS: 0,
      DURA_EGRESS_MAX_RESPONSE_BYTES: 1_048_576,
    });
    for (const service of ['planner', 'tool-gateway']) {
      const { tools } = await loadServiceTools(service, config);
      expect(tools.names()).not.toContain('http.request');
      expect(tools.argumentIssues('http.request', { url: 'http://169.254.169.254/' })[0]).toMatch(
        /unknown tool "http\.request"/,
      );
    }
  });

  it('is registered when DURA_HTTP_REQUEST_ENABLED=true, under the configured policy', async () => {
    const config = schema.parse({
      DURA_HTTP_REQUEST_ENABLED: 'true',
      DURA_EGRESS_ALLOW: 'api.example.com:443',
    });
    const { tools } = await loadServiceTools('tool-gateway', config);
    expect(tools.names()).toContain('http.request');
    expect(builtinToolsFor(config).map((t) => t.name)).toContain('http.request');
  });

  it('a malformed allow list is a config error naming the variable and every bad entry', () => {
    const parsed = schema.safeParse({ DURA_EGRESS_ALLOW: '10.1.0.0/8,ok.example.com,*.com' });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues.map((i) => [i.path[0], i.message])).toEqual([
      ['DURA_EGRESS_ALLOW', expect.stringMatching(/host bits are set/)],
      ['DURA_EGRESS_ALLOW', expect.stringMatching(/"\*\." must be followed by a domain/)],
    ]);
  });

  it.each([['yes'], ['1']])('DURA_HTTP_REQUEST_ENABLED=%s is refused (true or false only)', (value) => {
    expect(schema.safeParse({ DURA_HTTP_REQUEST_ENABLED: value }).success).toBe(false);
  });
});
