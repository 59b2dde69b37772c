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
  /** The tool names no tool of this deployment answers to (`unknown_tool` only). */
  unknownTools?: string[];
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
  const unknownNames = new Set<string>();
  const invalid: string[] = [];
  steps.forEach((step, index) => {
    if (isControlTool(step.tool)) {
      const child = ControlToolSchemas[CONTROL_TOOLS.runAgent].shape.agent.safeParse(step.args.agent);
      if (step.tool === CONTROL_TOOLS.runAgent && child.success && typeof child.data === 'object') {
        // An inline child plan is checked as the child's own plan, with its own references.
        const problem = checkPlan({ ...request, agent: child.data }, tools);
        for (const issue of problem?.issues ?? [])
          (problem?.code === 'unknown_tool' ? unknown : invalid).push(`agent.steps.${index}.args.${issue}`);
        for (const name of problem?.unknownTools ?? []) unknownNames.add(name);
      }
      if (JSON.stringify(referencedArgs(step)).includes('"$')) return;
      const parsed = ControlToolSchemas[step.tool].safeParse(step.args);
      if (!parsed.success) {
        invalid.push(
          ...formatIssues(parsed.error).map((line) => `agent.steps.${index}: ${step.tool} args ${line}`),
        );
      }
    } else if (!tools.get(step.tool)) {
      unknownNames.add(step.tool);
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
    const names = [...unknownNames];
    return {
      code: 'unknown_tool',
      message:
        `the plan uses ${names.length === 1 ? 'an unknown tool' : 'unknown tools'}: ` +
        `${summarize(
          names.map((n) => `"${n}"`),
          5,
          ', ',
        )}; the issues list the tools this deployment has`,
      issues: [...unknown, ...invalid],
      unknownTools: names,
    };
  }
  if (invalid.length > 0)
    return {
      code: 'invalid_plan',
      message: `the plan has invalid steps: ${summarize(invalid)}`,
      issues: invalid,
    };
  return undefined;
}

/** The first issues in one line; the event's `issues` keep them all. */
function summarize(issues: readonly string[], shown = 3, separator = '; '): string {
  const more = issues.length - shown;
  return issues.slice(0, shown).join(separator) + (more > 0 ? ` (and ${more} more)` : '');
}
