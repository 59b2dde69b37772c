import { describe, expect, it } from 'vitest';
import { preparedStatementsOf } from '../src/database';

describe('prepared statements, as DATABASE_URL sets them', () => {
  it('are on unless the URL says prepare=false, and the setting never reaches the driver', () => {
    expect(preparedStatementsOf('postgres://u@h:5432/db')).toEqual({
      url: 'postgres://u@h:5432/db',
      prepare: true,
    });
    expect(preparedStatementsOf('postgres://u@h/db?prepare=false')).toEqual({
      url: 'postgres://u@h/db',
      prepare: false,
    });
    expect(preparedStatementsOf('postgres://u@h/db?sslmode=require&prepare=false')).toEqual({
      url: 'postgres://u@h/db?sslmode=require',
      prepare: false,
    });
    expect(preparedStatementsOf('postgres://u@h/db?prepare=false&sslmode=require')).toEqual({
      url: 'postgres://u@h/db?sslmode=require',
      prepare: false,
    });
    expect(preparedStatementsOf('postgres://u@h/db?a=1&prepare=true&b=2')).toEqual({
      url: 'postgres://u@h/db?a=1&b=2',
      prepare: true,
    });
  });
});
