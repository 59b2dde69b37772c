import * as z from 'zod';
import { ChatMessageSchema, ToolNameSchema, formatIssues, type JsonObject } from '@dura/contracts';
import { AgentMisuse } from './errors';

/**
 * Where a code agent's `ctx.model` calls are answered: an OpenAI-compatible server or Anthropic, with the
 * same settings a JSON agent declares. Connection settings (`baseUrl`, `apiKeyEnv`, attempts, timeout) are
 * not part of a request's hash; the model id, `maxTokens` and `temperature` are.
 */
export const CodeModelSettingsSchema = z.strictObject({
  provider: z.enum(['openai', 'anthropic']),
  /** The provider's model id, e.g. `gpt-4o-mini`, `claude-sonnet-4-5`, or what a local server serves. */
  model: z.string().min(1),
  /** OpenAI-compatible servers (vLLM, Ollama, LM Studio): their `/v1` URL. */
  baseUrl: z.url().optional(),
  /** The environment variable holding the API key; the key itself never appears in code or logs. */
  apiKeyEnv: z
    .string()
    .regex(/^[A-Z_][A-Z0-9_]*$/, 'apiKeyEnv names an environment variable, e.g. OPENAI_API_KEY')
    .optional(),
  /** The most tokens one answer may have, unless a request says fewer; what a call's budget reserves. */
  maxTokens: z.number().int().positive().default(1024),
  temperature: z.number().min(0).max(2).optional(),
  maxAttempts: z.number().int().positive().max(20).optional(),
  timeoutMs: z.number().int().positive().optional(),
});
export type CodeModelSettings = z.infer<typeof CodeModelSettingsSchema>;
export type CodeModelSettingsInput = z.input<typeof CodeModelSettingsSchema>;

/**
 * What `ctx.model` takes: a conversation (`prompt`: one more user message after `messages`), optionally the
 * agent's tools the model may ask for (their JSON schemas are sent), and per-call limits.
 */
export const ModelRequestSchema = z
  .strictObject({
    system: z.string().optional(),
    /** One user message. */
    prompt: z.string().optional(),
    messages: z.array(ChatMessageSchema).optional(),
    /** Tools (declared in the agent's `tools`) the model may ask to call; its answer carries `toolCalls`. */
    tools: z.array(ToolNameSchema).optional(),
    /** Another model id of the agent's provider, to route a call to a cheaper or stronger model. */
    model: z.string().min(1).optional(),
    maxTokens: z.number().int().positive().optional(),
    temperature: z.number().min(0).max(2).optional(),
  })
  .refine((r) => r.prompt !== undefined || (r.messages?.length ?? 0) > 0, {
    message: 'give a prompt or a non-empty messages list',
  });
export type ModelRequest = z.input<typeof ModelRequestSchema>;

/**
 * The call as the planner makes it and the log hashes it: the request with the agent's model settings
 * applied. A replay that would send anything else at a recorded position is non-determinism.
 */
export interface ResolvedModelRequest extends JsonObject {
  provider: CodeModelSettings['provider'];
  model: string;
  messages: z.infer<typeof ChatMessageSchema>[];
  tools: string[];
  maxTokens: number;
}

/** Validates `request` against the agent's model settings and tools; throws `AgentMisuse` saying what to fix. */
export function resolveModelRequest(
  agent: { name: string; version: string; tools: readonly string[]; model?: CodeModelSettings },
  request: unknown,
): ResolvedModelRequest {
  const who = `${agent.name}@${agent.version}`;
  if (!agent.model)
    throw new AgentMisuse(
      `code agent ${who} calls ctx.model but declares no model: add ` +
        "defineAgent({ model: { provider: 'openai', model: 'gpt-4o-mini', apiKeyEnv: 'OPENAI_API_KEY' } })",
    );
  const parsed = ModelRequestSchema.safeParse(request);
  if (!parsed.success)
    throw new AgentMisuse(
      `ctx.model of ${who}: the request is invalid: ${formatIssues(parsed.error).join('; ')}`,
    );
  const r = parsed.data;
  const tools = r.tools ?? [];
  const undeclared = tools.filter((tool) => !agent.tools.includes(tool));
  if (undeclared.length > 0)
    throw new AgentMisuse(
      `ctx.model of ${who} offers tools the agent does not declare (${undeclared.join(', ')}): ` +
        `add them to its tools (declared: ${agent.tools.join(', ') || 'none'})`,
    );
  const messages = [
    ...(r.system === undefined ? [] : [{ role: 'system' as const, content: r.system }]),
    ...(r.messages ?? []),
    ...(r.prompt === undefined ? [] : [{ role: 'user' as const, content: r.prompt }]),
  ];
  const temperature = r.temperature ?? agent.model.temperature;
  return {
    provider: agent.model.provider,
    model: r.model ?? agent.model.model,
    messages,
    tools,
    maxTokens: r.maxTokens ?? agent.model.maxTokens,
    ...(temperature === undefined ? {} : { temperature }),
  };
}
