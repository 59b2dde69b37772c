import { duraMeter } from '@dura/service-kit';
import { DURA_METRICS, declareCounter, declareHistogram } from '@dura/telemetry';
import type { LimitName } from '@dura/core';

/** Flow control's metrics: calls admitted, waits recorded (and how long each is set to last), 429 throttles. */
export function flowMetrics() {
  const meter = duraMeter();
  const admitted = declareCounter(meter, DURA_METRICS.flowAdmitted);
  const waits = declareCounter(meter, DURA_METRICS.flowWaits);
  const waitSeconds = declareHistogram(meter, DURA_METRICS.flowWaitSeconds);
  const throttled = declareCounter(meter, DURA_METRICS.flowThrottled);
  return {
    admitted: (labels: { model: string; tenant: string }) => admitted.add(1, labels),
    waited(
      labels: { model: string; key: string; tenant: string; limit: LimitName | 'concurrency key' },
      seconds: number,
    ) {
      waits.add(1, labels);
      waitSeconds.record(Math.max(0, seconds), {
        model: labels.model,
        key: labels.key,
        tenant: labels.tenant,
      });
    },
    throttled: (model: string) => throttled.add(1, { model }),
  };
}
