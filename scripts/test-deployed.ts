// `npm run test:deployed -- --stack <name> --client-id <id>`: the probes of deployed-probes.ts
// against a deployed stack, as one of its agents. The stack's outputs come from CloudFormation
// (through the AWS CLI, as in docs/deploy.md) or from the file `cdk deploy --outputs-file` wrote;
// the agent's token from the agents' token endpoint (client credentials). One line per probe;
// exit 0 when all pass, 1 when one fails, 2 when the kit could not start. No token or secret is
// ever printed.
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import * as z from 'zod';
import { requestClientCredentialsToken } from '../shared/adapters/oauth-client-credentials.js';
import { errorText } from '../shared/errors.js';
import { type CommandLine, readCommandLine } from './command-line.js';
import { demoProbeCalls, type ProbeCall, type ProbeResult, probeLine, redacted, runProbes } from './deployed-probes.js';

const usage = `Usage: npm run test:deployed -- --client-id <id> [--stack <name>] [--outputs <file>]
                                  [--read <tool> --read-arguments <json>] [--held <tool> --held-arguments <json>]

  --stack           the deployed stack's name (default ApprovalGateway)
  --outputs         the stack's outputs as \`cdk deploy --outputs-file <file>\` wrote them; without
                    it they are read with \`aws cloudformation describe-stacks\` (this shell's AWS
                    credentials and region)
  --client-id       the test agent: an app client of the agents' pool listed under agents: with
                    groups that let it read --read and be held on --held
  --client-secret   its secret; better in GATEWAY_PROBE_CLIENT_SECRET, out of the shell's history
  --token-url       the token endpoint (default: output AgentTokenUrl)
  --scope           the scope to ask for (default: output AgentScope)
  --read            a tool the agent may run at once (default ${demoProbeCalls.read.tool})
  --held            a tool whose call waits for an approver (default ${demoProbeCalls.held.tool});
                    the probe withdraws the call it makes (MCP tasks/cancel)
  --read-arguments, --held-arguments   their arguments, a JSON object
`;

const options = {
  stack: { type: 'string' },
  outputs: { type: 'string' },
  'client-id': { type: 'string' },
  'client-secret': { type: 'string' },
  'token-url': { type: 'string' },
  scope: { type: 'string' },
  read: { type: 'string' },
  'read-arguments': { type: 'string' },
  held: { type: 'string' },
  'held-arguments': { type: 'string' },
  help: { type: 'boolean' },
} as const;

/** The kit cannot start: said to the operator, exit 2. */
class SetupError extends Error {}

const StackOutputs = z.record(z.string(), z.string());
/** `cdk deploy --outputs-file`: each stack's outputs by name. */
const OutputsFile = z.record(z.string(), StackOutputs);
/** `aws cloudformation describe-stacks --output json`. */
const DescribeStacks = z.object({
  Stacks: z.array(
    z.object({ Outputs: z.array(z.object({ OutputKey: z.string(), OutputValue: z.string() })).optional() }),
  ),
});

const parsedJson = (text: string, where: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    throw new SetupError(`${where} is not JSON`);
  }
};

/** The outputs of one stack of a `cdk deploy --outputs-file` file. */
const outputsFromFile = (text: string, file: string, stack: string): Record<string, string> => {
  const parsed = OutputsFile.safeParse(parsedJson(text, file));
  if (!parsed.success)
    throw new SetupError(`${file} is not an outputs file of cdk deploy (stack name → output → value)`);
  const outputs = parsed.data[stack];
  if (outputs === undefined) {
    throw new SetupError(
      `${file} has no stack ${stack} (it has ${Object.keys(parsed.data).join(', ') || 'none'}): pass --stack`,
    );
  }
  return outputs;
};

const readOutputsFile = (file: string): Promise<string> =>
  readFile(file, 'utf8').catch((error: unknown) => {
    throw new SetupError(`cannot read ${file}: ${errorText(error)}`);
  });

const describeStack = (stack: string): Promise<Record<string, string>> =>
  new Promise((resolve, reject) => {
    const args = ['cloudformation', 'describe-stacks', '--stack-name', stack, '--output', 'json'];
    execFile('aws', args, { timeout: 60_000, maxBuffer: 4 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error !== null) {
        const missing = 'code' in error && error.code === 'ENOENT';
        const why = missing ? 'the aws command is not installed' : (stderr.trim().split('\n').at(-1) ?? error.message);
        reject(new SetupError(`could not read the outputs of stack ${stack}: ${why} (or pass --outputs <file>)`));
        return;
      }
      const parsed = DescribeStacks.safeParse(parsedJson(stdout, 'the answer of aws cloudformation describe-stacks'));
      if (!parsed.success) reject(new SetupError(`aws cloudformation describe-stacks answered no stack ${stack}`));
      else resolve(Object.fromEntries((parsed.data.Stacks[0]?.Outputs ?? []).map((o) => [o.OutputKey, o.OutputValue])));
    });
  });

const required = (value: string | undefined, what: string): string => {
  if (value === undefined || value === '') throw new SetupError(`${what} is missing`);
  return value;
};

const toolArguments = (text: string | undefined, option: string): Record<string, unknown> | undefined => {
  if (text === undefined) return undefined;
  const parsed = z.record(z.string(), z.unknown()).safeParse(parsedJson(text, `--${option}`));
  if (!parsed.success) throw new SetupError(`--${option} is not a JSON object`);
  return parsed.data;
};

const callOf = (tool: string | undefined, text: string | undefined, option: string, fallback: ProbeCall) => {
  const args = toolArguments(text, `${option}-arguments`);
  if (tool === undefined) return { tool: fallback.tool, arguments: args ?? fallback.arguments };
  if (args === undefined) throw new SetupError(`--${option} ${tool} needs --${option}-arguments <json object>`);
  return { tool, arguments: args };
};

type Values = CommandLine<typeof options>['values'];

/** The probes' results against the stack the options name; the secrets not to print. */
const probeStack = async (values: Values): Promise<{ results: ProbeResult[]; secrets: string[] }> => {
  const stack = values.stack ?? 'ApprovalGateway';
  const clientId = required(values['client-id'], '--client-id (the test agent, an app client of the agents pool)');
  const secret = required(
    values['client-secret'] ?? process.env.GATEWAY_PROBE_CLIENT_SECRET,
    'The client secret (GATEWAY_PROBE_CLIENT_SECRET, or --client-secret)',
  );
  const calls = {
    read: callOf(values.read, values['read-arguments'], 'read', demoProbeCalls.read),
    held: callOf(values.held, values['held-arguments'], 'held', demoProbeCalls.held),
  };
  const outputs =
    values.outputs === undefined
      ? await describeStack(stack)
      : outputsFromFile(await readOutputsFile(values.outputs), values.outputs, stack);
  const mcpUrl = required(outputs.McpUrl, "The stack's output McpUrl");
  // A stack given its own issuer has no token endpoint of its own: the operator names it.
  const ownIssuer = ' (a stack with its own issuer: pass --token-url and --scope)';
  const tokenUrl =
    values['token-url'] ?? required(outputs.AgentTokenUrl, `The stack's output AgentTokenUrl${ownIssuer}`);
  const scope = values.scope ?? required(outputs.AgentScope, `The stack's output AgentScope${ownIssuer}`);
  const endpoint = URL.parse(tokenUrl);
  if (endpoint === null) throw new SetupError(`The token endpoint ${tokenUrl} is not a URL`);
  const token = await requestClientCredentialsToken(
    endpoint,
    { clientId, clientSecret: secret, scope, resource: null },
    { fetch, timeoutMs: 10_000 },
  ).then(
    (answer) => answer.accessToken,
    (error: unknown) => (error instanceof Error ? error : new Error(String(error))),
  );
  const tokenResult: ProbeResult =
    typeof token === 'string'
      ? { name: 'token', outcome: 'pass', detail: `client ${clientId} got a token for ${scope} from ${tokenUrl}` }
      : {
          name: 'token',
          outcome: 'fail',
          detail: `client ${clientId} got no token from ${tokenUrl}: ${token.message}`,
        };
  const secrets = typeof token === 'string' ? [secret, token] : [secret];
  const results = await runProbes(
    { mcpUrl, token: typeof token === 'string' ? token : null, authorizationServers: true },
    calls,
  );
  return { results: [tokenResult, ...results], secrets };
};

const main = async (): Promise<number> => {
  const parsed = readCommandLine(options, usage);
  if ('exit' in parsed) return parsed.exit;
  const { values } = parsed;
  const secrets = [values['client-secret'] ?? process.env.GATEWAY_PROBE_CLIENT_SECRET ?? ''];
  try {
    const probed = await probeStack(values);
    for (const result of probed.results) process.stdout.write(`${probeLine(result, probed.secrets)}\n`);
    const failed = probed.results.filter((result) => result.outcome !== 'pass').length;
    process.stdout.write(
      failed === 0
        ? `All ${probed.results.length} probes passed.\n`
        : `${failed} of ${probed.results.length} probes did not pass.\n`,
    );
    return failed === 0 ? 0 : 1;
  } catch (error) {
    // Nothing reaches the operator as a stack trace, or with a secret in it.
    const message = error instanceof SetupError ? error.message : `the kit could not run: ${String(error)}`;
    process.stderr.write(`${redacted(message, secrets)}\n\n${usage}`);
    return 2;
  }
};

process.exitCode = await main();
