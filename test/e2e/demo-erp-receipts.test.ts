// The demo ERP's receipt check on its own, over real HTTP: receipts signed by the gateway's local
// signer, the gateway's JWK Set served on loopback (counting how often the ERP fetches it), and each
// check a system makes, refused with the code that names it. Its threshold is checked against the
// demo policy's decision, rehearsed by the gateway's own reading of the demo organization.
import { createHash, generateKeyPairSync, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { purchaseOrderTool, type ReceiptGateway, receiptThreshold } from '../../examples/erp/receipt-check.js';
import { type DemoErp, demoErpApiKey, startDemoErp } from '../../examples/erp/server.js';
import { type Listening, listen } from '../../infra/local/net.js';
import { KeyReceiptSigner } from '../../shared/adapters/key-receipt-signer.js';
import { readCaseFile } from '../../shared/policy/case-file.js';
import type { JwkSet } from '../../shared/receipts/signer.js';
import { rehearseCase } from '../../shared/use-cases/rehearse-case.js';
import { bodySha256, orderToErp, tamperedReceipt } from '../support/erp-receipts.js';
import { verifies } from '../support/requirements.js';
import { lines, loadDemo } from '../unit/policy/policy-fixtures.js';

const newSigner = () => new KeyReceiptSigner(generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey);

/** The gateway's published keys, as `/.well-known/jwks.json` serves them, and how often they were asked for. */
interface KeyServer extends Listening<Server> {
  readonly url: string;
  keys: JwkSet;
  fetches: number;
}

const startKeyServer = async (keys: JwkSet): Promise<KeyServer> => {
  const state = { keys, fetches: 0 };
  const server = createServer((request, response) => {
    state.fetches += 1;
    if (request.url === '/.well-known/jwks.json') {
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(state.keys));
    } else response.writeHead(404).end();
  });
  const listening = await listen(server, '127.0.0.1', 0);
  return Object.assign(state, listening, { url: `http://127.0.0.1:${listening.port}` });
};

let signer: KeyReceiptSigner;
let keyServer: KeyServer;
let gateway: ReceiptGateway | null;
let erp: DemoErp;

beforeAll(async () => {
  signer = newSigner();
  keyServer = await startKeyServer(await signer.publicKeys());
  erp = await startDemoErp({ receipts: { gateway: () => gateway } });
});
afterAll(async () => {
  await erp?.close();
  await keyServer?.close();
});
beforeEach(() => {
  erp.reset();
  gateway = { issuer: keyServer.url, jwksUri: `${keyServer.url}/.well-known/jwks.json` };
});

/** A receipt as the gateway signs it for an approved purchase order sent with exactly `body`. */
const receiptFor = (body: string, changes: Record<string, unknown> = {}, by = signer) => {
  const now = Math.floor(Date.now() / 1000);
  return by.sign({
    iss: keyServer.url,
    sub: 'procurement-agent',
    jti: randomUUID(),
    iat: now,
    exp: now + 300,
    tool: purchaseOrderTool,
    args_sha256: createHash('sha256').update(body).digest('hex'),
    approvals: [{ role: 'staff', by: 'finance-approver', at: new Date().toISOString() }],
    http: { method: 'POST', path: '/purchase-orders', body_sha256: bodySha256(body) },
    ...changes,
  });
};

const order = (amount: unknown) => JSON.stringify({ vendor_id: 'V-100', amount, currency: 'EUR' });

const post = (body: string, receipt?: string, path?: string) => orderToErp(erp.url, body, receipt, path);

const refusedWith = (code: string) => ({ status: 403, body: { code, message: expect.any(String) } });

describe('the demo ERP checks approval receipts', () => {
  it(
    verifies('receipts.demo-erp-check', 'refuses a large order without a receipt; below the threshold nothing changes'),
    async () => {
      for (const amount of ['1500', '1000', 1000, '1000.00', '١٥٠٠', 'a lot']) {
        expect(await post(order(amount))).toEqual(refusedWith('receipt_required'));
      }
      expect(erp.calls().every((call) => call.rawBody.length > 0)).toBe(true);
      for (const amount of ['999.99', 999, '250.00', '-5']) {
        expect((await post(order(amount))).status).toBe(201);
      }
      expect(await post(order(null))).toMatchObject({ status: 400, body: { code: 'invalid_request' } });
      // Nothing refused was placed: the orders are the four small ones.
      expect(
        (await fetch(`${erp.url}/purchase-orders/PO-1004`, { headers: { 'x-api-key': demoErpApiKey } })).status,
      ).toBe(200);
      expect(
        (await fetch(`${erp.url}/purchase-orders/PO-1005`, { headers: { 'x-api-key': demoErpApiKey } })).status,
      ).toBe(404);
    },
  );

  it(
    verifies('receipts.demo-erp-check', 'places a large order with a receipt for exactly its body, once'),
    async () => {
      const body = order('1500');
      const receipt = await receiptFor(body);
      const placed = await post(body, receipt);
      expect(placed).toMatchObject({ status: 201, body: { id: 'PO-1001', amount: '1500' } });
      expect(await post(body, receipt)).toEqual(refusedWith('receipt_reused'));
    },
  );

  it(
    verifies(
      'receipts.demo-erp-check',
      'refuses a receipt for another body, request, tool or issuer, expired or forged',
    ),
    async () => {
      const body = order('1500');
      // The same order with other bytes (a space), and another amount: the body hash no longer matches.
      expect(await post(body.replace(':', ': '), await receiptFor(body))).toEqual(refusedWith('receipt_wrong_body'));
      expect(await post(order('9500'), await receiptFor(body))).toEqual(refusedWith('receipt_wrong_body'));
      expect(await post(body, await receiptFor(body), '/purchase-orders?urgent=1')).toEqual(
        refusedWith('receipt_wrong_request'),
      );
      expect(await post(body, await receiptFor(body, { tool: 'erp.refunds.create' }))).toEqual(
        refusedWith('receipt_wrong_tool'),
      );
      expect(await post(body, await receiptFor(body, { iss: 'https://elsewhere.example' }))).toEqual(
        refusedWith('receipt_wrong_issuer'),
      );
      const past = Math.floor(Date.now() / 1000) - 600;
      expect(await post(body, await receiptFor(body, { iat: past, exp: past + 300 }))).toEqual(
        refusedWith('receipt_expired'),
      );
      // A receipt whose claims were changed after signing (here: for the tampered amount).
      const forged = tamperedReceipt(await receiptFor(body), (claims) => {
        claims.http.body_sha256 = bodySha256(order('9500'));
      });
      expect(await post(order('9500'), forged)).toEqual(refusedWith('receipt_invalid'));
      expect(await post(body, 'not-a-receipt')).toEqual(refusedWith('receipt_invalid'));
      // Signed by a key the gateway does not publish.
      expect(await post(body, await receiptFor(body, {}, newSigner()))).toEqual(refusedWith('receipt_unknown_key'));
      expect(
        (await fetch(`${erp.url}/purchase-orders/PO-1001`, { headers: { 'x-api-key': demoErpApiKey } })).status,
      ).toBe(404);
    },
  );

  it(
    verifies(
      'receipts.demo-erp-keys',
      "fetches the gateway's keys on first use, keeps them, and fetches them again for a new key",
    ),
    async () => {
      const fresh = await startKeyServer(keyServer.keys);
      const local = await startDemoErp({
        receipts: { gateway: () => ({ issuer: keyServer.url, jwksUri: `${fresh.url}/.well-known/jwks.json` }) },
      });
      try {
        const send = async (body: string, by = signer) =>
          (
            await fetch(`${local.url}/purchase-orders`, {
              method: 'POST',
              headers: { 'x-api-key': demoErpApiKey, 'approval-receipt': await receiptFor(body, {}, by) },
              body,
            })
          ).status;
        expect(fresh.fetches).toBe(0);
        expect(await send(order('1500'))).toBe(201);
        expect(await send(order('2500'))).toBe(201);
        expect(fresh.fetches).toBe(1);
        // The gateway's key changed: a receipt by the new key makes the ERP fetch the set once more.
        const rotated = newSigner();
        fresh.keys = { keys: [...(await signer.publicKeys()).keys, ...(await rotated.publicKeys()).keys] };
        expect(await send(order('3500'), rotated)).toBe(201);
        expect(fresh.fetches).toBe(2);
        expect(await send(order('4500'), rotated)).toBe(201);
        expect(fresh.fetches).toBe(2);
      } finally {
        await local.close();
        await fresh.close();
      }
    },
  );

  it(
    verifies('receipts.demo-erp-keys', "answers 503 while the gateway's keys cannot be had, and judges no receipt"),
    async () => {
      const body = order('1500');
      const receipt = await receiptFor(body);
      gateway = null;
      const waiting = await post(body, receipt);
      expect(waiting).toEqual({ status: 503, body: { code: 'receipt_keys_unavailable', message: expect.any(String) } });
      gateway = { issuer: keyServer.url, jwksUri: `${keyServer.url}/.well-known/missing.json` };
      expect((await post(body, receipt)).status).toBe(503);
      gateway = { issuer: keyServer.url, jwksUri: `${keyServer.url}/.well-known/jwks.json` };
      expect((await post(body, receipt)).status).toBe(201);
    },
  );

  it(
    verifies(
      'receipts.demo-erp-threshold',
      "the ERP's threshold is the amount from which the demo policy holds an order",
    ),
    async () => {
      const snapshot = await loadDemo();
      const decide = (amount: string) => {
        const file = readCaseFile(
          lines(
            '- name: an order',
            '  agent: procurement-agent',
            `  tool: ${purchaseOrderTool}`,
            `  arguments: { vendor_id: V-100, amount: "${amount}", currency: EUR }`,
            '  expect: { decision: run }',
          ),
        );
        const [found] = file.ok ? file.cases : [];
        if (found === undefined) throw new Error('the case did not read');
        return rehearseCase({ snapshot, configFile: 'gateway.config.yaml', undiscovered: new Map() }, found).got
          ?.decision;
      };
      expect(decide(`${receiptThreshold}`)).toBe('hold');
      expect(decide(`${receiptThreshold - 0.01}`)).toBe('run');
    },
  );
});
