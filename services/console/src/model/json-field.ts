/** The JSON a form field holds (`undefined` when it is empty); throws a message naming the field otherwise. */
export function jsonField(text: string, what: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new Error(`${what} must be JSON, e.g. {"day": "monday"} or "hello"`);
  }
}

/** What a schedule or trigger starts, as a person names it: the agent's name, or "scripted plan". */
export function agentLabel(agent: { kind: string; name?: string; version?: string }): string {
  if (agent.kind !== 'agent') return 'scripted plan';
  return agent.version ? `${agent.name ?? ''}@${agent.version}` : (agent.name ?? '');
}
