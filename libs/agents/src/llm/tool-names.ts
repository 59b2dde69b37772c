import type { ChatMessage } from '@dura/contracts';
import type { ChatToolSpec } from './types';

/** What OpenAI and Anthropic accept as a tool name. */
const PROVIDER_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const HASH_SEPARATOR = '___';

/**
 * The provider-side name of a Dura tool: `pay.charge` → `pay__charge`. A name whose plain form would not map
 * back to it (`my__tool`, `a_.b`) or would be too long gets `<prefix>___<hash>` instead, which no plain form
 * can equal (a plain form never contains three underscores in a row); only `ToolNames` maps that back.
 */
export function providerToolName(duraName: string): string {
  const plain = duraName.replaceAll('.', '__');
  if (PROVIDER_NAME.test(plain) && duraToolName(plain) === duraName) return plain;
  const hash = fnv1a(duraName).toString(36);
  const prefix = duraName.replace(/[^a-zA-Z0-9-]+/g, '_').slice(0, 64 - HASH_SEPARATOR.length - hash.length);
  return `${prefix}${HASH_SEPARATOR}${hash}`;
}

/** The inverse of the plain form: `pay__charge` → `pay.charge`. */
export function duraToolName(providerName: string): string {
  return providerName.replaceAll('__', '.');
}

/** Maps tool names both ways for one call, including hashed names of the tools the call offers. */
export class ToolNames {
  readonly #toDura = new Map<string, string>();

  constructor(duraNames: Iterable<string>) {
    for (const name of duraNames) {
      const provider = providerToolName(name);
      const known = this.#toDura.get(provider);
      if (known !== undefined && known !== name)
        throw new Error(
          `tools "${known}" and "${name}" map to the same provider tool name "${provider}"; rename one`,
        );
      this.#toDura.set(provider, name);
    }
  }

  /** The names of the tools offered and of every tool the conversation mentions. */
  static forCall(tools: readonly ChatToolSpec[], messages: readonly ChatMessage[]): ToolNames {
    const names = tools.map((tool) => tool.name);
    for (const message of messages) {
      if (message.role === 'tool') names.push(message.name);
      if (message.role === 'assistant') names.push(...(message.toolCalls ?? []).map((call) => call.name));
    }
    return new ToolNames(names);
  }

  toProvider(duraName: string): string {
    return providerToolName(duraName);
  }

  toDura(providerName: string): string {
    return this.#toDura.get(providerName) ?? duraToolName(providerName);
  }
}

/** 32-bit FNV-1a: short, stable, and enough to tell a handful of long tool names apart. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}
