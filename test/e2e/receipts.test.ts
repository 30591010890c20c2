// Approval receipts end to end, on `npm start`'s entry point as a real process with the demo ERP it
// runs: a held purchase order approved in the console reaches the ERP with a receipt that verifies
// against the gateway's published keys and binds the exact body the ERP received (read from the
// ERP's own record), the agent reads the same receipt, the command-line check accepts it, and what
// an attacker holding the ERP's key sends straight to the ERP is refused.
import type { Client } from '@modelcontextprotocol/client';
import { JwtVerifier } from 'aws-jwt-verify/jwt-verifier';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { demoErpApiKey } from '../../examples/erp/server.js';
import { projectPath } from '../../infra/paths.js';
import { ResultObject } from '../../shared/result.js';
import { approvers, eventually } from '../support/approval-org.js';
import { type ConsoleSession, signedIn } from '../support/console.js';
import { bodySha256, orderToErp, tamperedReceipt } from '../support/erp-receipts.js';
import { connectAgent } from '../support/mcp-client.js';
import { verifies } from '../support/requirements.js';
import { demoTokens, type RuntimeProcess, startRuntimeProcess } from '../support/runtime-process.js';
import { runProcess } from '../support/spawn.js';

let runtime: RuntimeProcess;
let erpUrl: string;
let client: Client;
let finance: ConsoleSession;

beforeAll(async () => {
  runtime = await startRuntimeProcess(['--memory']);
  erpUrl = /Demo ERP\s+(\S+)/.exec(runtime.output())?.[1] ?? '';
  client = await connectAgent(runtime.mcpUrl, demoTokens.procurement);
  finance = await signedIn(runtime.baseUrl, approvers.finance.id, approvers.finance.password);
});
afterAll(async () => {
  await client?.close();
  await runtime?.stop();
});

const ErpCalls = z.object({
  calls: z.array(
    z.object({ method: z.string(), route: z.string(), headers: z.record(z.string(), z.string()), rawBody: z.string() }),
  ),
});

/** The ERP's own record of the purchase orders it received: the receipt it was sent with, the exact body. */
const ordersReceived = async () => {
  const { calls } = ErpCalls.parse(await (await fetch(`${erpUrl}/_control/calls`)).json());
  return calls
    .filter((call) => call.method === 'POST' && call.route === '/purchase-orders')
    .map((call) => ({ receipt: call.headers['approval-receipt'] ?? null, rawBody: call.rawBody }));
};

const straightToErp = (body: string, receipt?: string) => orderToErp(erpUrl, body, receipt);

const statusOf = async (executionId: string) => {
  const answer = await client.callTool({ name: 'get_execution_status', arguments: { execution_id: executionId } });
  return { meta: answer._meta, result: ResultObject.parse(answer.structuredContent) };
};

/** What the approved order was sent with, kept for the refusals after it. */
let approved: { receipt: string; rawBody: string; executionId: string } | null = null;

describe('approval receipts end to end', () => {
  it(
    verifies(
      'receipts.end-to-end',
      'an approved order reaches the ERP with a receipt for its exact body, which the agent and receipts:verify see',
    ),
    async () => {
      const order = { vendor_id: 'V-100', amount: '1500', currency: 'EUR', description: 'Office chairs' };
      const held = ResultObject.parse(
        (await client.callTool({ name: 'erp.purchase_orders.create', arguments: order })).structuredContent,
      );
      expect(held.status).toBe('pending_approval');
      const executionId = held.execution_id ?? '';
      const form = await finance.decisionForm(executionId);
      expect((await finance.decide(executionId, form, 'approve')).status).toBe(303);
      const done = await eventually(
        () => statusOf(executionId),
        ({ result }) => !['pending_approval', 'approved'].includes(result.status),
      );
      expect(done.result).toMatchObject({ status: 'succeeded', result: { amount: '1500', status: 'placed' } });

      const [sent, ...more] = await ordersReceived();
      expect(more).toEqual([]);
      const receipt = sent?.receipt ?? '';
      const rawBody = sent?.rawBody ?? '';
      const jwksUri = `${runtime.baseUrl}/.well-known/jwks.json`;
      const verifier = JwtVerifier.create({ issuer: runtime.baseUrl, audience: null, jwksUri });
      verifier.cacheJwks(await (await fetch(jwksUri)).json());
      const claims = await verifier.verify(receipt);
      expect(claims).toMatchObject({
        iss: runtime.baseUrl,
        sub: 'procurement-agent',
        jti: executionId,
        tool: 'erp.purchase_orders.create',
        args_sha256: form.argumentsHash,
        approvals: [{ role: 'staff', by: approvers.finance.id, at: expect.any(String) }],
        http: { method: 'POST', path: '/purchase-orders', body_sha256: bodySha256(rawBody) },
      });
      expect(Number(claims.exp) - Number(claims.iat)).toBe(300);
      expect(JSON.parse(rawBody)).toMatchObject(order);
      expect(done.meta?.['approval-gateway/receipt']).toBe(receipt);
      approved = { receipt, rawBody, executionId };

      const checked = await runProcess(
        'npm',
        ['run', '--silent', 'receipts:verify', '--', receipt, '--issuer', runtime.baseUrl],
        {
          cwd: projectPath(),
          env: process.env,
        },
      );
      expect(checked.code, checked.output).toBe(0);
      expect(checked.stdout).toContain(executionId);
    },
  );

  it(
    verifies(
      'receipts.end-to-end-refusals',
      'straight to the ERP with its key: no receipt, a tampered body, a tampered or replayed receipt are refused',
    ),
    async () => {
      const { receipt, rawBody } = approved ?? { receipt: '', rawBody: '' };
      expect(receipt).not.toBe('');
      const tamperedBody = rawBody.replace('"1500"', '"9500"');
      expect(tamperedBody).not.toBe(rawBody);
      expect(await straightToErp(tamperedBody)).toMatchObject({ status: 403, body: { code: 'receipt_required' } });
      expect(await straightToErp(tamperedBody, receipt)).toMatchObject({
        status: 403,
        body: { code: 'receipt_wrong_body' },
      });
      // The receipt's claims changed to name the tampered body, its signature kept.
      const forged = tamperedReceipt(receipt, (claims) => {
        claims.http.body_sha256 = bodySha256(tamperedBody);
      });
      expect(await straightToErp(tamperedBody, forged)).toMatchObject({
        status: 403,
        body: { code: 'receipt_invalid' },
      });
      // The very request the gateway sent, replayed: a receipt places one order.
      expect(await straightToErp(rawBody, receipt)).toMatchObject({ status: 403, body: { code: 'receipt_reused' } });
      const second = await fetch(`${erpUrl}/purchase-orders/PO-1002`, { headers: { 'x-api-key': demoErpApiKey } });
      expect(second.status).toBe(404);
      // Below the threshold nothing changed: the gateway runs a small order at once, without a receipt.
      const small = ResultObject.parse(
        (
          await client.callTool({
            name: 'erp.purchase_orders.create',
            arguments: { vendor_id: 'V-100', amount: '250', currency: 'EUR' },
          })
        ).structuredContent,
      );
      expect(small).toMatchObject({ status: 'succeeded', result: { id: 'PO-1002' } });
      expect((await ordersReceived()).at(-1)?.receipt).toBeNull();
    },
  );
});
