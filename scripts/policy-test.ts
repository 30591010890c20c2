// `npm run policy:test -- <cases.yaml>`: rehearses each case of a file against the configuration's
// policies, as tools/call would decide it (arguments read, canonicalized and validated, then the
// policy's decision), sending and storing nothing. Prints each case's decision, human step and
// policies (and the argument errors of refused arguments). Exit 0 when every expectation holds,
// 1 when one does not, 2 for a case file, configuration or options that are not valid.
import { readFile } from 'node:fs/promises';
import { defaultConfigFile } from '../infra/local/options.js';
import { loadToolSnapshot } from '../infra/local/tool-snapshot.js';
import { readCaseFile } from '../shared/policy/case-file.js';
import { type CaseResult, rehearseCase } from '../shared/use-cases/rehearse-case.js';
import { dataFolderOf, readCommandLine, toolSnapshotOptions, toolSnapshotUsage } from './command-line.js';

const usage = `Usage: npm run policy:test -- <cases.yaml> [--config <file>] [--offline] [--data-dir <dir>] [--json]

  cases.yaml       a list of cases: { name, agent, tool, arguments,
                   expect: { decision: run|hold|deny, approval?, reason?, policies?,
                             quorum?, escalate?, reauth?, acr? } }
${toolSnapshotUsage}`;

const caseLines = (file: string, result: CaseResult): string[] => {
  const lines = [`${result.failures.length === 0 ? 'ok  ' : 'FAIL'}  ${result.name}  (${file}:${result.line})`];
  const { got } = result;
  if (got !== null) {
    const policies = got.policies.map((policy) => `${policy.name} (${policy.at})`).join(', ');
    lines.push(
      `      ${result.agent} → ${result.tool}: ${got.decision}, ${got.words}${policies ? `; by ${policies}` : ''}`,
    );
    for (const error of got.input_errors ?? [])
      lines.push(`      argument error ${error.path || '/'}: ${error.code}: ${error.message}`);
  }
  for (const failure of result.failures) lines.push(`      ${failure}`);
  return lines;
};

const run = async (): Promise<number> => {
  const parsed = readCommandLine(toolSnapshotOptions, usage, { positionals: true });
  if ('exit' in parsed) return parsed.exit;
  const { values, positionals } = parsed;
  const [casesFile] = positionals;
  if (casesFile === undefined || positionals.length > 1) {
    process.stderr.write(`name one case file\n\n${usage}`);
    return 2;
  }
  const text = await readFile(casesFile, 'utf8').catch(() => undefined);
  if (text === undefined) {
    process.stderr.write(`${casesFile}: the file cannot be read\n`);
    return 2;
  }
  const cases = readCaseFile(text);
  if (!cases.ok) {
    process.stderr.write(`${casesFile} is not a valid case file:\n`);
    for (const problem of cases.problems)
      process.stderr.write(`  ${casesFile}:${problem.line ?? 1}: ${problem.message}\n`);
    return 2;
  }
  const file = values.config ?? defaultConfigFile;
  const dataDir = dataFolderOf(values);
  const loaded = await loadToolSnapshot(file, process.env, values.offline === true, dataDir);
  if (!loaded.ok) {
    process.stderr.write(`${loaded.message}\n`);
    return 2;
  }
  const context = { snapshot: loaded.snapshot, configFile: file, undiscovered: loaded.undiscovered };
  const results = cases.cases.map((testCase) => rehearseCase(context, testCase));
  const failed = results.filter((result) => result.failures.length > 0);
  if (values.json === true) {
    process.stdout.write(`${JSON.stringify({ file: casesFile, config: file, results }, null, 2)}\n`);
  } else {
    for (const result of results) process.stdout.write(`${caseLines(casesFile, result).join('\n')}\n`);
    process.stdout.write(
      `${results.length - failed.length} of ${results.length} cases pass${failed.length > 0 ? `; failing: ${failed.map((result) => `${result.name} (${casesFile}:${result.line})`).join(', ')}` : ''}\n`,
    );
  }
  return failed.length > 0 ? 1 : 0;
};

process.exitCode = await run();
