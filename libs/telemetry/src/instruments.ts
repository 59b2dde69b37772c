/**
 * Typed metric declarations over the OpenTelemetry Meter. A spec names its label keys once, and the compiler
 * then refuses a data point with a missing or unknown label, which is how Prometheus series stay consistent
 * (a label set that varies between calls splits one metric into several half-empty ones).
 */
import type { Meter } from '@opentelemetry/api';

export interface MetricSpec<L extends string = never> {
  /** The Prometheus name without the `_total` a counter gets, e.g. `dura_tool_call_duration_seconds`. */
  name: string;
  description: string;
  /** UCUM unit, e.g. `s`; shown as `# UNIT`, never appended to the name by the exporter. */
  unit?: string;
  labels: readonly L[];
}

export interface HistogramSpec<L extends string = never> extends MetricSpec<L> {
  /** Bucket upper bounds; default suits durations in seconds. */
  boundaries?: readonly number[];
}

export type Labels<L extends string> = { readonly [K in L]: string | number | boolean };
/** No argument for a metric without labels, a full label set otherwise. */
type LabelArgs<L extends string> = [L] extends [never] ? [] : [labels: Labels<L>];

export interface CounterInstrument<L extends string> {
  /** Adds a non-negative amount. */
  add(value: number, ...labels: LabelArgs<L>): void;
}

export interface HistogramInstrument<L extends string> {
  record(value: number, ...labels: LabelArgs<L>): void;
  /** Starts a clock; the returned function records the seconds elapsed since, with the labels known by then. */
  startTimer(): (...labels: LabelArgs<L>) => number;
}

export type GaugeObserver<L extends string> = (
  observe: (value: number, ...labels: LabelArgs<L>) => void,
) => void | Promise<void>;

export interface GaugeInstrument {
  /** Stops calling the observer (e.g. when the resource it reads is closed). */
  remove(): void;
}

/** Latency buckets in seconds, from 5 ms (a cached effect) to 2 min (a slow model call). */
export const DEFAULT_SECONDS_BOUNDARIES: readonly number[] = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120,
];

/** A monotonic counter: Prometheus shows it as `<name>_total`. */
export function declareCounter<L extends string = never>(
  meter: Meter,
  spec: MetricSpec<L>,
): CounterInstrument<L> {
  const counter = meter.createCounter(spec.name, { description: spec.description, unit: spec.unit });
  return { add: (value, ...labels) => counter.add(value, labels[0]) };
}

/** A histogram: Prometheus shows `<name>_bucket{le=...}`, `<name>_sum` and `<name>_count`. */
export function declareHistogram<L extends string = never>(
  meter: Meter,
  spec: HistogramSpec<L>,
): HistogramInstrument<L> {
  const histogram = meter.createHistogram(spec.name, {
    description: spec.description,
    unit: spec.unit,
    advice: { explicitBucketBoundaries: [...(spec.boundaries ?? DEFAULT_SECONDS_BOUNDARIES)] },
  });
  return {
    record: (value, ...labels) => histogram.record(value, labels[0]),
    startTimer: () => {
      const started = performance.now();
      return (...labels) => {
        const seconds = (performance.now() - started) / 1000;
        histogram.record(seconds, labels[0]);
        return seconds;
      };
    },
  };
}

/**
 * A gauge read at scrape time: `observer` reports current values (e.g. consumer pending counts, outbox lag).
 * An observer that throws or rejects loses only its own values for that scrape.
 */
export function declareGauge<L extends string = never>(
  meter: Meter,
  spec: MetricSpec<L>,
  observer: GaugeObserver<L>,
): GaugeInstrument {
  const gauge = meter.createObservableGauge(spec.name, { description: spec.description, unit: spec.unit });
  const callback = async (result: { observe(value: number, attributes?: Labels<L>): void }) => {
    await observer((value, ...labels) => result.observe(value, labels[0]));
  };
  gauge.addCallback(callback);
  return { remove: () => gauge.removeCallback(callback) };
}
