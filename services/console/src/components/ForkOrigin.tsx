import type { RunEvent } from '@dura/contracts';
import { runPath } from '../model/router';
import { Link } from './Link';

const short = (sha256: string) => `sha256 ${sha256.slice(0, 12)}…`;

/**
 * Where a forked run came from (its source run and the source's event it was forked at) and, for a fork with
 * edited state, what was edited, by whom, and the hash of the value it replaced: as its `run_requested` says.
 */
export function ForkOrigin({ first }: { first: RunEvent | undefined }) {
  if (first?.type !== 'run_requested' || !first.data.forkOf) return null;
  const { runId, atSeq, edited } = first.data.forkOf;
  return (
    <div className={edited ? 'fork-origin edited' : 'fork-origin'} data-testid="fork-origin">
      <span>
        Forked from <Link to={runPath(runId)}>{runId}</Link> at its event seq {atSeq}
      </span>
      {edited && (
        <ul data-testid="fork-edited">
          {edited.input && (
            <li>
              <strong>Edited input</strong> by {edited.by}
              {edited.input.originalSha256
                ? ` (replaced ${short(edited.input.originalSha256)})`
                : ' (it had none)'}
            </li>
          )}
          {edited.toolResult && (
            <li>
              <strong>Edited result of {edited.toolResult.callId}</strong> by {edited.by} (from seq{' '}
              {edited.toolResult.sourceSeq} of {runId}, replaced {short(edited.toolResult.originalSha256)});
              the call was not run again
            </li>
          )}
        </ul>
      )}
    </div>
  );
}
