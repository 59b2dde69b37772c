import { describe, expect, it } from 'vitest';
import { missingLines, normalizeLine, parseTranscript, shellWords } from './transcript';

describe('the transcript format of docs/first-hour.md', () => {
  it('reads `$` commands, their expected output, [exit N], skips elided lines, keeps cut ones up to the cut', () => {
    const steps = parseTranscript(
      [
        'Intro.',
        '```console',
        '$ npm run dura -- get r1',
        'status  waiting',
        'created 2026-… (elided)',
        '#  30  wait_requested       {"waitId":"approval:call-3",…',
        '',
        '$ npm run dura -- run x.json',
        'dura: bad',
        '[exit 2]',
        '```',
        '```sh',
        '$ not a transcript',
        '```',
      ].join('\n'),
    );
    expect(steps).toEqual([
      {
        command: 'npm run dura -- get r1',
        expected: ['status  waiting', '#  30  wait_requested       {"waitId":"approval:call-3",'],
        exitCode: 0,
      },
      { command: 'npm run dura -- run x.json', expected: ['dura: bad'], exitCode: 2 },
    ]);
  });

  it('compares lines with ids, numbers and column widths made uniform', () => {
    expect(normalizeLine('#  12  run_requested   sig_0123abcd4567 at 10:02')).toBe(
      '# N run_requested sig_H at N:N',
    );
    const output = 'RUN        STATUS\nrun_9f2c1e7a  completed   $0.0000\n';
    expect(missingLines(['run_deadbeef completed $0.1234', 'RUN STATUS'], output)).toEqual([]);
    expect(missingLines(['run_deadbeef failed'], output)).toEqual(['run_deadbeef failed']);
  });

  it('splits a command line as the shell does for single and double quotes', () => {
    expect(shellWords(`npm run dura -- signal r1 reply --payload '{"text":"ship it"}'`)).toEqual([
      'npm',
      'run',
      'dura',
      '--',
      'signal',
      'r1',
      'reply',
      '--payload',
      '{"text":"ship it"}',
    ]);
    expect(shellWords(`a "b \\"c\\" d" e'f g'`)).toEqual(['a', 'b "c" d', 'ef g']);
  });
});
