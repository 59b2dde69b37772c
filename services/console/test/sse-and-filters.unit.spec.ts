import { describe, expect, it } from 'vitest';
import { parseSse } from '../src/api/sse';
import { filtersFromSearch, listQueryString, NO_FILTERS } from '../src/model/filters';
import { routeOf } from '../src/model/router';

describe('parseSse', () => {
  it('splits complete messages, skips comments, joins data lines, and keeps the unfinished rest', () => {
    const text =
      ': keepalive\n\nid: 7\nevent: thought\ndata: {"a":1}\n\nevent: token\ndata: line one\ndata: line two\n\nid: 8\nda';
    const { messages, rest } = parseSse(text);
    expect(messages).toEqual([
      { id: '7', event: 'thought', data: '{"a":1}' },
      { event: 'token', data: 'line one\nline two' },
    ]);
    expect(rest).toBe('id: 8\nda');
    expect(parseSse(`${rest}ta: x\n\n`).messages).toEqual([{ id: '8', event: 'message', data: 'x' }]);
  });

  it('reads CRLF line ends as LF', () => {
    expect(parseSse('event: end\r\ndata: {}\r\n\r\n').messages).toEqual([{ event: 'end', data: '{}' }]);
  });
});

describe('run list filters', () => {
  it('map to the query parameters of GET /runs, metadata pairs repeated, times as ISO instants', () => {
    const query = new URLSearchParams(
      listQueryString(
        {
          ...NO_FILTERS,
          status: ['waiting', 'failed'],
          agent: ' cashier ',
          agentVersion: '2',
          meta: 'team:pay, region:eu',
          tenant: 'acme',
          createdAfter: '2026-01-01T00:00:00Z',
        },
        'CURSOR',
        50,
      ),
    );
    expect(query.get('status')).toBe('waiting,failed');
    expect(query.get('agent')).toBe('cashier');
    expect(query.getAll('meta')).toEqual(['team:pay', 'region:eu']);
    expect(query.get('createdAfter')).toBe('2026-01-01T00:00:00.000Z');
    expect(query.get('cursor')).toBe('CURSOR');
    expect(query.get('limit')).toBe('50');
    expect(query.has('tag')).toBe(false);
  });

  it('are read back from the page address, dropping unknown statuses', () => {
    expect(filtersFromSearch('?status=waiting,bogus&tag=nightly')).toEqual({
      ...NO_FILTERS,
      status: ['waiting'],
      tag: 'nightly',
    });
  });
});

describe('routeOf', () => {
  it('knows the list and a run page under /ui/', () => {
    expect(routeOf('/ui/', '?tag=x')).toEqual({ page: 'runs', search: '?tag=x' });
    expect(routeOf('/ui/runs/a%2Fb', '')).toEqual({ page: 'run', runId: 'a/b' });
    expect(routeOf('/elsewhere', '')).toEqual({ page: 'runs', search: '' });
    expect(routeOf('/ui/agents', '')).toEqual({ page: 'agents' });
  });
});
