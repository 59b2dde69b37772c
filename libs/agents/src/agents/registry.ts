import { readFile } from 'node:fs/promises';
import { extname, resolve as resolvePath } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createHash } from 'node:crypto';
import { CONFIG_ERROR_CODE, DuraError, formatIssues, type PinnedVersion } from '@dura/contracts';
import type { AnyCodeAgent } from '@dura/code-agents';
import { codeAgentsOf, isCodeAgent } from './code-agent-model';
import { AgentsFileSchema, type AgentDefinition, type AgentsFile, type ModelPrice } from './definition';

/** An agent as the registry serves it: its prompt version is always known. */
export type ServedAgent = AgentDefinition & { promptVersion: string };

const byVersion = new Intl.Collator('en', { numeric: true }).compare;

/** The agents this planner serves, every version of each; runs are pinned to one and decided only by it. */
export class AgentRegistry {
  readonly #agents = new Map<string, ServedAgent[]>();
  readonly prices: Record<string, ModelPrice>;

  constructor(file: AgentsFile) {
    const parsed = AgentsFileSchema.safeParse(file);
    if (!parsed.success) {
      throw new DuraError(
        'invalid_agents',
        `the agent definitions are invalid:\n  ${formatIssues(parsed.error).join('\n  ')}`,
      );
    }
    for (const agent of parsed.data.agents) {
      const versions = this.#agents.get(agent.name) ?? [];
      if (versions.some((v) => v.version === agent.version))
        throw new DuraError(
          'invalid_agents',
          `agent ${agent.name} version ${agent.version} is defined twice`,
        );
      const promptVersion = agent.promptVersion ?? promptHash(agent.systemPrompt);
      versions.push({ ...agent, promptVersion });
      versions.sort((a, b) => byVersion(a.version, b.version));
      this.#agents.set(agent.name, versions);
    }
    this.prices = parsed.data.prices;
  }

  /** No agents: only scripted runs can be decided. */
  static empty(): AgentRegistry {
    return new AgentRegistry({ agents: [] });
  }

  names(): string[] {
    return [...this.#agents.keys()].sort();
  }

  versions(name: string): string[] {
    return (this.#agents.get(name) ?? []).map((agent) => agent.version);
  }

  /** The named agent at `version`, or its newest version; undefined when this planner does not serve it. */
  get(name: string, version?: string): ServedAgent | undefined {
    const versions = this.#agents.get(name);
    if (!versions) return undefined;
    return version === undefined ? versions.at(-1) : versions.find((agent) => agent.version === version);
  }

  /** Whether a run pinned to `pinned` may be decided here: same agent, version and prompt version. */
  serves(pinned: PinnedVersion): boolean {
    const agent = this.get(pinned.agent, pinned.version);
    return agent !== undefined && agent.promptVersion === pinned.promptVersion;
  }
}

export function promptHash(prompt: string): string {
  return createHash('sha256').update(prompt).digest('hex').slice(0, 12);
}

/**
 * Loads agent definitions from a JSON file, or from a module (`.ts`, `.js`, `.mjs`) whose default export is
 * the same shape. Errors name the file and every problem in it.
 */
export async function loadAgentRegistry(path: string | undefined): Promise<AgentRegistry> {
  return (await loadAgents(path)).registry;
}

/**
 * The JSON agents (a JSON file, or a module's default export of that shape) and the code agents (a module's
 * exports made with `defineAgent`) that `DURA_AGENTS` names.
 */
export async function loadAgents(
  path: string | undefined,
): Promise<{ registry: AgentRegistry; codeAgents: AnyCodeAgent[] }> {
  if (path === undefined || path === '') return { registry: AgentRegistry.empty(), codeAgents: [] };
  const absolute = resolvePath(path);
  let file: unknown;
  let codeAgents: AnyCodeAgent[] = [];
  try {
    if (extname(absolute) === '.json') file = JSON.parse(await readFile(absolute, 'utf8'));
    else {
      const module = (await import(pathToFileURL(absolute).href)) as Record<string, unknown>;
      codeAgents = codeAgentsOf(module);
      file = module['default'];
      // A module of code agents only needs no JSON agents.
      if (codeAgents.length > 0 && (file === undefined || isCodeAgent(file) || Array.isArray(file)))
        file = { agents: [] };
    }
  } catch (err) {
    throw new DuraError(
      CONFIG_ERROR_CODE,
      `cannot load agent definitions from ${absolute} (DURA_AGENTS): ${(err as Error).message}${unresolvedImport(err)}`,
      { cause: err },
    );
  }
  try {
    return { registry: new AgentRegistry(file as AgentsFile), codeAgents };
  } catch (err) {
    // Definitions the planner cannot serve are bad configuration: the service stops with exit code 2.
    if (err instanceof DuraError)
      throw new DuraError(CONFIG_ERROR_CODE, `${absolute} (DURA_AGENTS): ${err.message}`, { cause: err });
    throw err;
  }
}

/** What to do when the module imports a package its own folder cannot resolve (zod, the Dura SDK). */
function unresolvedImport(err: unknown): string {
  const code = (err as { code?: unknown }).code;
  if (code !== 'MODULE_NOT_FOUND' && code !== 'ERR_MODULE_NOT_FOUND') return '';
  return (
    '\n  A module outside the Dura checkout resolves its imports from its own folder: give its project a ' +
    "package.json that depends on zod and Dura's SDK packages, and npm install there " +
    '(docs/own-repository.md shows such a project).'
  );
}

/** Declares agents in a module: `export default defineAgents({ agents: [...], prices: {...} })`. */
export function defineAgents(file: AgentsFile): AgentsFile {
  return file;
}
