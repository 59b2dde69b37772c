// The TypeScript programs that cover every .ts/.tsx file of the repo: one over every project whose tsconfig
// only extends tsconfig.base.json (tsconfig.typecheck.json, the union of their `include`s), and one for each
// project with compiler options of its own. `npm run typecheck` checks them, ESLint's type-aware rules read
// them (eslint.config.mjs), and `npm run check` builds them once for both (scripts/check.mjs).
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Paths relative to the repo root. A new project with options of its own goes here. */
export const TS_PROJECTS = [
  'tsconfig.typecheck.json',
  'services/console/tsconfig.json',
  'examples/chat/tsconfig.json',
];
