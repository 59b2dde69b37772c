import type { z } from 'zod';

/** Turns zod issues into one readable line each: `agent.steps.0.tool: tool name must be ...`. */
export function formatIssues(error: z.ZodError): string[] {
  return error.issues.map((issue) => {
    const path = issue.path.length > 0 ? issue.path.join('.') : '(root)';
    return `${path}: ${issue.message}`;
  });
}
