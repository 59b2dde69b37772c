import { createHttpRequestTool } from './builtin/http-request';
import { BUILTIN_TOOLS } from './builtin-registry';
import { egressPolicyFrom, type HttpRequestSettings } from './egress/egress-config';
import { loadToolRegistry, toolModulesFrom } from './load-registry';
import type { ToolRegistry } from './registry';
import { secretsBoxFor, type SecretsBox } from './secrets/secrets-box';
import type { ToolDefinition } from './tool';

/** The settings the planner and every gateway share for their tools (see their config schemas). */
export interface ServiceToolsConfig extends HttpRequestSettings {
  DURA_TOOLS_MODULES?: string | undefined;
  DURA_SECRETS_KEY?: string | undefined;
  DURA_SECRETS_PREVIOUS_KEYS?: string | undefined;
}

/** The built-in tools this deployment runs: `http.request` only when it opts in, under its egress policy. */
export function builtinToolsFor(config: HttpRequestSettings): readonly ToolDefinition[] {
  if (config.DURA_HTTP_REQUEST_ENABLED !== true) return BUILTIN_TOOLS;
  return [...BUILTIN_TOOLS, createHttpRequestTool({ policy: egressPolicyFrom(config) })];
}

/**
 * The tools a service runs with and the box for their secret fields. Throws a config error (exit code 2)
 * on a malformed key, or on a missing one when a tool declares secret fields.
 */
export async function loadServiceTools(
  service: string,
  config: ServiceToolsConfig,
): Promise<{ tools: ToolRegistry; secrets: SecretsBox | undefined }> {
  const tools = await loadToolRegistry(toolModulesFrom(config.DURA_TOOLS_MODULES), builtinToolsFor(config));
  const secrets = secretsBoxFor(
    service,
    tools.withSecrets(),
    config.DURA_SECRETS_KEY,
    config.DURA_SECRETS_PREVIOUS_KEYS,
  );
  return { tools, secrets };
}
