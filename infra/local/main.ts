// `npm start`: runs the whole gateway on this machine and tells you how to talk to it.
import { parseLocalOptions, usage } from './options.js';
import { type LocalRuntime, StartupError, startLocalRuntime } from './runtime.js';

const banner = (runtime: LocalRuntime): string => {
  const agents = runtime.config().agents;
  const first = agents[0];
  const token = first?.token ?? '<token>';
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
    `  Console          ${runtime.baseUrl}/console`,
    `  Resource meta    ${runtime.baseUrl}/.well-known/oauth-protected-resource/mcp`,
    `  Store            ${runtime.dynamodbEndpoint} (DynamoDB API)`,
    `  Step Functions   ${runtime.stepFunctions.endpoint} (approval workflow ${runtime.stepFunctions.stateMachineArn})`,
    ...(runtime.erpUrl === null ? [] : [`  Demo ERP         ${runtime.erpUrl}`]),
    `  Configuration    ${runtime.configFile} (watched: edits apply without a restart)`,
    `  Tools            ${runtime.toolNames().join(', ') || '(none)'}`,
    '',
    '  Agents (bearer tokens):',
    ...agents.map((agent) => `    ${agent.id.padEnd(24)} ${agent.token}`),
    '',
    '  Approvers (console sign-in: id and password):',
    ...runtime
      .config()
      .approvers.map(
        (person) => `    ${person.id.padEnd(24)} ${person.password.padEnd(28)} ${person.groups.join(', ')}`,
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
    'Press Ctrl-C to stop; data is kept for the next start.',
    '',
  ].join('\n');
};

const main = async (): Promise<number> => {
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
  process.stdout.write(banner(runtime));
  await new Promise<void>((resolve) => {
    const shutdown = (signal: string) => {
      process.stdout.write(`\n${signal} received, stopping...\n`);
      resolve();
    };
    process.once('SIGINT', () => shutdown('SIGINT'));
    process.once('SIGTERM', () => shutdown('SIGTERM'));
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
