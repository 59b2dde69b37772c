import { createContext, useContext } from 'react';

/**
 * What every part of a run's page shares: the run, each event's number on the page (`eventNumbers`), the
 * selected event's sequence and how to select another. Provided once by `RunPage`.
 */
export interface RunPageCursor {
  runId: string;
  numberOf: (seq: number) => number | undefined;
  selected: number | undefined;
  onSelect: (seq: number) => void;
}

export const RunPageContext = createContext<RunPageCursor | undefined>(undefined);

/** The cursor of the run page around this component. */
export function useRunPage(): RunPageCursor {
  const cursor = useContext(RunPageContext);
  if (cursor === undefined) throw new Error('useRunPage is called outside a RunPage');
  return cursor;
}
