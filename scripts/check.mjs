#!/usr/bin/env node
// `npm run check`: the type check and the lint of the whole repo in one process, on one set of TypeScript
// programs. `npm run typecheck` and `npm run lint` each build the same programs (scripts/ts-projects.mjs) and
// type-check the same files; here each program is built and checked once, and ESLint's type-aware rules read
// the types already computed. It reports what both would report, and exits 1 if either found an error.
//
//   node scripts/check.mjs               type check, then lint
//   node scripts/check.mjs --typecheck   the type check alone (what `npm run typecheck` runs)
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import ts from 'typescript';
import { TS_PROJECTS, root } from './ts-projects.mjs';

const { values } = parseArgs({ options: { typecheck: { type: 'boolean', default: false } } });
// The directories `npm run lint` lints.
const LINTED = ['proto', 'libs', 'services', 'deploy', 'examples/chat'];

const host = {
  getCanonicalFileName: (name) => name,
  getCurrentDirectory: () => root,
  getNewLine: () => '\n',
};
const pretty = process.stdout.isTTY === true;

/** One tsconfig's program, and the diagnostics `tsc -p` would print for it. */
function check(project) {
  const started = Date.now();
  const configPath = join(root, project);
  const config = ts.getParsedCommandLineOfConfigFile(
    configPath,
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
        throw new Error(`${project}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`);
      },
    },
  );
  if (!config) throw new Error(`${project}: could not be read as a tsconfig`);
  const program = ts.createProgram({
    rootNames: config.fileNames,
    options: config.options,
    projectReferences: config.projectReferences,
    configFileParsingDiagnostics: ts.getConfigFileParsingDiagnostics(config),
  });
  // tsc's order: the config's and the options' errors, then syntax; the semantic check only on a clean parse.
  let diagnostics = [
    ...program.getConfigFileParsingDiagnostics(),
    ...program.getOptionsDiagnostics(),
    ...program.getSyntacticDiagnostics(),
    ...program.getGlobalDiagnostics(),
  ];
  if (diagnostics.length === 0) diagnostics = [...program.getSemanticDiagnostics()];
  const errors = diagnostics.filter((d) => d.category === ts.DiagnosticCategory.Error).length;
  if (diagnostics.length > 0)
    process.stdout.write(
      pretty
        ? ts.formatDiagnosticsWithColorAndContext(diagnostics, host)
        : ts.formatDiagnostics(diagnostics, host),
    );
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  console.log(
    `typecheck ${project}: ${config.fileNames.length} files, ${errors} error${errors === 1 ? '' : 's'} (${seconds} s)`,
  );
  return { program, errors };
}

let failed = false;
const programs = [];
for (const project of TS_PROJECTS) {
  const { program, errors } = check(project);
  programs.push(program);
  if (errors > 0) failed = true;
}

if (!values.typecheck) {
  const started = Date.now();
  // The module-boundary rule reads Nx's project graph; this computes it first, as `npm run lint` does.
  execFileSync(process.execPath, [join(root, 'scripts', 'nx.mjs'), 'show', 'projects'], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const { ESLint } = await import('eslint');
  const eslint = new ESLint({
    cwd: root,
    flags: ['v10_config_lookup_from_file'],
    // Every TypeScript file is in one of the programs above (the same tsconfigs the config names).
    overrideConfig: [
      {
        files: ['**/*.ts', '**/*.tsx', '**/*.mts', '**/*.cts'],
        languageOptions: { parserOptions: { project: false, projectService: false, programs } },
      },
    ],
  });
  const results = await eslint.lintFiles(LINTED);
  const formatter = await eslint.loadFormatter('stylish');
  const text = await formatter.format(results, {
    cwd: root,
    rulesMeta: eslint.getRulesMetaForResults(results),
  });
  if (text) process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
  const errors = results.reduce((sum, r) => sum + r.errorCount, 0);
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  console.log(
    `lint ${LINTED.join(' ')}: ${results.length} files, ${errors} error${errors === 1 ? '' : 's'} (${seconds} s)`,
  );
  if (errors > 0) failed = true;
}

if (failed) {
  const fix = values.typecheck ? '' : ' (`npm run lint -- --fix` fixes what ESLint can)';
  console.error(`check: errors above; fix them${fix}`);
  process.exit(1);
}
