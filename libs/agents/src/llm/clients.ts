import type Anthropic from '@anthropic-ai/sdk';
import type OpenAI from 'openai';
import { anthropicProblem, openAIProblem, type RequestProblem } from './client-errors';
import type { ResolvedSettings } from './retry';

/** A provider's official client, and what its errors say about a request. */
export interface Transport<C> {
  readonly client: C;
  /** Undefined for errors that are not about the request (a setting the client refuses: a bug). */
  readonly problem: (err: unknown) => RequestProblem | undefined;
}

/**
 * The transport, created on the first call: loading an SDK takes hundreds of milliseconds that the CLI, replay
 * and scripted agents, which import the adapters but never call a model, should not pay. It is loaded before
 * an attempt starts, so loading never counts against the attempt's time limit.
 */
export type LazyTransport<C> = () => Promise<Transport<C>>;

/*
 * The clients are set up as Dura's transport and nothing more:
 * - `maxRetries: 0`: retries are Dura's (`withRetries`), with its backoff, classification and limits; a client
 *   never sends a request twice on its own;
 * - only the key and headers Dura was given: no key, organisation or project from the environment, no
 *   credential files or profiles of the machine (a gateway at `baseUrl` must never receive a key meant for
 *   someone else). The clients still merge `OPENAI_CUSTOM_HEADERS` / `ANTHROPIC_CUSTOM_HEADERS` under the
 *   configured headers when an operator sets them;
 * - no logging and no spans of their own: failures come back as `DuraError`s, the planner traces model calls.
 * Their `timeout` bounds the wait for the answer's head; Dura's attempt limit (`attemptOnce`) covers the body.
 */

export function openAITransport(settings: ResolvedSettings, baseUrl: string): LazyTransport<OpenAI> {
  return lazyTransport(
    () => import('openai'),
    (sdk) =>
      new sdk.OpenAI({
        baseURL: baseUrl,
        // The client refuses to start without a key, and compatible servers (Ollama, vLLM) often need none:
        // a placeholder stands in, and the header it would make is removed.
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
      }),
    openAIProblem,
  );
}

/**
 * The Anthropic client sends the key in `x-api-key` (the Messages API's documented header, which compatible
 * gateways expect too), never as a bearer token, and resolves no credential of its own.
 */
export function anthropicTransport(
  settings: ResolvedSettings,
  baseUrl: string,
  version: string,
): LazyTransport<Anthropic> {
  return lazyTransport(
    () => import('@anthropic-ai/sdk'),
    (sdk) => {
      class ExplicitCredentialsAnthropic extends sdk.Anthropic {
        // The default chain would read credential files and profiles of the machine when no key is given.
        protected override _shouldResolveDefaultCredentials(): boolean {
          return false;
        }
      }
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
    },
    anthropicProblem,
  );
}

function lazyTransport<M, C>(
  load: () => Promise<M>,
  create: (sdk: M) => C,
  problem: (sdk: M, err: unknown) => RequestProblem | undefined,
): LazyTransport<C> {
  let transport: Promise<Transport<C>> | undefined;
  return () =>
    (transport ??= load().then((sdk) => ({ client: create(sdk), problem: (err) => problem(sdk, err) })));
}

// The clients want a positive whole number; Dura accepts 0 ms (every attempt times out at once).
const clientTimeout = (settings: ResolvedSettings): number => Math.max(1, Math.ceil(settings.timeoutMs));
