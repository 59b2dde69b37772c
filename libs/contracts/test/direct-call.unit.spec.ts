import { describe, expect, it } from 'vitest';
import { DIRECT_CALL_HEADERS, directCallReplyOf, directCallRequestOf, directCallSubject } from '../src/index';

const from = (headers: Record<string, string>) => (name: string) => headers[name];
const UTF8 = new TextEncoder();

describe('a direct call’s request headers', () => {
  it('give the run’s last sequence and whether the intent is fresh; none is needed', () => {
    expect(directCallRequestOf(from({}))).toEqual({ ok: true, request: { fresh: false } });
    expect(
      directCallRequestOf(from({ [DIRECT_CALL_HEADERS.after]: '41', [DIRECT_CALL_HEADERS.fresh]: 'true' })),
    ).toEqual({ ok: true, request: { after: 41, fresh: true } });
  });

  it('refuse a sequence that is not a whole number, or a freshness that is not true or false, naming it', () => {
    const malformed: Record<string, string>[] = [
      { [DIRECT_CALL_HEADERS.after]: '-1' },
      { [DIRECT_CALL_HEADERS.after]: '4.5' },
      { [DIRECT_CALL_HEADERS.after]: 'soon' },
      { [DIRECT_CALL_HEADERS.fresh]: 'yes' },
    ];
    for (const headers of malformed) {
      const read = directCallRequestOf(from(headers));
      expect(read.ok, JSON.stringify(headers)).toBe(false);
      if (!read.ok) expect(read.problem).toMatch(/after|fresh/);
    }
  });
});

describe('a direct call’s reply', () => {
  it('is working, done (with its sequence, retry and observation when given), declined or failed with a reason', () => {
    const reply = (headers: Record<string, string>, body = new Uint8Array()) =>
      directCallReplyOf(from(headers), body);
    expect(reply({ [DIRECT_CALL_HEADERS.reply]: 'working' })).toEqual({
      ok: true,
      reply: { kind: 'working' },
    });
    expect(reply({ [DIRECT_CALL_HEADERS.reply]: 'done' })).toEqual({ ok: true, reply: { kind: 'done' } });
    expect(
      reply(
        {
          [DIRECT_CALL_HEADERS.reply]: 'done',
          [DIRECT_CALL_HEADERS.seq]: '7',
          [DIRECT_CALL_HEADERS.retryAfterMs]: '250',
        },
        UTF8.encode('{}'),
      ),
    ).toEqual({
      ok: true,
      reply: { kind: 'done', seq: 7, retryAfterMs: 250, observation: UTF8.encode('{}') },
    });
    expect(reply({ [DIRECT_CALL_HEADERS.reply]: 'declined' }, UTF8.encode('too busy'))).toEqual({
      ok: true,
      reply: { kind: 'declined', reason: 'too busy' },
    });
    expect(reply({ [DIRECT_CALL_HEADERS.reply]: 'failed' })).toEqual({
      ok: true,
      reply: { kind: 'failed', reason: '(no reason given)' },
    });
  });

  it('is refused when its kind is missing or unknown, a number is not one, or an observation comes without its sequence', () => {
    const refused = [
      directCallReplyOf(from({}), new Uint8Array()),
      directCallReplyOf(from({ [DIRECT_CALL_HEADERS.reply]: 'ok' }), new Uint8Array()),
      directCallReplyOf(
        from({ [DIRECT_CALL_HEADERS.reply]: 'done', [DIRECT_CALL_HEADERS.seq]: 'x' }),
        new Uint8Array(),
      ),
      directCallReplyOf(from({ [DIRECT_CALL_HEADERS.reply]: 'done' }), UTF8.encode('{}')),
    ];
    for (const read of refused) expect(read.ok).toBe(false);
  });

  it('goes to the subject of its tool', () => {
    expect(directCallSubject('http.get')).toBe('dura.call.http.get');
  });
});
