// One lint setup for the whole repo: type-aware TypeScript rules, Nx module boundaries, and Prettier owning format.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import nx from '@nx/eslint-plugin';
import prettier from 'eslint-config-prettier';
import { TS_PROJECTS } from './scripts/ts-projects.mjs';

/** Modules that do I/O. Pure libraries (tag `type:pure`) may import none of them. */
const ioModules = [
  'node:*',
  'nats',
  '@nats-io/*',
  'postgres',
  'drizzle-orm',
  'drizzle-orm/*',
  '@electric-sql/*',
  '@opentelemetry/*',
  'testcontainers',
  '@testcontainers/*',
];
const boundaries = (extraTags) => [
  'error',
  {
    enforceBuildableLibDependency: false,
    allow: [],
    depConstraints: [
      {
        sourceTag: 'type:pure',
        onlyDependOnLibsWithTags: ['type:pure', ...extraTags],
        bannedExternalImports: ioModules,
      },
      { sourceTag: 'type:io', onlyDependOnLibsWithTags: ['type:pure', 'type:io', ...extraTags] },
      { sourceTag: 'type:service', onlyDependOnLibsWithTags: ['type:pure', 'type:io', ...extraTags] },
      // A deployable made of services (the worker: the planner and the gateway in one process) composes their
      // exported factories; no service depends on it.
      {
        sourceTag: 'type:composite',
        onlyDependOnLibsWithTags: ['type:pure', 'type:io', 'type:service', ...extraTags],
      },
      {
        sourceTag: 'type:app',
        onlyDependOnLibsWithTags: ['type:pure', 'type:io', 'type:service', 'type:composite', ...extraTags],
      },
      {
        sourceTag: 'type:testing',
        onlyDependOnLibsWithTags: ['type:pure', 'type:io', 'type:service', 'type:testing'],
      },
    ],
  },
];
const nodeBuiltins = [
  'fs',
  'path',
  'os',
  'net',
  'http',
  'https',
  'child_process',
  'crypto',
  'dgram',
  'dns',
  'tls',
  'worker_threads',
  'cluster',
  'process',
];

export default tseslint.config(
  { ignores: ['**/node_modules/**', '**/dist/**', '**/.nx/**', '**/coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        // One program for every project that only extends tsconfig.base.json, and one for each project with
        // options of its own (scripts/ts-projects.mjs, the ones `npm run typecheck` checks): each library is
        // read once, not once per project that imports it. `npm run check` hands ESLint these programs built.
        project: TS_PROJECTS.map((p) => `./${p}`),
        tsconfigRootDir: import.meta.dirname,
      },
    },
    plugins: { '@nx': nx },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/only-throw-error': 'error',
      'no-restricted-syntax': [
        'error',
        { selector: 'ExportAllDeclaration', message: 'Export named symbols (no `export *`).' },
      ],
      '@nx/enforce-module-boundaries': boundaries([]),
    },
  },
  {
    // Node built-ins without the `node:` prefix slip past bannedExternalImports; forbid them in pure code too.
    files: [
      'libs/contracts/src/**/*.ts',
      'libs/core/src/**/*.ts',
      'libs/code-agents/src/**/*.ts',
      'proto/src/**/*.ts',
    ],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: nodeBuiltins.map((name) => ({
            name,
            message: 'Pure libraries do no I/O: pass time, ids and data in as arguments.',
          })),
          patterns: [
            {
              group: ioModules,
              message: 'Pure libraries do no I/O: pass time, ids and data in as arguments.',
            },
          ],
        },
      ],
    },
  },
  {
    // Tests may use the test harness (type:testing); production code may not.
    files: ['**/*.spec.ts', '**/test/**/*.ts'],
    rules: {
      '@nx/enforce-module-boundaries': boundaries(['type:testing']),
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
    },
  },
  { files: ['**/*.mjs', '**/*.js'], ...tseslint.configs.disableTypeChecked },
  prettier,
);
