// `npm run config:push`: validates a configuration and deploys it, with every file it names, as the
// bundle the functions read: an object in the stack's bundles bucket, signed with the stack's
// signing key, and a pointer to it in the configuration table. The pointer's write is conditional
// on the version read just before, so two pushes at once cannot silently overwrite each other.
// MCP servers are asked for their tools here, with this environment's addresses and credentials,
// and their catalogs go into the bundle: the functions never discover on the request path. Push
// again to take a server's changes. The bundle carries the snapshot compiled (the catalog, the
// policies, each tool's validator as generated code): the functions load it and parse nothing.
// What was first pushed of each MCP tool is pinned in the bundle: a server's later change keeps the
// tool a write with its pinned text, push after push, until pushed with --accept <system>.
// Every failure is a message saying what was being done and why it failed.

import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { KMSClient } from '@aws-sdk/client-kms';
import { S3Client } from '@aws-sdk/client-s3';
import { compileSnapshotFromFile } from '../infra/local/config-files.js';
import { documentClient } from '../infra/local/dynamodb.js';
import { discoverMcpTools, driftLines } from '../infra/local/mcp-discovery.js';
import { defaultConfigFile } from '../infra/local/options.js';
import { DynamoDbBundlePointers } from '../shared/adapters/dynamodb/config-store.js';
import { KmsBundleSignatures } from '../shared/adapters/kms-bundle-signatures.js';
import { S3BundleObjects } from '../shared/adapters/s3-bundle-objects.js';
import type { McpPins } from '../shared/catalog/mcp-pins.js';
import { formatProblem } from '../shared/config/resolved.js';
import { BundledMcpCatalog, type ConfigBundleStore, versionOf } from '../shared/control-plane/bundle.js';
import { bundleOf, type SnapshotCompilation } from '../shared/control-plane/compile-snapshot.js';
import { environmentReferences } from '../shared/control-plane/environment-references.js';
import { SignedBundleStore } from '../shared/control-plane/signed-bundles.js';
import { describeAwsError, StepFailure, step } from './aws-failure.js';
import { type CommandLine, readCommandLine } from './command-line.js';

const usage = `Usage: npm run config:push -- --table <name> --bucket <name> --key <arn> [file] [options]

  file              the configuration (default examples/gateway.config.yaml)
  --table <name>    the stack's configuration table (stack output ConfigTable)
  --bucket <name>   the stack's bundles bucket (stack output ConfigBucket)
  --key <arn>       the stack's signing key (stack output ConfigSigningKeyArn); the pushing
                    principal needs kms:Sign on it, s3:PutObject on the bucket's bundles/*, and
                    dynamodb:GetItem and dynamodb:PutItem on the table
  --region          AWS region (default: from the AWS environment)
  --endpoint        DynamoDB endpoint, e.g. the local runtime's store, with the runtime's credential
                    from the AWS environment: AWS_CONFIG_FILE=<data-dir>/aws-config
                    AWS_PROFILE=approval-gateway-local
  --s3-endpoint     S3 endpoint (path-style), e.g. a local one
  --kms-endpoint    KMS endpoint, e.g. a local one
  --accept <system> accept what the MCP system's server lists now, where it changed tools since
                    they were pinned (config:push shows them); repeat for several systems. Without
                    it a changed tool is pushed as a write with its pinned title and description
`;

const options = {
  table: { type: 'string' },
  bucket: { type: 'string' },
  key: { type: 'string' },
  region: { type: 'string' },
  endpoint: { type: 'string' },
  's3-endpoint': { type: 'string' },
  'kms-endpoint': { type: 'string' },
  accept: { type: 'string', multiple: true },
  help: { type: 'boolean' },
} as const;

type Target = { table: string; bucket: string; key: string; values: CommandLine<typeof options>['values'] };

const fail = (message: string): number => {
  process.stderr.write(`${message}\n`);
  return 1;
};

/** The configuration compiled as config:push deploys it, or the message saying why it cannot be. */
const compile = async (
  file: string,
  deployedPins: ReadonlyMap<string, McpPins>,
  accepted: readonly string[],
): Promise<
  | {
      ok: true;
      outcome: Extract<SnapshotCompilation, { ok: true }>;
      catalogs: Record<string, BundledMcpCatalog>;
      pinsChanged: boolean;
      notes: string[];
    }
  | { ok: false; message: string }
> => {
  const text = await readFile(file, 'utf8').catch(() => undefined);
  if (text === undefined) return { ok: false, message: `${file} cannot be read, nothing was pushed.` };
  const references = environmentReferences(text);
  if (references.length > 0) {
    const lines = references.map(
      (reference) => `  ${file}:${reference.line ?? '?'} ${reference.path}: ${reference.value}`,
    );
    return {
      ok: false,
      message: [
        `${file} names \${env:…} values, which the deployed functions cannot read; nothing was pushed:`,
        ...lines,
        'Write a secret as ${secret:NAME} (kept in AWS Secrets Manager, read by the functions that need it), and anything else as its value.',
      ].join('\n'),
    };
  }
  // Every MCP server must answer: a bundle without a server's tools would offer nothing of it.
  // An accepted system is pinned afresh, as its server lists it now.
  const pins = { read: async (key: string) => (accepted.includes(key) ? undefined : deployedPins.get(key)) };
  const discovery = await discoverMcpTools(file, process.env, pins);
  const unknown = accepted.filter((key) => !discovery.systems.some((system) => system.key === key));
  if (unknown.length > 0) {
    return {
      ok: false,
      message: `--accept names ${unknown.join(', ')}, not an MCP system of ${file}; nothing was pushed.`,
    };
  }
  if (discovery.failures.size > 0) {
    const failures = [...discovery.failures].map(([key, why]) => `  ${key}: ${why}`);
    return {
      ok: false,
      message: [`${file}: the tools of its MCP servers could not all be listed, nothing was pushed:`, ...failures].join(
        '\n',
      ),
    };
  }
  const outcome = await compileSnapshotFromFile(file, {}, { unsetVariables: 'placeholder' }, discovery.offered);
  if (!outcome.ok) {
    const problems = outcome.problems.map((problem) => `  ${formatProblem(problem)}`);
    return { ok: false, message: [`${file} is not valid, nothing was pushed:`, ...problems].join('\n') };
  }
  const catalogs = Object.fromEntries(
    [...discovery.catalogs].map(([key, catalog]) => [
      key,
      BundledMcpCatalog.parse({ ...catalog, pins: discovery.pins.get(key) ?? [] }),
    ]),
  );
  const pinsChanged = Object.entries(catalogs).some(
    ([key, catalog]) => JSON.stringify(catalog.pins) !== JSON.stringify(deployedPins.get(key)),
  );
  return { ok: true, outcome, catalogs, pinsChanged, notes: driftLines(discovery) };
};

/** The store of the stack named by the options, each AWS call named for the messages. */
const storeFor = ({ table, bucket, key, values }: Target) => {
  const region =
    values.region ?? ((values.endpoint ?? values['s3-endpoint'] ?? values['kms-endpoint']) ? 'local' : undefined);
  const common = region === undefined ? {} : { region };
  // Local endpoints answer only their run's credential, which the AWS environment names.
  const dynamodb = new DynamoDBClient({ ...common, ...(values.endpoint ? { endpoint: values.endpoint } : {}) });
  const s3 = new S3Client({
    ...common,
    ...(values['s3-endpoint'] ? { endpoint: values['s3-endpoint'], forcePathStyle: true } : {}),
  });
  const kms = new KMSClient({ ...common, ...(values['kms-endpoint'] ? { endpoint: values['kms-endpoint'] } : {}) });
  const pointers = new DynamoDbBundlePointers(documentClient(dynamodb), table);
  const objects = new S3BundleObjects(s3, bucket);
  const signatures = new KmsBundleSignatures(kms, key);
  const store = new SignedBundleStore(
    {
      read: () => step(`read the configuration table ${table}`, () => pointers.read()),
      write: (pointer, expected) =>
        step(`write the configuration table ${table}`, () => pointers.write(pointer, expected)),
    },
    {
      put: (objectKey, bytes) => step(`upload the bundle to the bucket ${bucket}`, () => objects.put(objectKey, bytes)),
      get: (objectKey, versionId) => step(`read the bucket ${bucket}`, () => objects.get(objectKey, versionId)),
    },
    {
      sign: (message) => step(`sign the bundle with the key ${key}`, () => signatures.sign(message)),
      verify: (message, signature) => step(`verify with the key ${key}`, () => signatures.verify(message, signature)),
    },
  );
  return {
    store,
    close: () => {
      for (const client of [dynamodb, s3, kms]) client.destroy();
    },
  };
};

/** The pins of each MCP system in the deployed bundle (none when there is none, or it cannot be read). */
const deployedPinsOf = async (store: ConfigBundleStore): Promise<Map<string, McpPins>> => {
  const deployed = await store.deployed();
  if (deployed?.kind !== 'signed') return new Map();
  const read = await store.load(deployed.pointer);
  if (!read.ok) {
    process.stdout.write(
      `note: the deployed bundle cannot be read (${read.reason}); MCP tools are pinned as listed now.\n`,
    );
    return new Map();
  }
  return new Map(Object.entries(read.bundle.mcp_catalogs ?? {}).map(([key, catalog]) => [key, catalog.pins ?? []]));
};

const push = async (file: string, target: Target): Promise<number> => {
  const { store, close } = storeFor(target);
  try {
    const compiled = await compile(file, await deployedPinsOf(store), target.values.accept ?? []);
    if (!compiled.ok) return fail(compiled.message);
    const { outcome, catalogs } = compiled;
    for (const note of compiled.notes) process.stdout.write(`${note}\n`);
    const current = await store.deployed();
    const bundle = bundleOf({
      compilation: outcome,
      configFile: basename(file),
      mcpCatalogs: catalogs,
      pushedAt: new Date(),
    });
    const result = await store.push(bundle, current === undefined ? null : versionOf(current), {
      replaceSameVersion: compiled.pinsChanged,
    });
    const { snapshot } = outcome;
    switch (result.kind) {
      case 'pushed':
        process.stdout.write(
          `Pushed ${file} as version ${snapshot.version} (${snapshot.catalog.tools.length} tools, a ${kibibytes(result.objectBytes)} bundle).\n`,
        );
        return 0;
      case 'unchanged':
        process.stdout.write(`Version ${snapshot.version} is already deployed; nothing to do.\n`);
        return 0;
      case 'conflict':
        return fail(`Someone pushed version ${result.current ?? '(none)'} meanwhile; check it and push again.`);
    }
  } catch (error) {
    if (error instanceof StepFailure)
      return fail(`config:push could not ${error.step}: ${describeAwsError(error.cause)}`);
    return fail(`config:push failed: ${describeAwsError(error)}`);
  } finally {
    close();
  }
};

const kibibytes = (bytes: number) => `${Math.ceil(bytes / 1024).toLocaleString('en')} KiB`;

const run = async (): Promise<number> => {
  const parsed = readCommandLine(options, usage, { positionals: true });
  if ('exit' in parsed) return parsed.exit;
  const { values, positionals } = parsed;
  const { table, bucket, key } = values;
  if (table === undefined || bucket === undefined || key === undefined || positionals.length > 1) {
    process.stderr.write(usage);
    return 2;
  }
  return push(positionals[0] ?? defaultConfigFile, { table, bucket, key, values });
};

// Nothing reaches the user as a stack trace, whatever fails.
process.exitCode = await run().catch((error: unknown) => fail(`config:push failed: ${describeAwsError(error)}`));
