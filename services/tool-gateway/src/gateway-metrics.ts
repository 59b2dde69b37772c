import { duraMeter } from '@dura/service-kit';
import { DURA_METRICS, declareCounter, declareHistogram } from '@dura/telemetry';

/** The instruments a gateway's calls record to. */
export function createGatewayMetrics() {
  return {
    toolDuration: declareHistogram(duraMeter(), DURA_METRICS.toolCallDuration),
    deduplicated: declareCounter(duraMeter(), DURA_METRICS.effectsDeduplicated),
    retries: declareCounter(duraMeter(), DURA_METRICS.retries),
  };
}

export type GatewayMetrics = ReturnType<typeof createGatewayMetrics>;
