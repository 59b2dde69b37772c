import type { LiveText } from '@dura/contracts';
import type { ChatRequest } from './types';

/** The streaming options of a chat request whose text goes to `live` as model call `call` (none without it). */
export function liveOptions(
  live: LiveText | undefined,
  call: number,
): Pick<ChatRequest, 'onDelta' | 'onRestart'> {
  if (!live) return {};
  return { onDelta: (text) => live.delta(call, text), onRestart: () => live.restart(call) };
}
