// The honest count of a run of @modelcontextprotocol/conformance: a scenario passes only when every check
// succeeded on what the scenario meant to exercise. The suite's tool scenarios call the reference server's
// fixtures (test_simple_text, test_error_handling, ...) and some of them accept any text or any error, so
// they "pass" on the server's `Tool test_x not found`: that tool never ran, and the scenario is not
// applicable to a server that does not serve it.

interface Check {
  id?: string;
  status?: string;
  details?: { result?: { isError?: boolean; content?: { type?: string; text?: string }[] } };
}

export interface ConformanceTally {
  passed: string[];
  notApplicable: { scenario: string; reason: string }[];
  failed: string[];
}

const UNKNOWN_TOOL = /Tool (\S+) not found/;

/** The scenario of an output directory of the suite: `server-<scenario>-<ISO time>`. */
export function scenarioOf(dir: string): string {
  return dir.replace(/^server-/, '').replace(/-\d{4}-\d{2}-\d{2}T[\d-]+Z$/, '');
}

/** Each scenario (an output directory and its checks.json) as passed, not applicable (with why) or failed. */
export function tallyConformance(scenarios: { dir: string; checks: unknown }[]): ConformanceTally {
  const tally: ConformanceTally = { passed: [], notApplicable: [], failed: [] };
  for (const { dir, checks } of scenarios) {
    const scenario = scenarioOf(dir);
    const list = (Array.isArray(checks) ? checks : []) as Check[];
    const graded = list.filter((check) => check.status !== 'INFO');
    if (graded.length === 0 || graded.some((check) => check.status !== 'SUCCESS')) {
      tally.failed.push(scenario);
      continue;
    }
    const missing = graded
      .map((check) => check.details?.result)
      .filter((result) => result?.isError === true)
      .map((result) => UNKNOWN_TOOL.exec(result?.content?.map((c) => c.text ?? '').join(' ') ?? '')?.[1])
      .find((tool) => tool !== undefined);
    if (missing === undefined) tally.passed.push(scenario);
    else
      tally.notApplicable.push({
        scenario,
        reason: `Dura serves no tool ${missing}: the suite counted the error "Tool ${missing} not found" as a pass`,
      });
  }
  return tally;
}
