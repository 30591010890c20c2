// The demo ERP on its own: real HTTP, its own data, a call counter per request id, and the fault
// controls later tests use to see how the gateway copes.
import { request } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type DemoErp, demoErpApiKey, startDemoErp } from '../../examples/erp/server.js';
import { verifies } from '../support/requirements.js';

let erp: DemoErp;
beforeAll(async () => {
  erp = await startDemoErp();
});
afterAll(async () => {
  await erp.close();
});
beforeEach(() => {
  erp.reset();
});

const headers = (requestId: string) => ({
  'content-type': 'application/json',
  'x-api-key': demoErpApiKey,
  'x-request-id': requestId,
});

const createOrder = (requestId: string, signal?: AbortSignal) =>
  fetch(`${erp.url}/purchase-orders`, {
    method: 'POST',
    headers: headers(requestId),
    body: JSON.stringify({ vendor_id: 'V-100', amount: '250.00', currency: 'EUR' }),
    redirect: 'manual',
    ...(signal === undefined ? {} : { signal }),
  });

const arm = (fault: unknown, route = '/purchase-orders') =>
  fetch(`${erp.url}/_control/faults`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ method: 'POST', route, fault }),
  });

describe('the demo ERP', () => {
  it(verifies('demo.erp', 'serves its operations with its own data, for callers holding its API key'), async () => {
    const refused = await fetch(`${erp.url}/vendors/V-100`);
    expect(refused.status).toBe(401);
    const created = await createOrder('req-1');
    expect(created.status).toBe(201);
    const order = await created.json();
    expect(order).toMatchObject({ id: 'PO-1001', vendor_id: 'V-100', amount: '250.00', status: 'placed' });
    const read = await fetch(`${erp.url}/purchase-orders/PO-1001`, { headers: headers('req-2') });
    expect(await read.json()).toEqual(order);
    const vendor = await (await fetch(`${erp.url}/vendors/V-100`, { headers: headers('req-3') })).json();
    expect(vendor).toMatchObject({
      api_key: expect.any(String),
      passenger_name: 'Layla Haddad',
      boarding_pass: expect.any(String),
    });
    const cancelled = await fetch(`${erp.url}/purchase-orders/PO-1001/cancel`, {
      method: 'POST',
      headers: headers('req-4'),
      body: JSON.stringify({ reason: 'duplicate' }),
    });
    expect((await cancelled.json()).status).toBe('cancelled');
    const again = await fetch(`${erp.url}/purchase-orders/PO-1001/cancel`, {
      method: 'POST',
      headers: headers('req-5'),
      body: JSON.stringify({ reason: 'duplicate' }),
    });
    expect(again.status).toBe(409);
    expect(await again.json()).toMatchObject({ code: 'already_cancelled' });
  });

  it(verifies('demo.erp', 'counts calls per request id, over HTTP and in process'), async () => {
    await createOrder('counted');
    await createOrder('counted');
    await createOrder('other');
    expect(erp.callsFor('counted')).toBe(2);
    const answer = await (await fetch(`${erp.url}/_control/calls?request_id=counted`)).json();
    expect(answer.count).toBe(2);
    expect(answer.calls[0]).toMatchObject({ method: 'POST', route: '/purchase-orders', requestId: 'counted' });
  });

  it(verifies('demo.erp', 'answers an armed 4xx with an error code, once'), async () => {
    expect(
      (
        await arm({
          kind: 'status',
          status: 409,
          body: { code: 'duplicate_order', message: 'Order exists: see PO-77' },
        })
      ).status,
    ).toBe(204);
    const refused = await createOrder('r');
    expect(refused.status).toBe(409);
    expect(await refused.json()).toEqual({ code: 'duplicate_order', message: 'Order exists: see PO-77' });
    expect((await createOrder('r')).status).toBe(201);
  });

  it(verifies('demo.erp', 'answers an armed 5xx carrying secrets in its body'), async () => {
    erp.addFault({
      method: 'POST',
      route: '/purchase-orders',
      fault: { kind: 'status', status: 503, body: { error: 'db password=hunter2' } },
    });
    const failed = await createOrder('s');
    expect(failed.status).toBe(503);
    expect(await failed.text()).toContain('hunter2');
  });

  it(verifies('demo.erp', 'can apply a change and then hang, or hang without applying'), async () => {
    erp.addFault({ method: 'POST', route: '/purchase-orders', fault: { kind: 'apply_then_hang' } });
    await expect(createOrder('h', AbortSignal.timeout(300))).rejects.toThrow();
    const applied = await fetch(`${erp.url}/purchase-orders/PO-1001`, { headers: headers('h2') });
    expect(applied.status).toBe(200);
    erp.addFault({ method: 'POST', route: '/purchase-orders', fault: { kind: 'hang' } });
    await expect(createOrder('h3', AbortSignal.timeout(300))).rejects.toThrow();
    expect((await fetch(`${erp.url}/purchase-orders/PO-1002`, { headers: headers('h4') })).status).toBe(404);
  });

  it(verifies('demo.erp', 'can reset the connection mid-body after applying the change'), async () => {
    erp.addFault({ method: 'POST', route: '/purchase-orders', fault: { kind: 'reset' } });
    const response = await createOrder('x');
    expect(response.status).toBe(201);
    await expect(response.text()).rejects.toThrow();
    expect(erp.callsFor('x')).toBe(1);
  });

  it(verifies('demo.erp', 'can redirect, answer garbage, or drip bytes slowly'), async () => {
    erp.addFault({ method: 'POST', route: '/purchase-orders', fault: { kind: 'redirect', status: 307 } });
    const redirected = await createOrder('d1');
    expect(redirected.status).toBe(307);
    expect(redirected.headers.get('location')).toBe('/elsewhere');
    erp.addFault({ method: 'POST', route: '/purchase-orders', fault: { kind: 'garbage' } });
    expect(await (await createOrder('d2')).text()).toBe('<html>not json</html>');
    erp.addFault({ method: 'POST', route: '/purchase-orders', fault: { kind: 'drip', interval_ms: 5 } });
    const started = Date.now();
    const dripped = await (await createOrder('d3')).json();
    expect(dripped.vendor_id).toBe('V-100');
    expect(Date.now() - started).toBeGreaterThan(5 * 50);
  });

  it(verifies('demo.erp', 'can answer a body far larger than any cap'), async () => {
    erp.addFault({ method: 'POST', route: '/purchase-orders', fault: { kind: 'huge', bytes: 8 * 1024 * 1024 } });
    const size = await new Promise<number>((resolve, reject) => {
      const target = new URL(`${erp.url}/purchase-orders`);
      const req = request(
        { host: target.hostname, port: target.port, path: target.pathname, method: 'POST', headers: headers('big') },
        (res) => {
          let total = 0;
          res.on('data', (chunk: Buffer) => {
            total += chunk.length;
          });
          res.on('end', () => resolve(total));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(JSON.stringify({ vendor_id: 'V-100', amount: '1', currency: 'EUR' }));
    });
    expect(size).toBeGreaterThan(8 * 1024 * 1024);
  });
});
