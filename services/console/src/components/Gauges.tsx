import type { z } from 'zod';
import type { RunStateSummarySchema } from '@dura/contracts';

type RunStateSummary = z.infer<typeof RunStateSummarySchema>;

/** The run's budgets: how much of each limit is used (and reserved for a model call in flight). */
export function Gauges({ run }: { run: RunStateSummary }) {
  const { limits, costUsd, reserved } = run.budget;
  const tokens = run.usage.inputTokens + run.usage.outputTokens;
  const gauges = [
    { name: 'Steps', used: run.steps, limit: limits.maxSteps, show: String(run.steps) },
    {
      name: 'Tokens',
      used: tokens,
      limit: limits.maxTokens,
      show: String(tokens),
      reserved: reserved?.tokens,
    },
    { name: 'Cost', used: costUsd, limit: limits.maxCostUsd, show: `$${costUsd.toFixed(4)}` },
  ];
  return (
    <div className="gauges" aria-label="Budgets">
      {gauges.map((g) => (
        <div key={g.name} className="gauge">
          <span>
            {g.name}: {g.show}
            {g.limit !== undefined ? ` of ${g.limit}` : ''}
            {g.reserved ? ` (+${g.reserved} reserved)` : ''}
          </span>
          {g.limit !== undefined && (
            <meter min={0} max={g.limit} value={g.used} aria-label={`${g.name} used`} />
          )}
        </div>
      ))}
    </div>
  );
}
