import type { ReactNode } from 'react';

/** A column name, or `false`/`undefined` for a column this reader does not get. */
export type Column = string | false | undefined;

/** A table in the console's plain style: a head of column names over `children`, its rows. */
export function PlainTable({
  testId,
  columns,
  children,
}: {
  testId: string;
  columns: readonly Column[];
  children: ReactNode;
}) {
  return (
    <table className="plain-table" data-testid={testId}>
      <thead>
        <tr>
          {columns
            .filter((column) => typeof column === 'string')
            .map((column) => (
              <th key={column} scope="col">
                {column}
              </th>
            ))}
        </tr>
      </thead>
      <tbody>{children}</tbody>
    </table>
  );
}

/** A list read from the API as a plain table: the error reading it, or `empty` once it is read with no rows. */
export function ListTable({
  read,
  count,
  empty,
  ...table
}: {
  read: { error: Error | null; isSuccess: boolean };
  count: number;
  empty: string;
  testId: string;
  columns: readonly Column[];
  children: ReactNode;
}) {
  if (read.error) return <p className="error">{read.error.message}</p>;
  if (read.isSuccess && count === 0) return <p className="empty">{empty}</p>;
  return <PlainTable {...table} />;
}
