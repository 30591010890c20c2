// The probes `npm run test:deployed` runs against a gateway, deployed or local: a refused token is
// answered 401 with its challenge, the protected-resource metadata the challenge names is served,
// the agent's tools are listed, a read runs at once, a write is held (a customer's link, if any,
// absolute) and its status read back, and the held call is withdrawn (MCP tasks/cancel) so that no
// approver is left a decision to make. Each probe answers one line; none carries a token.
import { Client, type FetchLike, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import * as z from 'zod';
import { errorText } from '../shared/errors.js';
import { ResultObject } from '../shared/result.js';

export interface ProbeTarget {
  /** The MCP endpoint (stack output McpUrl). */
  readonly mcpUrl: string;
  /** The test agent's bearer token; null when none could be had (its probes are skipped). */
  readonly token: string | null;
  /** Whether the metadata document must name an authorization server (a deployed stack's does). */
  readonly authorizationServers: boolean;
  /** How requests are sent (a harness may route them without sockets). @default fetch */
  readonly fetch?: FetchLike;
}

export interface ProbeCall {
  readonly tool: string;
  readonly arguments: Record<string, unknown>;
}

/** The tools the probes call: one the agent may read at once, one that waits for an approver. */
export interface ProbeCalls {
  readonly read: ProbeCall;
  readonly held: ProbeCall;
}

/** The demo organization's: a shipment look-up (answered whatever orders exist) and a purchase order finance approves. */
export const demoProbeCalls: ProbeCalls = {
  read: { tool: 'erp.shipments.track', arguments: { tracking_number: '1Z999AA10123456784' } },
  held: {
    tool: 'erp.purchase_orders.create',
    arguments: { vendor_id: 'V-100', amount: '2500', currency: 'EUR', description: 'Probe: withdrawn at once' },
  },
};

export interface ProbeResult {
  readonly name: string;
  readonly outcome: 'pass' | 'fail' | 'skip';
  /** What was checked (pass) or what went wrong (fail, skip). */
  readonly detail: string;
}

/** A probe that found the gateway wrong: its message is the line's detail. */
class ProbeFailure extends Error {}
/** A probe that cannot run because one before it failed. */
class ProbeSkipped extends Error {}

const check: (holds: boolean, detail: string) => asserts holds = (holds, detail) => {
  if (!holds) throw new ProbeFailure(detail);
};

const needs: (holds: boolean, why: string) => asserts holds = (holds, why) => {
  if (!holds) throw new ProbeSkipped(why);
};

/** A detail is one line of at most 200 characters, however long the page or error it quotes. */
const shortened = (text: string): string => {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
};

/** A bearer token no issuer signed: the gateway must refuse it (RFC 6750 §3). */
const refusedToken = 'probe-not-a-token';

/** Any request will do: the token is refused before its body is read. */
const ping = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });

/** The refused token's answer; the metadata document's address, from its challenge. */
const probeRefusedToken = async (target: ProbeTarget, send: FetchLike): Promise<string> => {
  const response = await send(target.mcpUrl, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${refusedToken}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: ping,
  });
  await response.body?.cancel();
  check(response.status === 401, `a token no issuer signed was answered ${response.status}, not 401`);
  const challenge = response.headers.get('www-authenticate') ?? '';
  check(/^Bearer\b/i.test(challenge), 'the 401 has no WWW-Authenticate: Bearer challenge');
  const metadataUrl = /resource_metadata="([^"]+)"/.exec(challenge)?.[1];
  check(metadataUrl !== undefined, 'the challenge names no resource_metadata document');
  return metadataUrl;
};

const Metadata = z.object({
  resource: z.string(),
  authorization_servers: z.array(z.string()).optional(),
  bearer_methods_supported: z.array(z.string()).optional(),
});

const probeMetadata = async (target: ProbeTarget, send: FetchLike, metadataUrl: string): Promise<string> => {
  const response = await send(metadataUrl, { headers: { accept: 'application/json' } });
  const text = await response.text();
  check(response.status === 200, `${metadataUrl} answered ${response.status}`);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new ProbeFailure(`${metadataUrl} is not JSON: ${shortened(text)}`);
  }
  const parsed = Metadata.safeParse(body);
  check(parsed.success, `${metadataUrl} is not a protected-resource metadata document (no resource)`);
  const document = parsed.data;
  const resource = URL.parse(document.resource);
  const mcp = new URL(target.mcpUrl);
  check(
    resource !== null && resource.pathname === mcp.pathname,
    `its resource is ${document.resource}, not the MCP endpoint ${mcp.pathname}`,
  );
  const servers = document.authorization_servers ?? [];
  check(!target.authorizationServers || servers.length > 0, 'it names no authorization server to get a token from');
  return `${metadataUrl} names ${document.resource}${servers.length > 0 ? ` and ${servers.join(', ')}` : ''}`;
};

const resultOf = (answer: { structuredContent?: unknown }, tool: string): ResultObject => {
  const parsed = ResultObject.safeParse(answer.structuredContent);
  if (!parsed.success) throw new ProbeFailure(`${tool} answered no result object`);
  return parsed.data;
};

const described = (result: ResultObject): string =>
  `${result.status}${result.code === null ? '' : ` (${result.code})`}${result.message === null ? '' : `: ${shortened(result.message)}`}`;

const Task = z.looseObject({ taskId: z.string(), status: z.string() });

/** The probes that speak MCP as the test agent, in order. */
const agentProbeNames = ['tools-list', 'direct-read', 'held-call', 'held-status', 'withdraw'] as const;

type Probe = (name: (typeof agentProbeNames)[number], run: () => Promise<string>) => Promise<unknown>;

const probeTools = (client: Client, calls: ProbeCalls, record: Probe) =>
  record('tools-list', async () => {
    const names = new Set((await client.listTools()).tools.map((tool) => tool.name));
    const missing = ['get_execution_status', calls.read.tool, calls.held.tool].filter((name) => !names.has(name));
    check(missing.length === 0, `the agent is not offered ${missing.join(', ')} (${names.size} tools listed)`);
    return `${names.size} tools, ${calls.read.tool} and ${calls.held.tool} among them`;
  });

const callTool = async (client: Client, call: ProbeCall): Promise<ResultObject> =>
  resultOf(await client.callTool({ name: call.tool, arguments: call.arguments }), call.tool);

/** The held call's probes; a call not held skips what follows it. */
const probeHeldCall = async (client: Client, calls: ProbeCalls, record: Probe): Promise<void> => {
  const held: { id: string | null } = { id: null };
  await record('held-call', async () => {
    const result = await callTool(client, calls.held);
    check(
      result.status === 'pending_approval',
      `${calls.held.tool} answered ${described(result)}, not pending_approval`,
    );
    check(result.execution_id !== null, 'the held call has no execution_id');
    held.id = result.execution_id;
    // A call waiting for its customer carries the customer's page: an address they can open.
    const link = result.approval_url === null ? null : URL.parse(result.approval_url);
    check(
      result.approval_url === null || link !== null,
      `its approval_url is not an absolute URL: ${result.approval_url}`,
    );
    return `${calls.held.tool} waits for approval (${held.id})${link === null ? '' : `, approval_url at ${link.origin}`}`;
  });
  const id = held.id;
  const status = () => callTool(client, { tool: 'get_execution_status', arguments: { execution_id: id } });
  await record('held-status', async () => {
    needs(id !== null, 'no call was held');
    const result = await status();
    check(
      result.status === 'pending_approval',
      `get_execution_status answered ${described(result)}, not pending_approval`,
    );
    return 'get_execution_status answers pending_approval';
  });
  await record('withdraw', async () => {
    needs(id !== null, 'no call was held');
    const cancelled = await client.request({ method: 'tasks/cancel', params: { taskId: id } }, Task).then(
      (task) => (task.status === 'cancelled' ? null : `tasks/cancel left the task ${task.status}`),
      (error: unknown) => `tasks/cancel failed (${messageOf(error)})`,
    );
    // What the call is now says whether an approver still has it to decide.
    const result = await status();
    const left =
      result.status === 'pending_approval' ? `; the held call ${id} still waits: reject it in the console` : '';
    check(cancelled === null, `${cancelled}${left}`);
    check(
      result.status === 'rejected' && result.code === 'withdrawn',
      `after tasks/cancel the call is ${described(result)}, not rejected (withdrawn)${left}`,
    );
    return 'tasks/cancel withdrew it: rejected (withdrawn), nothing left for approvers';
  });
};

/** The first line of a thrown value, whatever it is. */
const messageOf = (error: unknown): string => shortened(errorText(error));

/** No request waits longer than API Gateway would (30 s): a probe ends, whatever the server does. */
const requestLimitMs = 35_000;

const bounded =
  (send: FetchLike): FetchLike =>
  (url, init) => {
    const limit = AbortSignal.timeout(requestLimitMs);
    return send(url, { ...init, signal: init?.signal ? AbortSignal.any([init.signal, limit]) : limit });
  };

/** Runs every probe against the target, in order, and answers one result per probe. */
export const runProbes = async (target: ProbeTarget, calls: ProbeCalls = demoProbeCalls): Promise<ProbeResult[]> => {
  const send = bounded(target.fetch ?? fetch);
  const results: ProbeResult[] = [];
  const record = async (name: string, run: () => Promise<string>): Promise<boolean> => {
    try {
      results.push({ name, outcome: 'pass', detail: await run() });
      return true;
    } catch (error) {
      results.push({ name, outcome: error instanceof ProbeSkipped ? 'skip' : 'fail', detail: messageOf(error) });
      return false;
    }
  };
  let metadataUrl = '';
  await record('refused-token', async () => {
    metadataUrl = await probeRefusedToken(target, send);
    return `a token no issuer signed is answered 401 with a Bearer challenge naming ${metadataUrl}`;
  });
  await record('metadata', async () => {
    needs(metadataUrl !== '', 'no challenge named the document');
    return probeMetadata(target, send, metadataUrl);
  });
  const client = new Client({ name: 'approval-gateway-probes', version: '1.0.0' });
  const connected = await record('connect', async () => {
    needs(target.token !== null, 'the agent has no token');
    await client.connect(
      new StreamableHTTPClientTransport(new URL(target.mcpUrl), {
        requestInit: { headers: { Authorization: `Bearer ${target.token}` } },
        fetch: send,
      }),
    );
    return 'the test agent is let in with its token';
  });
  try {
    if (connected) {
      await probeTools(client, calls, record);
      await record('direct-read', async () => {
        const result = await callTool(client, calls.read);
        check(result.status === 'succeeded', `${calls.read.tool} answered ${described(result)}, not succeeded`);
        return `${calls.read.tool} ran at once and succeeded`;
      });
      await probeHeldCall(client, calls, record);
    } else {
      for (const name of agentProbeNames)
        results.push({ name, outcome: 'skip', detail: 'the agent could not connect' });
    }
  } finally {
    await client.close().catch(() => undefined);
  }
  return results;
};

/** Each occurrence of a secret in a line, replaced: nothing the kit prints carries one. */
export const redacted = (line: string, secrets: readonly string[]): string =>
  secrets.filter((secret) => secret.length > 0).reduce((text, secret) => text.split(secret).join('[redacted]'), line);

/** The line a probe's result prints as. */
export const probeLine = (result: ProbeResult, secrets: readonly string[]): string =>
  redacted(`${result.outcome.toUpperCase().padEnd(4)}  ${result.name.padEnd(13)}  ${result.detail}`, secrets);
