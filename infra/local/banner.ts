// What `npm start` prints once it runs. The terminal is for people: first what a person needs to
// try it (the console and its sign-ins, the client configuration to paste), then the addresses of
// everything else. Only literal (demo) tokens and passwords are shown, never one read from a
// reference.
import { callToolPath } from './call-tool-front.js';
import type { LocalRuntime } from './runtime.js';

/** Shown instead of a secret read from the environment: only literal demo values are printed. */
const fromEnvironment = '(from a reference)';

interface Person {
  readonly id: string;
  readonly password: string;
  readonly passwordFromEnvironment: boolean;
  readonly groups?: readonly string[];
}

/** What the banner reads of a runtime (LocalRuntime has it all). */
export type BannerFacts = Pick<
  LocalRuntime,
  | 'baseUrl'
  | 'mcpUrl'
  | 'grpcAddress'
  | 'dynamodbEndpoint'
  | 'erpUrl'
  | 'demoToolsUrl'
  | 'demoMcpUrl'
  | 'configFile'
  | 'toolNames'
> & {
  readonly stepFunctions: { readonly endpoint: string; readonly stateMachineArn: string };
  config(): {
    readonly agents: readonly {
      readonly id: string;
      readonly token: string | null;
      readonly tokenFromEnvironment: boolean;
    }[];
    readonly approvers: readonly Person[];
    readonly customers: readonly Person[];
  };
};

const signIns = (people: readonly Person[]): string[] =>
  people.map((person) =>
    `    ${person.id.padEnd(24)} ${(person.passwordFromEnvironment ? fromEnvironment : person.password).padEnd(28)} ${(person.groups ?? []).join(', ')}`.trimEnd(),
  );

export const banner = (runtime: BannerFacts, memory: boolean): string => {
  const { agents, approvers, customers } = runtime.config();
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
    `  Console: ${runtime.baseUrl}/console`,
    '',
    '  Approvers (console sign-in: id and password):',
    ...signIns(approvers),
    ...(customers.length === 0
      ? []
      : ['', '  Customers (sign-in on the confirmation pages an agent links them to):', ...signIns(customers)]),
    '',
    '  Client configuration (paste into your MCP client):',
    ...JSON.stringify(clientConfig, null, 2)
      .split('\n')
      .map((line) => `    ${line}`),
    '',
    '  Agents (bearer tokens):',
    ...agents.map(
      (agent) =>
        `    ${agent.id.padEnd(24)} ${agent.token === null ? '(no local token: deployed only)' : agent.tokenFromEnvironment ? fromEnvironment : agent.token}`,
    ),
    '',
    `  MCP endpoint     ${runtime.mcpUrl}`,
    `  gRPC gateway     ${runtime.grpcAddress} (PccToolGateway; server_id "*" or a system key)`,
    `  Tool channel     ${runtime.baseUrl.replace(/^http/, 'ws')}${callToolPath} (one call per connection; or POST to ${runtime.baseUrl}${callToolPath})`,
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
