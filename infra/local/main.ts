// `npm start`: runs the whole gateway on this machine and tells you how to talk to it.
import { callToolPath } from './call-tool-front.js';
import { parseLocalOptions, usage } from './options.js';
import { type LocalRuntime, StartupError, startLocalRuntime } from './runtime.js';
import { stopSignals } from './stop-signals.js';

/** Shown instead of a secret read from the environment: only literal demo values are printed. */
const fromEnvironment = '(from a reference)';

const banner = (runtime: LocalRuntime, memory: boolean): string => {
  const agents = runtime.config().agents;
  const first = agents.find((agent) => agent.token !== null);
  const token = first?.token === null || first === undefined || first.tokenFromEnvironment ? '<token>' : first.token;
  const clientConfig = {
    mcpServers: {
      'approval-gateway': { type: 'http', url: runtime.mcpUrl, headers: { Authorization: `Bearer ${token}` } },
    },
  };
  return [
    '',
    'Approval Gateway is running.',
    '',
    `  MCP endpoint     ${runtime.mcpUrl}`,
    `  gRPC gateway     ${runtime.grpcAddress} (PccToolGateway; server_id "*" or a system key)`,
    `  Tool channel     ${runtime.baseUrl.replace(/^http/, 'ws')}${callToolPath} (one call per connection; or POST to ${runtime.baseUrl}${callToolPath})`,
    `  Console          ${runtime.baseUrl}/console`,
    `  Resource meta    ${runtime.baseUrl}/.well-known/oauth-protected-resource/mcp`,
    `  Store            ${runtime.dynamodbEndpoint} (DynamoDB API${memory ? ', in memory only' : ''})`,
    `  Step Functions   ${runtime.stepFunctions.endpoint} (approval run ${runtime.stepFunctions.stateMachineArn})`,
    ...(runtime.erpUrl === null ? [] : [`  Demo ERP         ${runtime.erpUrl}`]),
    ...(runtime.demoToolsUrl === null
      ? []
      : [`  Demo tools       ${runtime.demoToolsUrl}/tool/call-tool (call-tool proxy to the MCP example server)`]),
    ...(runtime.demoMcpUrl === null ? [] : [`  Demo MCP server  ${runtime.demoMcpUrl} (server-everything)`]),
    `  Configuration    ${runtime.configFile} (watched: edits apply without a restart)`,
    `  Tools            ${runtime.toolNames().join(', ') || '(none)'}`,
    '',
    '  Agents (bearer tokens):',
    ...agents.map(
      (agent) =>
        `    ${agent.id.padEnd(24)} ${agent.token === null ? '(no local token: deployed only)' : agent.tokenFromEnvironment ? fromEnvironment : agent.token}`,
    ),
    '',
    '  Approvers (console sign-in: id and password):',
    ...runtime
      .config()
      .approvers.map(
        (person) =>
          `    ${person.id.padEnd(24)} ${(person.passwordFromEnvironment ? fromEnvironment : person.password).padEnd(28)} ${person.groups.join(', ')}`,
      ),
    '',
    '  Client configuration (paste into your MCP client):',
    ...JSON.stringify(clientConfig, null, 2)
      .split('\n')
      .map((line) => `    ${line}`),
    '',
    '  Try it:',
    `    npx @modelcontextprotocol/inspector@latest --cli ${runtime.mcpUrl} --transport http \\`,
    `      --header "Authorization: Bearer ${token}" --method tools/list`,
    '',
    memory
      ? 'Press Ctrl-C to stop; the data is in memory only: it grows with every call (about 5 KB each) and is gone when it stops.'
      : 'Press Ctrl-C to stop; data is kept for the next start.',
    '',
  ].join('\n');
};

const main = async (): Promise<number> => {
  // Everything this process writes (the store's files, the data key, the credential file) is its
  // owner's only: the store's files are made by LevelDB, which takes its modes from the umask.
  process.umask(0o077);
  const parsed = parseLocalOptions(process.argv.slice(2), process.env);
  if (parsed.kind === 'help') {
    process.stdout.write(usage);
    return 0;
  }
  if (parsed.kind === 'error') {
    process.stderr.write(`${parsed.message}\n\n${usage}`);
    return 2;
  }
  let runtime: LocalRuntime;
  try {
    runtime = await startLocalRuntime(parsed.options, { variables: process.env });
  } catch (error) {
    process.stderr.write(
      `${error instanceof StartupError || error instanceof Error ? error.message : String(error)}\n`,
    );
    return 1;
  }
  process.stdout.write(banner(runtime, parsed.options.memory));
  await new Promise<void>((resolve) => {
    const requests = stopSignals(Date.now);
    const shutdown = (signal: string) => {
      const request = requests(signal);
      if (request === 'same') {
        process.stdout.write(
          `${signal} received again within a second: still stopping cleanly (once more stops at once).\n`,
        );
        return;
      }
      if (request === 'force') {
        // Calls cut short here are settled at the next start (never sent twice).
        process.stdout.write(`\n${signal} received again: stopping at once.\n`);
        process.exit(1);
      }
      process.stdout.write(
        `\n${signal} received, stopping: new requests are refused, calls in flight finish first (Ctrl-C again stops at once)...\n`,
      );
      resolve();
    };
    process.on('SIGINT', () => shutdown('SIGINT'));
    process.on('SIGTERM', () => shutdown('SIGTERM'));
  });
  await runtime.stop();
  process.stdout.write('Stopped.\n');
  return 0;
};

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
