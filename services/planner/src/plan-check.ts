import {
  CONTROL_TOOLS,
  ControlToolSchemas,
  formatIssues,
  isControlTool,
  type RunRequest,
} from '@dura/contracts';
import { planReferenceIssues, referencedArgs } from '@dura/core';
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
  if (request.agent.kind !== 'scripted') return undefined;
  const steps = request.agent.steps;
  const unknown: string[] = [];
  const invalid: string[] = [];
  steps.forEach((step, index) => {
    if (isControlTool(step.tool)) {
      const child = ControlToolSchemas[CONTROL_TOOLS.runAgent].shape.agent.safeParse(step.args.agent);
      if (step.tool === CONTROL_TOOLS.runAgent && child.success && typeof child.data === 'object') {
        // An inline child plan is checked as the child's own plan, with its own references.
        const problem = checkPlan({ ...request, agent: child.data }, tools);
        for (const issue of problem?.issues ?? [])
          (problem?.code === 'unknown_tool' ? unknown : invalid).push(`agent.steps.${index}.args.${issue}`);
      }
      if (JSON.stringify(referencedArgs(step)).includes('"$')) return;
      const parsed = ControlToolSchemas[step.tool].safeParse(step.args);
      if (!parsed.success) {
        invalid.push(
          ...formatIssues(parsed.error).map((line) => `agent.steps.${index}: ${step.tool} args ${line}`),
        );
      }
    } else if (!tools.get(step.tool)) {
      unknown.push(
        `agent.steps.${index}.tool: unknown tool "${step.tool}"; known tools: ${tools.names().join(', ')}`,
      );
    } else if (!JSON.stringify(step.args).includes('"$')) {
      invalid.push(
        ...tools.argumentIssues(step.tool, step.args).map((line) => `agent.steps.${index}: ${line}`),
      );
    }
  });
  invalid.push(...planReferenceIssues(steps));
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
