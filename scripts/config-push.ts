// `npm run config:push`: validates a configuration and writes it, with every file it names, as
// the deployed bundle the functions read. The write is conditional on the version read just
// before, so two pushes at once cannot silently overwrite each other. MCP servers are asked for their
// tools here, with this environment's addresses and credentials, and their catalogs go into the
// bundle: the functions never discover on the request path. Push again to take a server's changes.
// The bundle carries the snapshot compiled (the catalog, the policies, each tool's validator as
// generated code): the functions load it and parse nothing.

import { basename } from 'node:path';
import { parseArgs } from 'node:util';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { compileSnapshotFromFile } from '../infra/local/config-files.js';
import { documentClient } from '../infra/local/dynamodb.js';
import { discoverMcpTools } from '../infra/local/mcp-discovery.js';
import { DynamoDbConfigStore } from '../shared/adapters/dynamodb/config-store.js';
import { formatProblem } from '../shared/config/resolved.js';
import { BundledMcpCatalog } from '../shared/control-plane/bundle.js';
import { bundleOf } from '../shared/control-plane/compile-snapshot.js';

const usage = `Usage: npm run config:push -- --table <name> [file] [--region <region>] [--endpoint <url>]

  file             the configuration (default examples/gateway.config.yaml)
  --table <name>   the stack's configuration table (output ConfigTable of the stack)
  --region         AWS region (default: from the AWS environment)
  --endpoint       DynamoDB endpoint, e.g. the local runtime's store, with the runtime's credential
                   from the AWS environment: AWS_CONFIG_FILE=<data-dir>/aws-config
                   AWS_PROFILE=approval-gateway-local
`;

const run = async (): Promise<number> => {
  let values: { table?: string; region?: string; endpoint?: string; help?: boolean };
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: process.argv.slice(2),
      options: {
        table: { type: 'string' },
        region: { type: 'string' },
        endpoint: { type: 'string' },
        help: { type: 'boolean' },
      },
      allowPositionals: true,
    }));
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n\n${usage}`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(usage);
    return 0;
  }
  if (values.table === undefined || positionals.length > 1) {
    process.stderr.write(usage);
    return 2;
  }
  const file = positionals[0] ?? 'examples/gateway.config.yaml';
  // Every MCP server must answer: a bundle without a server's tools would offer nothing of it.
  const discovery = await discoverMcpTools(file, process.env);
  if (discovery.failures.size > 0) {
    process.stderr.write(`${file}: the tools of its MCP servers could not all be listed, nothing was pushed:\n`);
    for (const [key, why] of discovery.failures) process.stderr.write(`  ${key}: ${why}\n`);
    return 1;
  }
  const discovered = new Map([...discovery.catalogs].map(([key, catalog]) => [key, catalog.specs]));
  // References stay references: they are resolved where the gateway runs.
  const outcome = await compileSnapshotFromFile(file, {}, { unsetVariables: 'placeholder' }, discovered);
  if (!outcome.ok) {
    process.stderr.write(`${file} is not valid, nothing was pushed:\n`);
    for (const problem of outcome.problems) process.stderr.write(`  ${formatProblem(problem)}\n`);
    return 1;
  }
  const client = new DynamoDBClient({
    ...(values.region === undefined ? {} : { region: values.region }),
    ...(values.endpoint === undefined
      ? {}
      : {
          // The local store answers only its run's credential, which the AWS environment names.
          endpoint: values.endpoint,
          region: values.region ?? 'local',
        }),
  });
  const store = new DynamoDbConfigStore(documentClient(client), values.table);
  const current = await store.fetch();
  const { snapshot } = outcome;
  const result = await store.push(
    bundleOf({
      compilation: outcome,
      configFile: basename(file),
      mcpCatalogs: Object.fromEntries(
        [...discovery.catalogs].map(([key, catalog]) => [key, BundledMcpCatalog.parse(catalog)]),
      ),
      pushedAt: new Date(),
    }),
    current?.version ?? null,
  );
  client.destroy();
  switch (result.kind) {
    case 'pushed':
      process.stdout.write(`Pushed ${file} as version ${snapshot.version} (${snapshot.catalog.tools.length} tools).\n`);
      return 0;
    case 'unchanged':
      process.stdout.write(`Version ${snapshot.version} is already deployed; nothing to do.\n`);
      return 0;
    case 'conflict':
      process.stderr.write(
        `Someone pushed version ${result.current ?? '(none)'} meanwhile; check it and push again.\n`,
      );
      return 1;
  }
};

process.exitCode = await run();
