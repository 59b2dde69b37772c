import { createHash } from 'node:crypto';
import { decisionEventId } from '@dura/core';

/**
 * The ids of a decision's events, appended after the event at `afterSeq`: their place (`<run>@<seq>.<n>`) and a
 * tag of what they say. The id is the append's `Nats-Msg-Id`, so a retry of the same append is dropped as a
 * duplicate. Two drives that decided different things at the same place must not share ids: the second's
 * first event would be taken for a duplicate of the first's, and its later events, sent in the same breath
 * and expecting that id as the stream's last, could land behind the other drive's event. With the tag, the
 * second drive's first event is refused by its sequence and the rest by the id they expect.
 */
export function decisionIds(
  runId: string,
  afterSeq: number,
  drafts: readonly { type: string; data: unknown }[],
): string[] {
  const tag = createHash('sha256')
    .update(JSON.stringify(drafts.map((draft) => [draft.type, draft.data])))
    .digest('hex')
    .slice(0, 12);
  return drafts.map((_, index) => `${decisionEventId(runId, afterSeq, index)}~${tag}`);
}
