// The synthesized stack run here (test/deployed/stack.ts): the core flows through the functions
// `cdk synth` bundles, with the environment the template declares, and every AWS call they make
// checked against their roles in the template.
//
// Long: the core flows (direct, staff, customer, the channel) share one stack, so the permission
// check sees every call they make and judges each grant left unused against all of them.
import { KMSClient } from '@aws-sdk/client-kms';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KmsReceiptSigner } from '../../shared/adapters/kms-receipt-signer.js';
import { jwksPath } from '../../shared/receipts/signer.js';
import { newCustomerSession, newSession } from '../../shared/sessions/session.js';
import { decodeFrame } from '../../shared/wire/call-tool-frame.js';
import { eventually } from '../support/approval-org.js';
import { startAgentTokenIssuer } from '../support/oidc-provider.js';
import { verifies } from '../support/requirements.js';
import { temporaryFolder } from '../support/runtime-process.js';
import { type Assembly, deployedAssembly } from './assembly.js';
import {
  agent,
  agentAuthorization,
  approver,
  customer,
  type Ledger,
  ledgerKey,
  mcpHeaders,
  mcpSender,
  openChannel,
  pushConfiguration,
  signedInCookie,
  startLedger,
  structured,
  writeOrganization,
} from './organization.js';
import { checkCalls, grantsOfRole, roleOf } from './permissions.js';
import { type DeployedStack, functionId, startDeployedStack } from './stack.js';
import { reasonKey, runtimeActions, unusedGrantReasons } from './unused-grants.js';

/** The executions table's logical id. */
const executionsTableId = (assembly: Assembly): string =>
  Object.keys(assembly.template.Resources).find((id) => id.startsWith('ExecutionsTable')) ?? 'ExecutionsTable';

describe('the synthesized stack, run here', () => {
  let assembly: Assembly;
  let stack: DeployedStack;
  let ledger: Ledger;
  let folder: Awaited<ReturnType<typeof temporaryFolder>>;
  let secretsPrefix: string | undefined;
  let authorization: Record<string, string>;

  let send: ReturnType<typeof mcpSender>;
  const mcp = (method: string, params: Record<string, unknown>, as = authorization) => send(method, params, as);

  beforeAll(async () => {
    assembly = await deployedAssembly();
    if (assembly.synthMs !== null) process.stdout.write(`cdk synth with bundling took ${assembly.synthMs} ms\n`);
    ledger = await startLedger();
    stack = await startDeployedStack(assembly);
    send = mcpSender(stack);
    folder = await temporaryFolder('gateway-deployed-');
    secretsPrefix = stack.functions.get(functionId(stack, 'Mcp'))?.spec.environment.SECRETS_PREFIX;
    // The credential is a secret where the template gives the function a prefix to read it from.
    if (secretsPrefix !== undefined) stack.secrets.put(`${secretsPrefix}ledger-key`, ledgerKey);
    const file = await writeOrganization(
      folder.path,
      ledger.url,
      secretsPrefix === undefined ? ledgerKey : '${secret:ledger-key}',
    );
    await pushConfiguration(stack, file);
    authorization = await agentAuthorization(stack);
  });

  afterAll(async () => {
    await stack?.close();
    await ledger?.close();
    await folder?.remove();
  });

  it(
    verifies(
      ['deployed.runs-what-ships', 'deployed.core-flows', 'deployed.agent-authorizer'],
      "lists the tools and runs a direct call, as the configured agent with its entry's groups",
    ),
    async () => {
      const listed = JSON.parse(await mcp('tools/list', {}));
      const names: unknown[] = listed.result.tools.map((tool: { name: unknown }) => tool.name);
      expect(names, stack.functions.get(functionId(stack, 'Mcp'))?.logs()).toEqual(
        expect.arrayContaining(['ledger.balances.get', 'ledger.transfers.create']),
      );

      const read = structured(await mcp('tools/call', { name: 'ledger.balances.get', arguments: { account: 'A-1' } }));
      expect(JSON.stringify(read)).toContain('1250.00');
      expect(ledger.requests.at(-1)).toMatchObject({ method: 'GET', path: '/balances/A-1' });
      expect(ledger.requests.at(-1)?.headers['x-api-key']).toBe(ledgerKey);
    },
  );

  it(verifies('deployed.core-flows', 'reads the system credential from Secrets Manager'), (context) => {
    // The stack gives the MCP function SECRETS_PREFIX on another branch; until then there is no secret to read.
    if (secretsPrefix === undefined) context.skip();
    // The read above sent the secret's value; the function asked for it by the prefixed name.
    expect(stack.calls).toContainEqual(
      expect.objectContaining({ caller: functionId(stack, 'Mcp'), action: 'secretsmanager:GetSecretValue' }),
    );
  });

  /** A held call's id, once its approval run has registered (the approvers' notice is sent then). */
  const heldAndRegistered = async (name: string, args: Record<string, unknown>) => {
    const held = structured(await mcp('tools/call', { name, arguments: args }));
    expect(held.status).toBe('pending_approval');
    const executionId = String(held.execution_id);
    // Registered, the run is resumed by the decision (SendTaskSuccess), not handed it when it registers.
    const notices = await eventually(
      async () => stack.events.filter((event) => JSON.stringify(event.detail).includes(executionId)),
      // A run that failed will not notify: stop waiting and say why.
      (found) => found.length > 0 || stack.runFailures.some((failure) => failure.includes(executionId)),
    );
    // None: what the runs and the two functions on the way said (a run that failed, a start refused).
    const said = [
      ...stack.runFailures,
      ...[...stack.functions]
        .filter(([id]) => id.startsWith('McpFunction') || id.includes('HeldCallStepsFunction'))
        .map(([id, fn]) => `${id}:\n${fn.logs()}`),
    ];
    expect(notices, said.join('\n')).toHaveLength(1);
    return { executionId, held };
  };

  /** Opens a call's page as the cookie's holder and sends its form: the arguments shown, the session's CSRF token. */
  const answerOnPage = async (page: string, action: string, cookie: string, fields: Record<string, string>) => {
    const shown = await stack.http({ method: 'GET', path: page, headers: { cookie } });
    expect(shown.functionError).toBeUndefined();
    expect(shown.status).toBe(200);
    const argumentsHash = /name="arguments_hash" value="([0-9a-f]+)"/.exec(shown.body)?.[1] ?? '';
    const answer = await stack.http({
      method: 'POST',
      path: action,
      // A browser says the form came from the page's own origin.
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin' },
      body: new URLSearchParams({ ...fields, arguments_hash: argumentsHash }).toString(),
    });
    expect(answer.functionError).toBeUndefined();
    expect(answer.status).toBe(303);
    return answer;
  };

  const statusOf = async (executionId: string) =>
    structured(await mcp('tools/call', { name: 'get_execution_status', arguments: { execution_id: executionId } }))
      .status;

  it(verifies('deployed.core-flows', 'holds a call, takes the decision in the console, and runs it once'), async () => {
    const { executionId } = await heldAndRegistered('ledger.transfers.create', { to: 'B-2', amount: '900.00' });
    // The console's sign-in ends by issuing this session cookie.
    const session = newSession(approver, Date.now());
    const page = `/console/executions/${executionId}`;
    await answerOnPage(page, `${page}/decision`, await signedInCookie(stack, session), {
      csrf: session.csrf,
      outcome: 'approve',
    });
    await stack.settled();
    expect(ledger.requests.filter((request) => request.path === '/transfers')).toHaveLength(1);
    expect(await statusOf(executionId)).toBe('succeeded');
  });

  it(
    verifies('deployed.customer-step', 'holds a call for the customer, who confirms it on their page; it runs once'),
    async () => {
      const { executionId, held } = await heldAndRegistered('ledger.refunds.create', { amount: '40.00' });
      // The link the agent hands its customer: the customer's page of the call, on the API's address.
      const page = `/customer/calls/${executionId}`;
      expect(held.approval_url).toBe(stack.outputs.McpUrl?.replace(/\/mcp$/, page));
      // The customer's sign-in ends with a session for this one call.
      const session = newCustomerSession(customer, executionId, Date.now());
      const answered = await answerOnPage(page, `${page}/answer`, await signedInCookie(stack, session), {
        csrf: session.csrf,
        outcome: 'confirm',
      });
      expect(answered.headers.location).toBe('/customer/answered?outcome=runs');
      await stack.settled();
      expect(ledger.requests.filter((request) => request.path === '/refunds')).toHaveLength(1);
      expect(await statusOf(executionId)).toBe('succeeded');
    },
  );

  it(
    verifies(
      'deployed.call-tool-channel',
      "answers one call-tool message over the WebSocket API with one frame, as its $connect token's agent",
    ),
    async () => {
      const url = stack.outputs.CallToolWebSocketUrl ?? '';
      const params = JSON.stringify({ name: 'ledger.balances.get', arguments: { account: 'A-7' } });
      // Refused at the handshake: no token (API Gateway's own 401), a token of another issuer (the authorizer's Deny).
      expect(await openChannel(url, {}, params)).toEqual({ status: 401 });
      expect(await openChannel(url, { authorization: 'Bearer not-a-token' }, params)).toEqual({ status: 403 });

      const opened = await openChannel(url, authorization, params);
      const failures = stack.socketFailures.map((failure) => failure.message).join('\n');
      expect(opened.status, failures).toBe(101);
      expect(opened.received, failures).toHaveLength(1);
      expect(opened.code).toBe(1000);
      const frame = decodeFrame(new Uint8Array(opened.received?.[0]?.data ?? []));
      expect(frame.kind).toBe('result');
      expect(JSON.stringify(frame)).toContain('1250.00');
      expect(ledger.requests.at(-1)).toMatchObject({ method: 'GET', path: '/balances/A-7' });
      // The frame was posted and the connection closed through the stage's management API.
      const socketFn = functionId(stack, 'CallToolSocket');
      const managed = stack.calls.filter((call) => call.action === 'execute-api:ManageConnections');
      expect(managed.map(({ caller, resource }) => `${caller} ${resource}`)).toEqual(
        ['POST', 'DELETE'].map((method) =>
          expect.stringMatching(
            new RegExp(`^${socketFn} arn:aws:execute-api:local:\\d+:\\w+/live/${method}/@connections/[^/]+$`),
          ),
        ),
      );
    },
  );

  it(
    verifies(
      ['deployed.agent-authorizer', 'agents.any-app-client'],
      'lets in an app client added to the pool after the push, as an agent with no groups',
    ),
    async () => {
      // An operator adds an app client to the agents' pool; the configuration does not list it.
      const later = { id: '7laterclientid000000000000', secret: 'later-client-secret' };
      await stack.agentPool.addClient(later);
      const token = await stack.agentPool.token(later, stack.agentPool.scope);
      const as = { authorization: `Bearer ${token}` };
      // Let in by the authorizer; with no groups no policy permits it the ledger, whose tools are
      // then hidden from it (and a call to one refused as unknown), while the gateway's own are listed.
      const listed = JSON.parse(await mcp('tools/list', {}, as));
      const names: unknown[] = listed.result.tools.map((tool: { name: unknown }) => tool.name);
      expect(names).toContain('get_execution_status');
      expect(names).not.toContain('ledger.balances.get');
      const refused = structured(
        await mcp('tools/call', { name: 'ledger.balances.get', arguments: { account: 'A-1' } }, as),
      );
      expect(refused).toMatchObject({ status: 'denied', code: 'unknown_tool' });
      expect(ledger.requests.filter((request) => request.path === '/balances/A-1')).toHaveLength(1);
    },
  );

  it(
    verifies(
      ['deployed.agent-authorizer', 'agents.unauthorized-challenge'],
      'refuses a token of another issuer, a token without the agent scope, and a request without a token',
    ),
    async () => {
      const client = { id: agent.clientId, secret: agent.secret };
      // Another issuer with an app client of the same id and the same scope.
      const stranger = await startAgentTokenIssuer({ clients: [client], scope: stack.agentPool.scope });
      const otherScope = { id: '8otherscopeclient000000000', secret: 'other-scope-secret' };
      const notAgentScope = `${stack.agentPool.scope.split('/')[0]}/not-the-agent-scope`;
      await stack.agentPool.addClient(otherScope, [notAgentScope]);
      try {
        const tokens = [
          await stranger.token(client, stack.agentPool.scope),
          await stack.agentPool.token(otherScope, notAgentScope),
        ];
        const authorizer = stack.functions.get(functionId(stack, 'AgentAuthorizer'));
        // The authorizer's log lines from here on (the channel's refused handshake came before).
        const count = (line: RegExp) => authorizer?.logs().match(line)?.length ?? 0;
        const [notValidBefore, refusedBefore] = [count(/token not valid/g), count(/token refused/g)];
        // Each token twice: the second answer is the authorizer's cached one (its result TTL).
        for (const token of [...tokens, ...tokens]) {
          const answer = await stack.http({
            method: 'POST',
            path: '/mcp',
            headers: { ...mcpHeaders, authorization: `Bearer ${token}` },
            body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
          });
          // The authorizer lets the request on with no caller; the MCP function answers the challenge.
          expect(answer.status, authorizer?.logs()).toBe(401);
          expect(answer.headers['www-authenticate']).toMatch(/^Bearer /);
        }
        // Run once per token: the repeats were answered from the cache.
        expect(count(/token not valid/g) - notValidBefore).toBe(2);

        // Without an Authorization header API Gateway answers itself; the authorizer never runs.
        const bare = await stack.http({
          method: 'POST',
          path: '/mcp',
          headers: mcpHeaders,
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
        });
        expect(bare.status).toBe(401);
        expect(bare.headers['www-authenticate']).toBeUndefined();
        expect(JSON.parse(bare.body)).toEqual({ message: 'Unauthorized' });
        expect(count(/token refused/g) - refusedBefore).toBe(2);
      } finally {
        await stranger.close();
      }
    },
  );

  it(
    verifies('receipt-key.jwks', "serves the receipt key's JWK Set, read from KMS by the public documents' function"),
    async () => {
      const answer = await stack.http({ method: 'GET', path: jwksPath });
      expect(answer.functionError).toBeUndefined();
      expect(answer.status).toBe(200);
      expect(answer.headers['cache-control']).toBe('public, max-age=300');
      // The key KMS holds, as the operator reads it with the stand-in's credential.
      const { env, endpoints } = stack.operator;
      const credentials = {
        accessKeyId: env.AWS_ACCESS_KEY_ID ?? '',
        secretAccessKey: env.AWS_SECRET_ACCESS_KEY ?? '',
      };
      const kms = new KMSClient({ endpoint: endpoints.kms, region: 'local', credentials });
      try {
        const held = await new KmsReceiptSigner(kms, stack.outputs.ReceiptKeyArn ?? '').publicKeys();
        expect(JSON.parse(answer.body)).toEqual(held);
      } finally {
        kms.destroy();
      }
      expect(stack.calls).toContainEqual(
        expect.objectContaining({ caller: functionId(stack, 'ResourceMetadata'), action: 'kms:GetPublicKey' }),
      );
    },
  );

  it(
    verifies(
      'deployed.permissions-match-calls',
      'allows every call the functions made, and explains every grant left unused',
    ),
    () => {
      const resolve = stack.resolve;
      const grants = new Map(
        [...stack.functions.keys()].map((id) => [id, grantsOfRole(assembly, roleOf(assembly, id), resolve)]),
      );
      const report = checkCalls(stack.calls, grants, runtimeActions);
      process.stdout.write(`granted, unused by the flows:\n  ${report.unused.join('\n  ')}\n`);
      expect(report.denied).toEqual([]);
      const unexplained = report.unused.filter((line) => unusedGrantReasons[reasonKey(line)] === undefined);
      expect(unexplained).toEqual([]);
    },
  );

  it(verifies('deployed.failures-reported', 'names a call the role no longer allows when a grant is removed'), () => {
    const mcpId = functionId(stack, 'Mcp');
    const role = roleOf(assembly, mcpId);
    // The template with dynamodb:PutItem taken out of every statement of the MCP function's role.
    const template = structuredClone(assembly.template);
    for (const resource of Object.values(template.Resources)) {
      const roles = resource.Properties.Roles;
      if (resource.Type !== 'AWS::IAM::Policy' || !JSON.stringify(roles).includes(`"${role}"`)) continue;
      const document = resource.Properties.PolicyDocument;
      const statements =
        typeof document === 'object' &&
        document !== null &&
        'Statement' in document &&
        Array.isArray(document.Statement)
          ? document.Statement
          : [];
      for (const statement of statements) {
        if (Array.isArray(statement.Action))
          statement.Action = statement.Action.filter((action: unknown) => action !== 'dynamodb:PutItem');
      }
    }
    const changed = { ...assembly, template };
    const grants = new Map([[mcpId, grantsOfRole(changed, role, stack.resolve)]]);
    const report = checkCalls(stack.calls, grants, runtimeActions);
    expect(report.denied).toContain(
      `${mcpId} called dynamodb:PutItem on ${stack.resolve({ 'Fn::GetAtt': [executionsTableId(assembly), 'Arn'] }, 'test')}, which its role does not allow`,
    );
  });
});
