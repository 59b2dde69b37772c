import { afterEach, describe, expect, it } from 'vitest';
import { createMetrics, DURA_METRICS, type Metrics } from '../src/index';

let metrics: Metrics | undefined;
afterEach(async () => {
  await metrics?.shutdown();
  metrics = undefined;
});

/** The sample lines of one metric family, without HELP/TYPE/UNIT comments. */
function samples(text: string, family: string): string[] {
  return text.split('\n').filter((line) => line.startsWith(`${family}{`) || line.startsWith(`${family} `));
}

describe('Prometheus rendering', () => {
  it('renders a counter as <name>_total with its labels and the summed value', async () => {
    metrics = await createMetrics({ service: 'tool-gateway', version: '0.1.0' });
    const deduped = metrics.counter(DURA_METRICS.effectsDeduplicated);
    deduped.add(1, { tool: 'charge' });
    deduped.add(1, { tool: 'charge' });
    deduped.add(1, { tool: 'send_mail' });

    const text = await metrics.render();

    expect(text).toContain('# TYPE dura_effects_deduplicated_total counter');
    expect(text).toContain(
      `# HELP dura_effects_deduplicated_total ${DURA_METRICS.effectsDeduplicated.description}`,
    );
    expect(samples(text, 'dura_effects_deduplicated_total')).toEqual([
      'dura_effects_deduplicated_total{tool="charge",otel_scope_name="dura"} 2',
      'dura_effects_deduplicated_total{tool="send_mail",otel_scope_name="dura"} 1',
    ]);
  });

  it('renders a histogram as _bucket (cumulative, seconds boundaries), _sum and _count', async () => {
    metrics = await createMetrics({ service: 'planner' });
    const decisions = metrics.histogram(DURA_METRICS.decisionDuration);
    decisions.record(0.2, { outcome: 'decided' });
    decisions.record(3, { outcome: 'decided' });

    const text = await metrics.render();

    expect(text).toContain('# TYPE dura_decision_duration_seconds histogram');
    expect(text).toContain('# UNIT dura_decision_duration_seconds s');
    const labels = 'outcome="decided",otel_scope_name="dura"';
    expect(samples(text, 'dura_decision_duration_seconds_count')).toEqual([
      `dura_decision_duration_seconds_count{${labels}} 2`,
    ]);
    expect(samples(text, 'dura_decision_duration_seconds_sum')).toEqual([
      `dura_decision_duration_seconds_sum{${labels}} 3.2`,
    ]);
    const buckets = samples(text, 'dura_decision_duration_seconds_bucket');
    expect(buckets).toContain(`dura_decision_duration_seconds_bucket{${labels},le="0.1"} 0`);
    expect(buckets).toContain(`dura_decision_duration_seconds_bucket{${labels},le="0.25"} 1`);
    expect(buckets).toContain(`dura_decision_duration_seconds_bucket{${labels},le="2.5"} 1`);
    expect(buckets).toContain(`dura_decision_duration_seconds_bucket{${labels},le="5"} 2`);
    expect(buckets.at(-1)).toBe(`dura_decision_duration_seconds_bucket{${labels},le="+Inf"} 2`);
  });

  it('records elapsed seconds with startTimer', async () => {
    metrics = await createMetrics({ service: 'tool-gateway' });
    const stop = metrics.histogram(DURA_METRICS.toolCallDuration).startTimer();
    await new Promise((resolve) => setTimeout(resolve, 20));
    const seconds = stop({ tool: 'charge', outcome: 'ok' });

    expect(seconds).toBeGreaterThanOrEqual(0.015);
    expect(seconds).toBeLessThan(5);
    const text = await metrics.render();
    expect(samples(text, 'dura_tool_call_duration_seconds_count')).toEqual([
      'dura_tool_call_duration_seconds_count{tool="charge",outcome="ok",otel_scope_name="dura"} 1',
    ]);
  });

  it('reads gauges at render time, and one failing observer does not hide the others', async () => {
    metrics = await createMetrics({ service: 'projector' });
    let running = 3;
    metrics.gauge(DURA_METRICS.runsByStatus, (observe) => {
      observe(running, { status: 'running' });
      observe(1, { status: 'completed' });
    });
    metrics.gauge(DURA_METRICS.outboxLag, async () => {
      await Promise.resolve();
      throw new Error('database away');
    });
    let pendingReads = 0;
    const pending = metrics.gauge(DURA_METRICS.outboxPending, (observe) => {
      pendingReads += 1;
      observe(5);
    });

    expect(samples(await metrics.render(), 'dura_runs')).toEqual([
      'dura_runs{status="running",otel_scope_name="dura"} 3',
      'dura_runs{status="completed",otel_scope_name="dura"} 1',
    ]);
    running = 4;
    pending.remove();
    const text = await metrics.render();
    expect(samples(text, 'dura_runs')[0]).toBe('dura_runs{status="running",otel_scope_name="dura"} 4');
    expect(samples(text, 'dura_outbox_lag_seconds')).toEqual([]);
    // A removed observer is not asked again (the SDK keeps showing its last value, as cumulative series do).
    expect(pendingReads).toBe(1);
  });

  it('names the service once, on target_info', async () => {
    metrics = await createMetrics({
      service: 'planner',
      version: '1.2.3',
      resourceAttributes: { 'deployment.environment.name': 'test' },
    });
    metrics.counter(DURA_METRICS.conflictsLost).add(1);

    const text = await metrics.render();

    const [targetInfo] = samples(text, 'target_info');
    expect(targetInfo).toMatch(/^target_info\{.*service_name="planner".*\} 1$/);
    expect(targetInfo).toContain('service_version="1.2.3"');
    expect(targetInfo).toContain('deployment_environment_name="test"');
    expect(samples(text, 'dura_decision_conflicts_lost_total')).toEqual([
      'dura_decision_conflicts_lost_total{otel_scope_name="dura"} 1',
    ]);
  });

  it('checks label sets at compile time', async () => {
    metrics = await createMetrics({ service: 'planner' });
    const retries = metrics.counter(DURA_METRICS.retries);
    const conflicts = metrics.counter(DURA_METRICS.conflictsLost);

    // @ts-expect-error a metric with labels needs all of them
    retries.add(1);
    // @ts-expect-error an unknown label is refused
    retries.add(1, { operation: 'append', extra: 'x' });
    // @ts-expect-error a metric without labels takes none
    conflicts.add(1, { any: 'x' });
    retries.add(1, { operation: 'append' });

    expect(samples(await metrics.render(), 'dura_retries_total')).toContain(
      'dura_retries_total{operation="append",otel_scope_name="dura"} 1',
    );
  });
});
