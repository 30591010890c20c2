// `npm run config:check [file]`: validates a gateway configuration (schema, OpenAPI documents,
// tool names, references) and says what is wrong and where. Exit 0 when valid, 1 when not.
import { parseArgs } from 'node:util';
import { loadSnapshotFromFile } from '../infra/local/config-files.js';
import { formatProblem } from '../shared/config/load.js';

const usage = `Usage: npm run config:check -- [file] [--strict-env]

  file           the configuration (default examples/gateway.config.yaml)
  --strict-env   treat \${env:NAME} references unset here as errors (by default they are
                 noted: the gateway may run where they are set)
`;

const run = async (): Promise<number> => {
  let parsed: ReturnType<
    typeof parseArgs<{
      options: { 'strict-env': { type: 'boolean' }; help: { type: 'boolean' } };
      allowPositionals: true;
    }>
  >;
  try {
    parsed = parseArgs({
      args: process.argv.slice(2),
      options: { 'strict-env': { type: 'boolean' }, help: { type: 'boolean' } },
      allowPositionals: true,
    });
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n\n${usage}`);
    return 2;
  }
  if (parsed.values.help || parsed.positionals.length > 1) {
    process.stdout.write(usage);
    return parsed.values.help ? 0 : 2;
  }
  const file = parsed.positionals[0] ?? 'examples/gateway.config.yaml';
  const unset: string[] = [];
  const outcome = await loadSnapshotFromFile(file, process.env, {
    unsetVariables: parsed.values['strict-env'] ? 'problem' : 'placeholder',
    onUnset: (name, path) => unset.push(`${path}: \${env:${name}} is not set here`),
  });
  if (!outcome.ok) {
    process.stderr.write(
      `${file} is not valid (${outcome.problems.length} problem${outcome.problems.length === 1 ? '' : 's'}):\n`,
    );
    for (const problem of outcome.problems) process.stderr.write(`  ${formatProblem(problem)}\n`);
    return 1;
  }
  const { snapshot } = outcome;
  const bySystem = new Map<string, number>();
  for (const tool of snapshot.catalog.tools) bySystem.set(tool.systemKey, (bySystem.get(tool.systemKey) ?? 0) + 1);
  process.stdout.write(`${file} is valid (version ${snapshot.version}).\n`);
  process.stdout.write(
    `  ${snapshot.catalog.tools.length} tools${bySystem.size > 0 ? ` (${[...bySystem].map(([key, count]) => `${key}: ${count}`).join(', ')})` : ''}\n`,
  );
  for (const tool of snapshot.catalog.tools) process.stdout.write(`    ${tool.name}  [${tool.access}]\n`);
  process.stdout.write(
    `  ${snapshot.config.agents.length} agents, ${snapshot.config.approvers.length} approvers, ${snapshot.config.customers.length} customers, ${snapshot.config.policies.length} policy files\n`,
  );
  for (const warning of snapshot.warnings) process.stdout.write(`  note: ${formatProblem(warning)}\n`);
  for (const note of unset) process.stdout.write(`  note: ${note}\n`);
  return 0;
};

process.exitCode = await run();
