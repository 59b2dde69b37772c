import { formatIssues, type JsonObject, type JsonValue } from '@dura/contracts';
import { secretPathIssue } from './secrets/secret-fields';
import type { ToolDefinition } from './tool';

/** The tools a deployment offers. The planner checks plans against it; the gateway executes from it. */
export class ToolRegistry {
  readonly #tools = new Map<string, ToolDefinition>();
  readonly #listeners = new Set<() => void>();

  constructor(tools: readonly ToolDefinition[]) {
    for (const tool of tools) this.#add(tool);
  }

  /**
   * Replaces every tool whose name starts with `prefix` by `tools` (all of which must start with it): how a
   * tool source whose list changes at run time (an MCP server) keeps its part of the registry current.
   */
  replaceGroup(prefix: string, tools: readonly ToolDefinition[]): void {
    const outside = tools.find((tool) => !tool.name.startsWith(prefix));
    if (outside) throw new Error(`tool "${outside.name}" is outside the group "${prefix}"`);
    const previous = [...this.#tools.values()].filter((tool) => tool.name.startsWith(prefix));
    for (const tool of previous) this.#tools.delete(tool.name);
    try {
      for (const tool of tools) this.#add(tool);
    } catch (err) {
      for (const tool of tools) this.#tools.delete(tool.name);
      for (const tool of previous) this.#tools.set(tool.name, tool);
      throw err;
    }
    for (const listener of this.#listeners) listener();
  }

  /** Calls `listener` after every change of the set of tools (`replaceGroup`); answers how to stop. */
  onChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #add(tool: ToolDefinition): void {
    if (this.#tools.has(tool.name)) throw new Error(`tool "${tool.name}" is registered twice`);
    const issue = [...(tool.secrets?.args ?? []), ...(tool.secrets?.result ?? [])]
      .map(secretPathIssue)
      .find((found) => found !== undefined);
    if (issue) throw new Error(`tool "${tool.name}": ${issue}`);
    if (tool.concurrency !== undefined && !(Number.isInteger(tool.concurrency) && tool.concurrency > 0))
      throw new Error(`tool "${tool.name}": concurrency must be a positive integer, got ${tool.concurrency}`);
    this.#tools.set(tool.name, tool);
  }

  /** The secret argument and result paths of tool `name` (empty for an unknown tool or one without). */
  secretFields(name: string): { args: readonly string[]; result: readonly string[] } {
    const secrets = this.#tools.get(name)?.secrets;
    return { args: secrets?.args ?? [], result: secrets?.result ?? [] };
  }

  /** Names of the tools that declare secret fields: a deployment with any needs a secrets key. */
  withSecrets(): string[] {
    return this.names().filter((name) => {
      const fields = this.secretFields(name);
      return fields.args.length + fields.result.length > 0;
    });
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

  /**
   * Issues with `result` against tool `name`'s declared output, as readable lines; empty when it is valid, or
   * when the tool declares no output (nothing to check it against). An unknown tool is an issue.
   */
  resultIssues(name: string, result: JsonValue): string[] {
    const tool = this.#tools.get(name);
    if (!tool) return [`unknown tool "${name}"; known tools: ${this.names().join(', ')}`];
    const parsed = tool.output?.safeParse(result);
    return !parsed || parsed.success
      ? []
      : formatIssues(parsed.error).map((line) => `${name} result ${line}`);
  }
}
