import { duraMeter } from '@dura/service-kit';
import { DURA_ATTRS, DURA_METRICS, declareHistogram, recordError } from '@dura/telemetry';
import { context as otelContext, trace, type Context, type Tracer } from '@opentelemetry/api';

/** The span of one decision: the intents it records and the calls they dispatch hang under it. */
export interface Decision {
  ctx: Context;
  recorded(): void;
  /** Its thought (or the model's refusal) is in the log: the drive's next model call is another decision. */
  readonly decided: boolean;
  end(err: unknown): void;
}

/**
 * Opens the span of one decision; `recorded()` times it, `end()` closes it once the drive is done. The
 * histogram is declared here, once, when the driver is built (after the service started its telemetry).
 */
export function createDecisionSpans(tracer: Tracer): (runId: string, step: number) => Decision {
  const decisionDuration = declareHistogram(duraMeter(), DURA_METRICS.decisionDuration);
  return function startDecision(runId, step) {
    const span = tracer.startSpan('dura.decision', {
      attributes: { [DURA_ATTRS.runId]: runId, 'dura.run.step': step },
    });
    const stop = decisionDuration.startTimer();
    let timed = false;
    return {
      ctx: trace.setSpan(otelContext.active(), span),
      get decided() {
        return timed;
      },
      recorded: () => {
        if (!timed) stop({ outcome: 'recorded' });
        timed = true;
      },
      end: (err) => {
        if (err !== undefined) recordError(span, err);
        if (!timed) stop({ outcome: err === undefined ? 'superseded' : 'failed' });
        span.end();
      },
    };
  };
}
