import type { RunRequest } from '@dura/contracts';
import { planReferenceIssues } from '@dura/core';
import type { ToolRegistry } from '@dura/tools';

export interface PlanProblem {
  code: 'unknown_tool' | 'invalid_plan';
  message: string;
  issues: string[];
}

/**
 * Checks a scripted plan against the tools this deployment offers before the run starts, so a typo fails
 * at submit time with the step named, not forty steps in. Arguments holding `$` references are checked by
 * the gateway once resolved.
 */
export function checkPlan(request: RunRequest, tools: ToolRegistry): PlanProblem | undefined {
  const unknown: string[] = [];
  const invalid: string[] = [];
  request.agent.steps.forEach((step, index) => {
    if (!tools.get(step.tool)) {
      unknown.push(
        `agent.steps.${index}.tool: unknown tool "${step.tool}"; known tools: ${tools.names().join(', ')}`,
      );
    } else if (!JSON.stringify(step.args).includes('"$')) {
      invalid.push(
        ...tools.argumentIssues(step.tool, step.args).map((line) => `agent.steps.${index}: ${line}`),
      );
    }
  });
  invalid.push(...planReferenceIssues(request.agent.steps));
  if (unknown.length > 0) {
    return {
      code: 'unknown_tool',
      message: `the plan uses ${unknown.length} unknown tool(s)`,
      issues: [...unknown, ...invalid],
    };
  }
  if (invalid.length > 0)
    return { code: 'invalid_plan', message: 'the plan has invalid steps', issues: invalid };
  return undefined;
}
