// Every `npm run dev -- --once --run <file>` command in README.md and docs/ runs: here, or in the e2e test
// that names it (those need a stack of their own: MCP servers, code agents). A documented command that no
// test runs fails this file, so the pages cannot drift from what the examples do.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '@dura/testing';
import { devOnce } from './system';

interface DocCommand {
  where: string;
  env: Record<string, string>;
  file: string;
  comment: string;
}

const ONCE = /^((?:[A-Z][A-Z0-9_]*=\S+\s+)*)npm run dev -- --once --run (\S+)\s*(?:#\s*(.*))?$/;

function markdownFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? markdownFiles(join(dir, entry.name))
      : entry.name.endsWith('.md')
        ? [join(dir, entry.name)]
        : [],
  );
}

/** The commands of the pages, with `\` continuations joined and environment prefixes read. */
function documentedCommands(): DocCommand[] {
  const root = repoRoot();
  const pages = [join(root, 'README.md'), ...markdownFiles(join(root, 'docs'))];
  return pages.flatMap((page) => {
    const lines = readFileSync(page, 'utf8')
      .replace(/\\\n\s*/g, ' ')
      .split('\n');
    return lines.flatMap((line, i) => {
      const match = ONCE.exec(line.trim());
      if (!match) return [];
      const env = Object.fromEntries(
        (match[1] ?? '')
          .trim()
          .split(/\s+/)
          .filter(Boolean)
          .map((pair) => pair.split('=', 2) as [string, string]),
      );
      return [
        {
          where: `${relative(root, page)}:${i + 1}`,
          env,
          file: match[2] as string,
          comment: match[3] ?? '',
        },
      ];
    });
  });
}

/** Run by the test that needs their own setup; each of these files names the example it runs. */
const RUN_ELSEWHERE: Record<string, string> = {
  'examples/agents/fanout.json': 'services/dev/test/entry-points.e2e.spec.ts',
  'examples/agents/large-payload.json': 'services/dev/test/entry-points.e2e.spec.ts',
  'examples/code-agents/research.json': 'services/dev/test/code-agent-examples.e2e.spec.ts',
  'examples/code-agents/release-check.json': 'services/dev/test/code-agent-examples.e2e.spec.ts',
  'examples/mcp/refund.json': 'services/dev/test/mcp-docs-example.e2e.spec.ts',
  'examples/ai-sdk/research.json': 'services/dev/test/ai-sdk-examples.e2e.spec.ts',
  // Its model is a local Ollama by default: run there against the fake OpenAI-compatible server.
  'examples/openai-agents/help-desk.json': 'services/dev/test/openai-agents-crash.e2e.spec.ts',
};

const commands = documentedCommands();
const runHere = [...new Map(commands.filter((c) => !RUN_ELSEWHERE[c.file]).map((c) => [c.file, c])).values()];

describe('the documented `npm run dev -- --once --run` commands', () => {
  it('are found in the pages, and each one is run by this file or by the test that names it', () => {
    expect(commands.length, 'commands found in README.md and docs/').toBeGreaterThanOrEqual(5);
    for (const command of commands) {
      const test = RUN_ELSEWHERE[command.file];
      if (!test) continue;
      expect(readFileSync(join(repoRoot(), test), 'utf8'), `${command.where}: ${test}`).toContain(
        command.file,
      );
    }
    expect(runHere.length, 'commands this file runs').toBeGreaterThan(0);
  });

  it.each(runHere.map((c) => [c.file, c] as const))(
    '%s runs as its page says',
    async (_file, command) => {
      const { code, output } = await devOnce(command.file, command.env);
      // A page that says the run stops on its budget shows that event, and --once exits 1 (not completed).
      if (command.comment.includes('budget_exceeded')) {
        expect(output, `${command.where}`).toMatch(/budget_exceeded/);
        expect(code, output).toBe(1);
      } else {
        expect(output, `${command.where}`).toMatch(/run_completed/);
        expect(code, output).toBe(0);
      }
    },
    120_000,
  );
});
