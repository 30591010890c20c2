// The demo organization's ERP: a small real HTTP service with its own in-memory data, serving the
// operations of examples/erp/openapi.yaml (and the admin-described shipment lookup). It counts
// calls per x-request-id and can be told to misbehave, so tests can watch what the gateway sends
// and how it copes. The /_control/ routes are for tests and are not in the OpenAPI document.
//
// Long: a whole small service (its data, every operation of the document, the control routes) kept
// in one file so the demo reads top to bottom.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import * as z from 'zod';
import { type Listening, listen } from '../../infra/local/net.js';

/** What a fault does to the next matching request(s). */
const Fault = z.discriminatedUnion('kind', [
  /** Answer this status and JSON body (a 4xx with an error code, a 5xx with secrets in it...). */
  z.object({ kind: z.literal('status'), status: z.number().int().min(200).max(599), body: z.unknown().optional() }),
  /** Apply the change, then never answer. */
  z.object({ kind: z.literal('apply_then_hang') }),
  /** Never answer, without applying anything. */
  z.object({ kind: z.literal('hang') }),
  /** Apply the change, send the headers and half a body, then reset the connection. */
  z.object({ kind: z.literal('reset') }),
  /** Answer a redirect to another URL. */
  z.object({ kind: z.literal('redirect'), status: z.number().int().min(300).max(399).default(302) }),
  /** Apply the change, then answer a body of this many bytes. */
  z.object({
    kind: z.literal('huge'),
    bytes: z
      .number()
      .int()
      .min(1)
      .max(512 * 1024 * 1024),
  }),
  /** Apply the change, then drip the answer one byte every `interval_ms`. */
  z.object({ kind: z.literal('drip'), interval_ms: z.number().int().min(1).max(60_000) }),
  /** Answer a 200 whose body is not JSON. */
  z.object({ kind: z.literal('garbage') }),
]);
export type Fault = z.infer<typeof Fault>;

export const FaultRule = z.object({
  method: z.string().optional(),
  /** Route as in the OpenAPI document, e.g. /purchase-orders/{purchase_order_id}. */
  route: z.string().optional(),
  fault: Fault,
  /** How many matching requests it applies to. */
  times: z.number().int().min(1).default(1),
});
export type FaultRule = z.input<typeof FaultRule>;

interface PurchaseOrder {
  id: string;
  vendor_id: string;
  amount: string;
  currency: string;
  description: string;
  lines: { sku: string; quantity: number; note?: string }[];
  status: 'placed' | 'cancelled' | 'shipped';
  created_at: string;
}

const seedVendors = () =>
  new Map([
    [
      'V-100',
      {
        id: 'V-100',
        name: 'Acme Supplies',
        contact_email: 'orders@acme.example',
        passenger_name: 'Layla Haddad',
        boarding_pass: 'BP-7781-22A',
        api_key: 'acme-portal-key-51f0c2d9',
        portalPassword: 'Acme!Portal#2026',
        bank: { iban: 'DE89370400440532013000', 'client-secret': 'acme-bank-client-7c41' },
      },
    ],
    [
      'V-200',
      {
        id: 'V-200',
        name: 'مؤسسة النور للتوريد',
        contact_email: 'sales@alnoor.example',
        passenger_name: 'Omar Nasser',
        boarding_pass: 'BP-1204-09C',
        api_key: 'alnoor-portal-key-0a9e44b1',
        portalPassword: 'N00r-portal-2026',
        bank: { iban: 'SA0380000000608010167519', 'client-secret': 'alnoor-bank-client-33d2' },
      },
    ],
  ]);

const routes = [
  { method: 'POST', route: '/purchase-orders', pattern: /^\/purchase-orders$/ },
  { method: 'GET', route: '/purchase-orders/{purchase_order_id}', pattern: /^\/purchase-orders\/([^/]+)$/ },
  {
    method: 'POST',
    route: '/purchase-orders/{purchase_order_id}/cancel',
    pattern: /^\/purchase-orders\/([^/]+)\/cancel$/,
  },
  { method: 'GET', route: '/vendors/{vendor_id}', pattern: /^\/vendors\/([^/]+)$/ },
  { method: 'DELETE', route: '/vendors/{vendor_id}', pattern: /^\/vendors\/([^/]+)$/ },
  { method: 'POST', route: '/vendors/{vendor_id}/portal-access', pattern: /^\/vendors\/([^/]+)\/portal-access$/ },
  { method: 'POST', route: '/refunds', pattern: /^\/refunds$/ },
  { method: 'GET', route: '/shipments/{tracking_number}', pattern: /^\/shipments\/([^/]+)$/ },
] as const;

export interface ReceivedCall {
  readonly method: string;
  readonly route: string;
  readonly path: string;
  readonly requestId: string | null;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: unknown;
}

export interface DemoErp extends Listening<import('node:http').Server> {
  readonly url: string;
  /** Calls received, oldest first (control calls excluded). */
  calls(): readonly ReceivedCall[];
  callsFor(requestId: string): number;
  addFault(rule: FaultRule): void;
  reset(): void;
}

const readJson = async (request: IncomingMessage): Promise<unknown> => {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    size += buffer.length;
    if (size > 1024 * 1024) throw new Error('body too large');
    chunks.push(buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  return text.length === 0 ? undefined : JSON.parse(text);
};

const send = (response: ServerResponse, status: number, body: unknown) => {
  const text = body === undefined ? '' : JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  response.end(text);
};

const CreateOrder = z.object({
  vendor_id: z.string(),
  amount: z.union([z.string(), z.number()]),
  currency: z.string(),
  description: z.string().optional(),
  lines: z.array(z.object({ sku: z.string(), quantity: z.number(), note: z.string().optional() })).optional(),
});
const Refund = z.object({
  order_reference: z.string(),
  amount: z.union([z.string(), z.number()]),
  currency: z.string(),
  reason: z.string().optional(),
});

/** The key the ERP expects in x-api-key; the gateway holds it, agents never see it. */
export const demoErpApiKey = 'demo-erp-key-7f3a';

export const startDemoErp = async (
  options: { host?: string; port?: number; apiKey?: string } = {},
): Promise<DemoErp> => {
  const apiKey = options.apiKey ?? demoErpApiKey;
  let vendors = seedVendors();
  let orders = new Map<string, PurchaseOrder>();
  let nextOrder = 1001;
  let received: ReceivedCall[] = [];
  let faults: z.output<typeof FaultRule>[] = [];

  /** Runs an operation's effect and returns its answer; faults may replace or follow it. */
  const operate = (route: string, params: string[], body: unknown): { status: number; body: unknown } => {
    switch (route) {
      case '/purchase-orders': {
        const input = CreateOrder.safeParse(body);
        if (!input.success)
          return { status: 400, body: { code: 'invalid_request', message: 'The order is malformed.' } };
        if (!vendors.has(input.data.vendor_id)) {
          return {
            status: 422,
            body: { code: 'unknown_vendor', message: `Vendor ${input.data.vendor_id} does not exist.` },
          };
        }
        const order: PurchaseOrder = {
          id: `PO-${nextOrder++}`,
          vendor_id: input.data.vendor_id,
          amount: String(input.data.amount),
          currency: input.data.currency,
          description: input.data.description ?? '',
          lines: input.data.lines ?? [],
          status: 'placed',
          created_at: new Date().toISOString(),
        };
        orders.set(order.id, order);
        return { status: 201, body: order };
      }
      case '/purchase-orders/{purchase_order_id}': {
        const order = orders.get(params[0] ?? '');
        return order === undefined
          ? { status: 404, body: { code: 'not_found', message: 'No such purchase order.' } }
          : { status: 200, body: order };
      }
      case '/purchase-orders/{purchase_order_id}/cancel': {
        const order = orders.get(params[0] ?? '');
        if (order === undefined)
          return { status: 404, body: { code: 'not_found', message: 'No such purchase order.' } };
        if (order.status !== 'placed') {
          return { status: 409, body: { code: 'already_cancelled', message: `Order ${order.id} is ${order.status}.` } };
        }
        order.status = 'cancelled';
        return { status: 200, body: order };
      }
      case '/vendors/{vendor_id}': {
        const vendor = vendors.get(params[0] ?? '');
        return vendor === undefined
          ? { status: 404, body: { code: 'not_found', message: 'No such vendor.' } }
          : { status: 200, body: vendor };
      }
      case '/vendors/{vendor_id}/portal-access': {
        const vendor = vendors.get(params[0] ?? '');
        const input = z.object({ contact_email: z.string(), initial_password: z.string() }).safeParse(body);
        if (vendor === undefined) return { status: 404, body: { code: 'not_found', message: 'No such vendor.' } };
        if (!input.success)
          return { status: 400, body: { code: 'invalid_request', message: 'The request is malformed.' } };
        return {
          status: 201,
          body: {
            access_id: `PA-${randomUUID().slice(0, 8)}`,
            login: input.data.contact_email,
            session_token: randomUUID(),
          },
        };
      }
      case '/refunds': {
        const input = Refund.safeParse(body);
        if (!input.success)
          return { status: 400, body: { code: 'invalid_request', message: 'The refund is malformed.' } };
        return {
          status: 201,
          body: {
            refund_id: `RF-${randomUUID().slice(0, 8)}`,
            order_reference: input.data.order_reference,
            amount: String(input.data.amount),
            currency: input.data.currency,
            status: 'recorded',
          },
        };
      }
      case '/shipments/{tracking_number}':
        return {
          status: 200,
          body: { tracking_number: params[0] ?? '', carrier: 'DHL', status: 'in_transit', eta: '2026-12-03' },
        };
      default:
        return { status: 404, body: { code: 'not_found', message: 'No such route.' } };
    }
  };

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const url = new URL(request.url ?? '/', 'http://erp.local');
    const method = (request.method ?? 'GET').toUpperCase();
    if (url.pathname.startsWith('/_control/')) {
      if (method === 'POST' && url.pathname === '/_control/faults') {
        faults.push(FaultRule.parse(await readJson(request)));
        return send(response, 204, undefined);
      }
      if (method === 'GET' && url.pathname === '/_control/calls') {
        const requestId = url.searchParams.get('request_id');
        const list = requestId === null ? received : received.filter((call) => call.requestId === requestId);
        return send(response, 200, { count: list.length, calls: list });
      }
      if (method === 'POST' && url.pathname === '/_control/reset') {
        reset();
        return send(response, 204, undefined);
      }
      return send(response, 404, { code: 'not_found', message: 'No such control route.' });
    }
    if (url.pathname === '/elsewhere')
      return send(response, 200, { note: 'a redirect target the gateway must not follow' });

    if (request.headers['x-api-key'] !== apiKey) {
      return send(response, 401, { code: 'unauthorized', message: 'Missing or wrong API key.' });
    }
    const match = routes
      .map((candidate) => ({ candidate, found: candidate.pattern.exec(url.pathname) }))
      .find(({ candidate, found }) => found !== null && candidate.method === method);
    if (match === undefined) return send(response, 404, { code: 'not_found', message: 'No such route.' });
    let body: unknown;
    try {
      body = await readJson(request);
    } catch {
      return send(response, 400, { code: 'invalid_json', message: 'The body is not JSON.' });
    }
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(request.headers)) {
      if (typeof value === 'string') headers[name] = value;
    }
    const requestId = headers['x-request-id'] ?? null;
    const route = match.candidate.route;
    received.push({ method, route, path: url.pathname, requestId, headers, body });
    const params = (match.found ?? []).slice(1).map((part) => decodeURIComponent(part));

    const ruleIndex = faults.findIndex(
      (rule) =>
        (rule.method === undefined || rule.method === method) && (rule.route === undefined || rule.route === route),
    );
    const rule = ruleIndex === -1 ? undefined : faults[ruleIndex];
    if (rule !== undefined) {
      rule.times -= 1;
      if (rule.times <= 0) faults.splice(ruleIndex, 1);
    }
    const fault = rule?.fault;
    if (fault === undefined) {
      const answer = operate(route, params, body);
      return send(response, answer.status, answer.body);
    }
    switch (fault.kind) {
      case 'status':
        return send(response, fault.status, fault.body);
      case 'hang':
        return;
      case 'apply_then_hang':
        operate(route, params, body);
        return;
      case 'redirect':
        response.writeHead(fault.status, { location: '/elsewhere' }).end();
        return;
      case 'garbage':
        response.writeHead(200, { 'content-type': 'application/json' }).end('<html>not json</html>');
        return;
      case 'reset': {
        const answer = operate(route, params, body);
        const text = JSON.stringify(answer.body);
        response.writeHead(answer.status, { 'content-type': 'application/json', 'content-length': text.length * 2 });
        response.write(text.slice(0, Math.ceil(text.length / 2)));
        setTimeout(() => response.socket?.resetAndDestroy(), 20);
        return;
      }
      case 'huge': {
        operate(route, params, body);
        response.writeHead(200, { 'content-type': 'application/json' });
        const chunk = Buffer.alloc(64 * 1024, 'a');
        let left = fault.bytes;
        response.write('{"padding":"');
        const pump = () => {
          while (left > 0) {
            const piece = left >= chunk.length ? chunk : chunk.subarray(0, left);
            left -= piece.length;
            if (!response.write(piece)) {
              response.once('drain', pump);
              return;
            }
          }
          response.end('"}');
        };
        response.on('close', () => {
          left = 0;
        });
        pump();
        return;
      }
      case 'drip': {
        const answer = operate(route, params, body);
        const text = Buffer.from(JSON.stringify(answer.body));
        response.writeHead(answer.status, { 'content-type': 'application/json', 'content-length': text.length });
        let index = 0;
        const timer = setInterval(() => {
          if (index >= text.length || response.destroyed) {
            clearInterval(timer);
            response.end();
            return;
          }
          response.write(text.subarray(index, index + 1));
          index += 1;
        }, fault.interval_ms);
        response.on('close', () => clearInterval(timer));
        return;
      }
    }
  };

  const reset = () => {
    vendors = seedVendors();
    orders = new Map();
    nextOrder = 1001;
    received = [];
    faults = [];
  };

  const server = createServer((request, response) => {
    handle(request, response).catch(() => {
      if (!response.headersSent) send(response, 500, { code: 'internal', message: 'The ERP failed.' });
    });
  });
  const listening = await listen(server, options.host ?? '127.0.0.1', options.port ?? 0);
  return {
    ...listening,
    url: `http://127.0.0.1:${listening.port}`,
    calls: () => received,
    callsFor: (requestId) => received.filter((call) => call.requestId === requestId).length,
    addFault: (rule) => faults.push(FaultRule.parse(rule)),
    reset,
  };
};
