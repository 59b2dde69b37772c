import { formatIssues, type JsonObject } from '@dura/contracts';
import type { ToolDefinition } from './tool';

/** The tools a deployment offers. The planner checks plans against it; the gateway executes from it. */
export class ToolRegistry {
  readonly #tools = new Map<string, ToolDefinition>();

  constructor(tools: readonly ToolDefinition[]) {
    for (const tool of tools) {
      if (this.#tools.has(tool.name)) throw new Error(`tool "${tool.name}" is registered twice`);
      this.#tools.set(tool.name, tool);
    }
  }

  get(name: string): ToolDefinition | undefined {
    return this.#tools.get(name);
  }

  names(): string[] {
    return [...this.#tools.keys()].sort();
  }

  /** Issues with `args` for tool `name`, as readable lines; empty when they are valid. */
  argumentIssues(name: string, args: JsonObject): string[] {
    const tool = this.#tools.get(name);
    if (!tool) return [`unknown tool "${name}"; known tools: ${this.names().join(', ')}`];
    const parsed = tool.input.safeParse(args);
    return parsed.success ? [] : formatIssues(parsed.error).map((line) => `${name} args ${line}`);
  }
}
