import { describe, expect, it } from 'vitest';
import { preparedStatementsOf } from '../src/database';

describe('prepared statements, as DATABASE_URL sets them', () => {
  it('are on unless the URL says prepare=false, and the setting never reaches the driver', () => {
    const cases: [string, { url: string; prepare: boolean }][] = [
      ['postgres://u@h:5432/db', { url: 'postgres://u@h:5432/db', prepare: true }],
      ['postgres://u@h/db?prepare=false', { url: 'postgres://u@h/db', prepare: false }],
      [
        'postgres://u@h/db?sslmode=require&prepare=false',
        { url: 'postgres://u@h/db?sslmode=require', prepare: false },
      ],
      [
        'postgres://u@h/db?prepare=false&sslmode=require',
        { url: 'postgres://u@h/db?sslmode=require', prepare: false },
      ],
      ['postgres://u@h/db?a=1&prepare=true&b=2', { url: 'postgres://u@h/db?a=1&b=2', prepare: true }],
    ];
    for (const [url, expected] of cases) expect(preparedStatementsOf(url), url).toEqual(expected);
  });
});
