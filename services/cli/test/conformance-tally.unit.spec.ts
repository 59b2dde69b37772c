import { describe, expect, it } from 'vitest';
import { scenarioOf, tallyConformance } from './conformance-tally';

const result = (text: string, isError: boolean) => ({
  details: { result: { content: [{ type: 'text', text }], isError } },
});

describe('tallyConformance', () => {
  it('counts a scenario that passed on an unknown tool as not applicable, naming the tool', () => {
    const tally = tallyConformance([
      { dir: 'server-ping-2026-11-28T22-57-21-011Z', checks: [{ status: 'SUCCESS' }] },
      {
        dir: 'server-tools-call-simple-text-2026-11-28T22-57-21-130Z',
        checks: [{ status: 'SUCCESS', ...result('MCP error -32602: Tool test_simple_text not found', true) }],
      },
      { dir: 'server-tools-call-image-2026-11-28T22-57-21-149Z', checks: [{ status: 'FAILURE' }] },
      {
        dir: 'server-tools-list-2026-11-28T22-57-21-098Z',
        checks: [{ status: 'INFO' }, { status: 'SUCCESS', ...result('Tool x not found', false) }],
      },
      { dir: 'server-empty-2026-11-28T22-57-21-098Z', checks: [{ status: 'INFO' }] },
    ]);
    expect(tally).toEqual({
      passed: ['ping', 'tools-list'],
      notApplicable: [
        {
          scenario: 'tools-call-simple-text',
          reason:
            'Dura serves no tool test_simple_text: the suite counted the error "Tool test_simple_text not found" as a pass',
        },
      ],
      failed: ['tools-call-image', 'empty'],
    });
  });

  it('reads the scenario from an output directory', () => {
    expect(scenarioOf('server-dns-rebinding-protection-2026-11-28T22-57-22-310Z')).toBe(
      'dns-rebinding-protection',
    );
  });
});
