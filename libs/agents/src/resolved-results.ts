import { DuraError, type JsonValue } from '@dura/contracts';
import { callsOfKind, type RunState } from '@dura/core';
import type { PayloadAccess } from './payload-access';

/**
 * The state with offloaded results fetched back in (hash-checked), for readers that need the values
 * themselves, such as plan references (`$steps.2.report`). Returns `state` itself when nothing is offloaded.
 */
export async function withResolvedResults(
  state: RunState,
  payloads: PayloadAccess | undefined,
): Promise<RunState> {
  if (callsOfKind('offloaded', state.calls).length === 0) return state;
  if (!payloads)
    throw new DuraError(
      'payloads_unavailable',
      'a tool result is in the object store but this planner cannot read it',
    );
  const calls = await Promise.all(
    state.calls.map(async (call) =>
      call.resultRef
        ? { ...call, result: JSON.parse(await payloads.resolveText(call.resultRef)) as JsonValue }
        : call,
    ),
  );
  return { ...state, calls };
}
