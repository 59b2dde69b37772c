import { useEffect } from 'react';
import { LIMIT_COLUMNS, limitCells } from '@dura/core';
import { useFlowLimits } from '../api/limits';
import { pageTitle } from '../model/format';
import { PlainTable } from './PlainTable';

/**
 * `/ui/limits`: every model limit and concurrency key (docs/flow-control.md) with what is declared, the share
 * of each rate available now, slots in use, callers waiting and a 429 throttle, read again every few seconds;
 * replicas declaring different figures show as a warning on top.
 */
export function LimitsPage() {
  const limits = useFlowLimits();
  useEffect(() => {
    document.title = pageTitle('Limits');
  }, []);
  const rows = limits.data?.limits ?? [];
  return (
    <div className="catalogue">
      <h1>Limits</h1>
      <p className="muted">
        Model limits the planners declare (DURA_MODEL_LIMITS) or that calls used, and the concurrency keys of
        runs, as every replica shares them now. A run waiting for capacity shows here among the callers
        waiting.
      </p>
      {limits.data?.warnings.map((warning) => (
        <p key={warning} className="error" role="alert" data-testid="limits-warning">
          {warning}
        </p>
      ))}
      {limits.error && <p className="error">{limits.error.message}</p>}
      {limits.data && rows.length === 0 && (
        <p className="muted">No limit is declared and no run holds a concurrency key.</p>
      )}
      {rows.length > 0 && (
        <PlainTable
          testId="limits"
          columns={LIMIT_COLUMNS.map((column) => column.charAt(0).toUpperCase() + column.slice(1))}
        >
          {rows.map((row) => (
            <tr key={row.key} id={limitAnchor(row.key)} data-testid="limit-row">
              {limitCells(row).map((cell, i) => (
                <td key={LIMIT_COLUMNS[i]}>{cell}</td>
              ))}
            </tr>
          ))}
        </PlainTable>
      )}
      {limits.data && <p className="muted">Read at {limits.data.at}; refreshed every few seconds.</p>}
    </div>
  );
}

/** The anchor of a limit's row, so a waiting run links to the limit it waits on. */
export function limitAnchor(key: string): string {
  return `limit-${key.replace(/[^A-Za-z0-9_-]/g, '_')}`;
}
