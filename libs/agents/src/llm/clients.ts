import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import type { ResolvedSettings } from './retry';

/**
 * The providers' official clients, set up as Dura's transport and nothing more:
 * - `maxRetries: 0`: retries are Dura's (`withRetries`), with its backoff, classification and limits; the
 *   client never sends a request twice on its own;
 * - only the key and headers Dura was given: no key, organisation or project picked up from the environment,
 *   no credential files or profiles of the machine (a gateway at `baseUrl` must never receive a key meant for
 *   someone else). The clients still merge `OPENAI_CUSTOM_HEADERS` / `ANTHROPIC_CUSTOM_HEADERS` under the
 *   configured headers when an operator sets them;
 * - no logging and no spans of their own: failures come back as `DuraError`s, the planner traces model calls.
 * `timeout` bounds the wait for the answer's head; Dura's attempt limit (`attemptOnce`) covers the whole body.
 */
export function openAIClient(settings: ResolvedSettings, baseUrl: string): OpenAI {
  return new OpenAI({
    baseURL: baseUrl,
    // The client refuses to start without a key, and compatible servers (Ollama, vLLM) often need none: a
    // placeholder stands in, and the header it would make is removed.
    apiKey: settings.apiKey ?? 'no-key',
    adminAPIKey: null,
    organization: null,
    project: null,
    webhookSecret: null,
    defaultHeaders: { ...(settings.apiKey ? {} : { authorization: null }), ...settings.headers },
    maxRetries: 0,
    timeout: clientTimeout(settings),
    fetch: settings.fetch,
    logLevel: 'off',
  });
}

/**
 * The Anthropic client sends the key in `x-api-key` (the Messages API's documented header, which compatible
 * gateways expect too), never as a bearer token, and resolves no credential of its own.
 */
export function anthropicClient(settings: ResolvedSettings, baseUrl: string, version: string): Anthropic {
  return new ExplicitCredentialsAnthropic({
    baseURL: baseUrl,
    apiKey: null,
    authToken: null,
    webhookKey: null,
    defaultHeaders: {
      'anthropic-version': version,
      ...(settings.apiKey ? { 'x-api-key': settings.apiKey } : { authorization: null }),
      ...settings.headers,
    },
    maxRetries: 0,
    timeout: clientTimeout(settings),
    fetch: settings.fetch,
    logLevel: 'off',
    openTelemetry: false,
  });
}

class ExplicitCredentialsAnthropic extends Anthropic {
  // The client's default chain would read credential files and profiles of the machine when no key is given.
  protected override _shouldResolveDefaultCredentials(): boolean {
    return false;
  }
}

// The clients want a positive whole number; Dura accepts 0 ms (every attempt times out at once).
const clientTimeout = (settings: ResolvedSettings): number => Math.max(1, Math.ceil(settings.timeoutMs));
