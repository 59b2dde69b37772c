import type { PayloadRef, RunEvent } from '@dura/contracts';

const MAX_DETAIL = 110;

/** One human line per event, for following a run in a terminal. */
export function formatEvent(event: RunEvent): string {
  const head = `#${String(event.seq).padStart(4)}  ${event.type.padEnd(20)}`;
  return `${head} ${truncate(detail(event))}`;
}

function detail(event: RunEvent): string {
  switch (event.type) {
    case 'run_requested': {
      const agent = event.data.request.agent;
      return agent.kind === 'scripted'
        ? `agent=scripted steps=${agent.steps.length}`
        : `agent=${agent.name}${agent.version ? `@${agent.version}` : ''}`;
    }
    case 'thought':
      return `${event.data.content ?? ''} (${event.data.model.id}, ${event.data.finishReason})`;
    case 'tool_call_requested':
      return `step ${event.data.step} ${event.data.tool} ${event.data.argsRef ? refText(event.data.argsRef) : JSON.stringify(event.data.args)}`;
    case 'tool_call_completed':
      return `${event.data.callId} -> ${event.data.resultRef ? refText(event.data.resultRef) : JSON.stringify(event.data.result)} (${event.data.durationMs} ms)`;
    case 'tool_call_failed':
      return `${event.data.callId} attempt ${event.data.attempt}: ${event.data.error.message}`;
    case 'run_completed':
      return `output ${JSON.stringify(event.data.output ?? null)}`;
    case 'run_failed':
    case 'run_rejected':
      return `${event.data.error.code}: ${event.data.error.message}`;
    default:
      return JSON.stringify(event.data);
  }
}

function truncate(text: string): string {
  return text.length > MAX_DETAIL ? `${text.slice(0, MAX_DETAIL - 1)}…` : text;
}

/** A payload kept in the object store, as the event holds it. */
function refText(ref: PayloadRef): string {
  return `object store sha256:${ref.sha256.slice(0, 12)}… (${ref.size} bytes)`;
}
