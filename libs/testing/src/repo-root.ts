import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let cached: string | undefined;

function isWorkspaceRoot(dir: string): boolean {
  const file = join(dir, 'package.json');
  if (!existsSync(file)) return false;
  try {
    const pkg = JSON.parse(readFileSync(file, 'utf8')) as { workspaces?: unknown };
    return pkg.workspaces !== undefined;
  } catch {
    return false;
  }
}

/** The monorepo root: the nearest ancestor whose package.json declares `workspaces`. */
export function repoRoot(): string {
  if (cached !== undefined) return cached;
  // Start from this file rather than process.cwd(): Nx runs targets from the project folder, people from anywhere.
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (isWorkspaceRoot(dir)) return (cached = dir);
    const parent = dirname(dir);
    if (parent === dir)
      throw new Error(`No package.json with "workspaces" above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
}
