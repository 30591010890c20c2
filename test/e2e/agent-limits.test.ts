// Per-agent limits end to end, in one process: the local runtime in front of a loopback system
// whose /wait answers only when the test releases it. One agent floods (too many requests at once,
// too many too fast, too many held calls) and is refused with the limit named, while another
// agent's calls go through; a decision frees a held call's place.
import { once } from 'node:events';
import { writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Listening, listen } from '../../infra/local/net.js';
import { LocalOptions } from '../../infra/local/options.js';
import { type LocalRuntime, startLocalRuntime } from '../../infra/local/runtime.js';
import { ResultObject } from '../../shared/result.js';
import { decide } from '../../shared/use-cases/approver-decisions.js';
import { mcpHeaders, modernRequest, rawRequest } from '../support/http.js';
import { connectAgent } from '../support/mcp-client.js';
import { verifies } from '../support/requirements.js';
import { temporaryFolder } from '../support/runtime-process.js';

/** A system whose /wait requests stay open until released; every arrival is an event. */
class HeldOpenSystem {
  private readonly waiting: ServerResponse[] = [];
  readonly arrivals = new EventTarget();
  calls = 0;
  server: Listening<ReturnType<typeof createServer>> | null = null;

  async start(): Promise<string> {
    this.server = await listen(
      createServer((request: IncomingMessage, response: ServerResponse) => {
        this.calls += 1;
        request.resume();
        if (request.url?.startsWith('/wait') === true) {
          this.waiting.push(response);
          this.arrivals.dispatchEvent(new Event('arrival'));
          return;
        }
        response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
      }),
      '127.0.0.1',
      0,
    );
    return `http://127.0.0.1:${this.server.port}`;
  }

  /** Resolves once `count` requests are held open. */
  async held(count: number): Promise<void> {
    while (this.waiting.length < count) await once(this.arrivals, 'arrival');
  }

  release(): void {
    for (const response of this.waiting.splice(0)) {
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"waited":true}');
    }
  }

  async close(): Promise<void> {
    this.release();
    await this.server?.close();
  }
}

const tokens = { flood: 'flood-agent-token', quiet: 'quiet-agent-token', paced: 'paced-agent-token' } as const;

const config = `settings:
  approval_time: 1h
  # Every held call here is the same call: each must take a place of its own.
  join_pending_calls: false
  limits:
    concurrent_requests: 2
    requests_per_second: 1000
    burst: 1000
    pending_calls: 2
    groups:
      # A group grants more; an agent's own setting wins over its groups.
      wide: { pending_calls: 3 }
    agents:
      # Refilled one request per 1000 s: within a test, exactly its burst gets through.
      paced-agent: { requests_per_second: 0.001, burst: 3 }
      quiet-agent: { concurrent_requests: 8 }
systems:
  - key: lab
    base_url: \${env:LAB_URL}
    timeout: 60s
    operations:
      - id: wait
        method: GET
        path: /wait
        description: Answers when the test releases it.
      - id: ping
        method: GET
        path: /ping
        description: Answers at once.
      - id: order
        method: POST
        path: /orders
        description: Held for approval.
agents:
  - { id: flood-agent, token: ${tokens.flood}, groups: [lab] }
  - { id: quiet-agent, token: ${tokens.quiet}, groups: [lab, wide] }
  - { id: paced-agent, token: ${tokens.paced}, groups: [lab] }
approvers:
  - { id: lab-approver, password: lab-approver-password, groups: [labstaff] }
policies:
  - lab.cedar
`;

const policies = `@id("lab-reads")
permit (principal in Group::"lab", action in [Action::"lab.wait", Action::"lab.ping"], resource);

@id("lab-orders")
@approval("staff")
@approvers("labstaff")
permit (principal in Group::"lab", action == Action::"lab.order", resource);
`;

let system: HeldOpenSystem;
let folder: Awaited<ReturnType<typeof temporaryFolder>>;
let runtime: LocalRuntime;
let flood: Client;
let quiet: Client;

beforeAll(async () => {
  system = new HeldOpenSystem();
  const labUrl = await system.start();
  folder = await temporaryFolder('gateway-limits-');
  await writeFile(join(folder.path, 'gateway.config.yaml'), config);
  await writeFile(join(folder.path, 'lab.cedar'), policies);
  runtime = await startLocalRuntime(
    LocalOptions.parse({
      port: '0',
      grpcPort: '0',
      memory: true,
      demoErp: false,
      config: join(folder.path, 'gateway.config.yaml'),
    }),
    { variables: { LAB_URL: labUrl }, logLevel: 'ERROR' },
  );
  flood = await connectAgent(runtime.mcpUrl, tokens.flood);
  quiet = await connectAgent(runtime.mcpUrl, tokens.quiet);
});
afterAll(async () => {
  await flood?.close();
  await quiet?.close();
  await runtime?.stop();
  await system?.close();
  await folder?.remove();
});

const call = async (client: Client, name: string) => {
  const answer = await client.callTool({ name, arguments: {} });
  return { answer, result: ResultObject.parse(answer.structuredContent) };
};

describe('per-agent limits', () => {
  it(
    verifies(
      ['limits.concurrency', 'limits.refusal-result', 'limits.one-agent-cannot-starve'],
      'a flood of slow calls holds only its own places; another agent still runs',
    ),
    async () => {
      const callsBefore = system.calls;
      const slow = [call(flood, 'lab.wait'), call(flood, 'lab.wait')];
      await system.held(2);
      // Two of flood-agent's requests are in progress: every further one is refused at once.
      const refused = await Promise.all(Array.from({ length: 10 }, () => call(flood, 'lab.wait')));
      for (const { answer, result } of refused) {
        expect(result).toMatchObject({ status: 'denied', code: 'concurrency_limited', execution_id: null });
        expect(result.message).toMatch(/2 requests in progress at once/);
        expect(answer.isError).toBe(true);
      }
      expect(system.calls).toBe(callsBefore + 2);
      // Another agent is not affected.
      expect((await call(quiet, 'lab.ping')).result.status).toBe('succeeded');
      system.release();
      for (const { result } of await Promise.all(slow)) expect(result.status).toBe('succeeded');
      // Places are given back when requests answer.
      expect((await call(flood, 'lab.ping')).result.status).toBe('succeeded');
    },
  );

  it(
    verifies(
      ['limits.rate', 'limits.protocol-429'],
      'past its burst an agent is refused until its bucket refills, tools/call as a result, other requests as 429',
    ),
    async () => {
      const post = (method: string, params: Record<string, unknown> = {}) => {
        const request = modernRequest(method, params);
        return rawRequest(runtime.mcpUrl, { headers: mcpHeaders(tokens.paced, request.headers), body: request.body });
      };
      for (let index = 0; index < 3; index += 1) {
        const answer = await post('tools/call', { name: 'lab.ping', arguments: {} });
        expect(answer.status).toBe(200);
        expect(JSON.stringify(answer.json())).toContain('"status":"succeeded"');
      }
      const refusedCall = await post('tools/call', { name: 'lab.ping', arguments: {} });
      expect(refusedCall.status).toBe(200);
      const body = refusedCall.json() as { result: { structuredContent: unknown; isError: boolean } };
      expect(ResultObject.parse(body.result.structuredContent)).toMatchObject({
        status: 'denied',
        code: 'rate_limited',
        execution_id: null,
      });
      expect(ResultObject.parse(body.result.structuredContent).message).toMatch(
        /0\.001 requests per second \(bursts of 3\)/,
      );
      expect(body.result.isError).toBe(true);

      const refusedList = await post('tools/list');
      expect(refusedList.status).toBe(429);
      expect(Number(refusedList.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(refusedList.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 } });
      expect(JSON.stringify(refusedList.json())).toMatch(/0\.001 requests per second/);
      // The paced agent's refusals left nothing in the store.
      const recorded = await runtime.store.listByAgent('paced-agent');
      expect(recorded.items).toHaveLength(3);
      // Another agent's bucket is its own.
      expect((await call(quiet, 'lab.ping')).result.status).toBe('succeeded');
    },
  );

  it(
    verifies(
      ['limits.pending-calls', 'limits.refusal-result'],
      'a call that would be held past pending_calls is denied and recorded; a decision frees a place',
    ),
    async () => {
      const held = [await call(flood, 'lab.order'), await call(flood, 'lab.order')];
      for (const { result } of held) expect(result.status).toBe('pending_approval');
      const { answer, result } = await call(flood, 'lab.order');
      expect(result).toMatchObject({ status: 'denied', code: 'too_many_pending' });
      expect(result.message).toMatch(/2 calls waiting for approval/);
      expect(answer.isError).toBe(true);
      // Recorded like any refusal, so the agent can look it up.
      const recorded = await runtime.store.getOwned({
        execution_id: result.execution_id ?? '',
        agent_id: 'flood-agent',
      });
      expect(recorded).toMatchObject({ status: 'denied', code: 'too_many_pending', expires_at: null });
      // Another agent's places are its own (and its group allows it three).
      for (let index = 0; index < 3; index += 1) {
        expect((await call(quiet, 'lab.order')).result.status).toBe('pending_approval');
      }
      expect((await call(quiet, 'lab.order')).result.code).toBe('too_many_pending');

      const first = await runtime.store.getOwned({
        execution_id: held[0]?.result.execution_id ?? '',
        agent_id: 'flood-agent',
      });
      const decision = await decide(
        runtime.approvals,
        { id: 'lab-approver', name: null, groups: ['labstaff'] },
        { execution_id: first?.execution_id ?? '', outcome: 'reject', arguments_hash: first?.arguments_hash ?? '' },
      );
      expect(decision.kind).toBe('decided');
      expect((await call(flood, 'lab.order')).result.status).toBe('pending_approval');
      expect((await call(flood, 'lab.order')).result.code).toBe('too_many_pending');
    },
  );
});
