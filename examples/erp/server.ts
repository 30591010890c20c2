// The demo organization's ERP: a small real HTTP service with its own in-memory data, serving the
// operations of examples/erp/openapi.yaml (and the admin-described shipment lookup). It counts
// calls per x-request-id and can be told to misbehave, so tests can watch what the gateway sends
// and how it copes. The /_control/ routes are for tests and are not in the OpenAPI document.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import * as z from 'zod';
import { type Listening, listen } from '../../infra/local/net.js';
import { belowThreshold, type ReceiptCheck, type ReceiptCheckOptions, receiptCheck } from './receipt-check.js';

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
  /** The body exactly as received (UTF-8), what a receipt's body hash binds. */
  readonly rawBody: string;
}

export interface DemoErp extends Listening<import('node:http').Server> {
  readonly url: string;
  /** Calls received, oldest first (control calls excluded). */
  calls(): readonly ReceivedCall[];
  callsFor(requestId: string): number;
  addFault(rule: FaultRule): void;
  reset(): void;
}

const readBody = async (request: IncomingMessage): Promise<Buffer> => {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    size += buffer.length;
    if (size > 1024 * 1024) throw new Error('body too large');
    chunks.push(buffer);
  }
  return Buffer.concat(chunks);
};

const parseJson = (raw: Buffer): unknown => (raw.length === 0 ? undefined : JSON.parse(raw.toString('utf8')));

const readJson = async (request: IncomingMessage): Promise<unknown> => parseJson(await readBody(request));

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

/** The ERP's data and what tests told it: everything a reset puts back. */
interface ErpState {
  vendors: ReturnType<typeof seedVendors>;
  orders: Map<string, PurchaseOrder>;
  nextOrder: number;
  received: ReceivedCall[];
  faults: z.output<typeof FaultRule>[];
}

/** What one ERP serves with: its data, its key, and its receipt check when it makes one. */
interface Erp {
  readonly state: ErpState;
  readonly apiKey: string;
  readonly receipts: ReceiptCheck | null;
}

const freshState = (): ErpState => ({
  vendors: seedVendors(),
  orders: new Map(),
  nextOrder: 1001,
  received: [],
  faults: [],
});

/** An operation's answer, before any fault replaces or follows it. */
interface Answer {
  readonly status: number;
  readonly body: unknown;
}

const notFound = (message: string): Answer => ({ status: 404, body: { code: 'not_found', message } });
const malformed = (message: string): Answer => ({ status: 400, body: { code: 'invalid_request', message } });

const placeOrder = (state: ErpState, body: unknown): Answer => {
  const input = CreateOrder.safeParse(body);
  if (!input.success) return malformed('The order is malformed.');
  if (!state.vendors.has(input.data.vendor_id)) {
    return { status: 422, body: { code: 'unknown_vendor', message: `Vendor ${input.data.vendor_id} does not exist.` } };
  }
  const order: PurchaseOrder = {
    id: `PO-${state.nextOrder++}`,
    vendor_id: input.data.vendor_id,
    amount: String(input.data.amount),
    currency: input.data.currency,
    description: input.data.description ?? '',
    lines: input.data.lines ?? [],
    status: 'placed',
    created_at: new Date().toISOString(),
  };
  state.orders.set(order.id, order);
  return { status: 201, body: order };
};

const cancelOrder = (state: ErpState, orderId: string): Answer => {
  const order = state.orders.get(orderId);
  if (order === undefined) return notFound('No such purchase order.');
  if (order.status !== 'placed') {
    return { status: 409, body: { code: 'already_cancelled', message: `Order ${order.id} is ${order.status}.` } };
  }
  order.status = 'cancelled';
  return { status: 200, body: order };
};

const grantPortalAccess = (state: ErpState, vendorId: string, body: unknown): Answer => {
  const vendor = state.vendors.get(vendorId);
  const input = z.object({ contact_email: z.string(), initial_password: z.string() }).safeParse(body);
  if (vendor === undefined) return notFound('No such vendor.');
  if (!input.success) return malformed('The request is malformed.');
  const access = { access_id: `PA-${randomUUID().slice(0, 8)}`, login: input.data.contact_email };
  return { status: 201, body: { ...access, session_token: randomUUID() } };
};

const recordRefund = (body: unknown): Answer => {
  const input = Refund.safeParse(body);
  if (!input.success) return malformed('The refund is malformed.');
  const refund = { refund_id: `RF-${randomUUID().slice(0, 8)}`, order_reference: input.data.order_reference };
  return {
    status: 201,
    body: { ...refund, amount: String(input.data.amount), currency: input.data.currency, status: 'recorded' },
  };
};

/** Runs an operation's effect and returns its answer; faults may replace or follow it. */
const operate = (state: ErpState, route: string, params: string[], body: unknown): Answer => {
  const id = params[0] ?? '';
  switch (route) {
    case '/purchase-orders':
      return placeOrder(state, body);
    case '/purchase-orders/{purchase_order_id}': {
      const order = state.orders.get(id);
      return order === undefined ? notFound('No such purchase order.') : { status: 200, body: order };
    }
    case '/purchase-orders/{purchase_order_id}/cancel':
      return cancelOrder(state, id);
    case '/vendors/{vendor_id}': {
      const vendor = state.vendors.get(id);
      return vendor === undefined ? notFound('No such vendor.') : { status: 200, body: vendor };
    }
    case '/vendors/{vendor_id}/portal-access':
      return grantPortalAccess(state, id, body);
    case '/refunds':
      return recordRefund(body);
    case '/shipments/{tracking_number}':
      return { status: 200, body: { tracking_number: id, carrier: 'DHL', status: 'in_transit', eta: '2026-12-03' } };
    default:
      return notFound('No such route.');
  }
};

/** The /_control/ routes: faults to add, the calls received, a reset. */
const control = async (erp: Erp, request: IncomingMessage, response: ServerResponse, url: URL) => {
  const { state } = erp;
  const method = (request.method ?? 'GET').toUpperCase();
  if (method === 'POST' && url.pathname === '/_control/faults') {
    state.faults.push(FaultRule.parse(await readJson(request)));
    return send(response, 204, undefined);
  }
  if (method === 'GET' && url.pathname === '/_control/calls') {
    const requestId = url.searchParams.get('request_id');
    const list = requestId === null ? state.received : state.received.filter((call) => call.requestId === requestId);
    return send(response, 200, { count: list.length, calls: list });
  }
  if (method === 'POST' && url.pathname === '/_control/reset') {
    Object.assign(state, freshState());
    erp.receipts?.reset();
    return send(response, 204, undefined);
  }
  return send(response, 404, { code: 'not_found', message: 'No such control route.' });
};

/** The first fault rule matching the call, counted down (and dropped once used up). */
const takeFault = (state: ErpState, method: string, route: string): Fault | undefined => {
  const ruleIndex = state.faults.findIndex(
    (rule) =>
      (rule.method === undefined || rule.method === method) && (rule.route === undefined || rule.route === route),
  );
  const rule = ruleIndex === -1 ? undefined : state.faults[ruleIndex];
  if (rule !== undefined) {
    rule.times -= 1;
    if (rule.times <= 0) state.faults.splice(ruleIndex, 1);
  }
  return rule?.fault;
};

/** A 200 of `bytes` bytes of padding, written as fast as the client reads. */
const sendHuge = (response: ServerResponse, bytes: number) => {
  response.writeHead(200, { 'content-type': 'application/json' });
  const chunk = Buffer.alloc(64 * 1024, 'a');
  let left = bytes;
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
};

/** The answer one byte every `intervalMs`. */
const drip = (response: ServerResponse, answer: Answer, intervalMs: number) => {
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
  }, intervalMs);
  response.on('close', () => clearInterval(timer));
};

/** Misbehaves as the fault says; `run` applies the operation (some faults apply it first). */
const misbehave = (response: ServerResponse, fault: Fault, run: () => Answer) => {
  switch (fault.kind) {
    case 'status':
      return send(response, fault.status, fault.body);
    case 'hang':
      return;
    case 'apply_then_hang':
      run();
      return;
    case 'redirect':
      response.writeHead(fault.status, { location: '/elsewhere' }).end();
      return;
    case 'garbage':
      response.writeHead(200, { 'content-type': 'application/json' }).end('<html>not json</html>');
      return;
    case 'reset': {
      const answer = run();
      const text = JSON.stringify(answer.body);
      response.writeHead(answer.status, { 'content-type': 'application/json', 'content-length': text.length * 2 });
      response.write(text.slice(0, Math.ceil(text.length / 2)));
      setTimeout(() => response.socket?.resetAndDestroy(), 20);
      return;
    }
    case 'huge':
      run();
      return sendHuge(response, fault.bytes);
    case 'drip':
      return drip(response, run(), fault.interval_ms);
  }
};

/** The request's headers that came as one value each, as the calls received keep them. */
const singleHeaders = (request: IncomingMessage): Record<string, string> => {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (typeof value === 'string') headers[name] = value;
  }
  return headers;
};

/**
 * A large purchase order without a receipt for exactly this request is refused (when the ERP
 * checks receipts); below the threshold nothing is asked.
 */
const receiptRefusal = async (erp: Erp, request: IncomingMessage, route: string, body: unknown, raw: Buffer) => {
  if (erp.receipts === null || route !== '/purchase-orders' || request.method !== 'POST') return null;
  // An order without an amount is refused as malformed whatever it carries; a large one, or one whose
  // amount cannot be read as a plain decimal, needs a receipt.
  const amount = CreateOrder.shape.amount.safeParse(
    typeof body === 'object' && body !== null && 'amount' in body ? body.amount : undefined,
  );
  if (!amount.success || belowThreshold(amount.data)) return null;
  const header = request.headers['approval-receipt'];
  return erp.receipts.check({
    method: 'POST',
    path: request.url ?? '/',
    receipt: typeof header === 'string' ? header : undefined,
    body: raw,
  });
};

const handle = async (erp: Erp, request: IncomingMessage, response: ServerResponse): Promise<void> => {
  const { state } = erp;
  const url = new URL(request.url ?? '/', 'http://erp.local');
  const method = (request.method ?? 'GET').toUpperCase();
  if (url.pathname.startsWith('/_control/')) return control(erp, request, response, url);
  if (url.pathname === '/elsewhere')
    return send(response, 200, { note: 'a redirect target the gateway must not follow' });
  if (request.headers['x-api-key'] !== erp.apiKey) {
    return send(response, 401, { code: 'unauthorized', message: 'Missing or wrong API key.' });
  }
  const match = routes
    .map((candidate) => ({ candidate, found: candidate.pattern.exec(url.pathname) }))
    .find(({ candidate, found }) => found !== null && candidate.method === method);
  if (match === undefined) return send(response, 404, { code: 'not_found', message: 'No such route.' });
  let raw: Buffer;
  let body: unknown;
  try {
    raw = await readBody(request);
    body = parseJson(raw);
  } catch {
    return send(response, 400, { code: 'invalid_json', message: 'The body is not JSON.' });
  }
  const headers = singleHeaders(request);
  const requestId = headers['x-request-id'] ?? null;
  const route = match.candidate.route;
  state.received.push({ method, route, path: url.pathname, requestId, headers, body, rawBody: raw.toString('utf8') });
  const refusal = await receiptRefusal(erp, request, route, body, raw);
  if (refusal !== null) return send(response, refusal.status, { code: refusal.code, message: refusal.message });
  const params = (match.found ?? []).slice(1).map((part) => decodeURIComponent(part));
  const run = () => operate(state, route, params, body);
  const fault = takeFault(state, method, route);
  if (fault !== undefined) return misbehave(response, fault, run);
  const answer = run();
  return send(response, answer.status, answer.body);
};

export interface DemoErpOptions {
  readonly host?: string;
  readonly port?: number;
  readonly apiKey?: string;
  /** Check approval receipts on large purchase orders against this gateway. @default no check */
  readonly receipts?: ReceiptCheckOptions;
}

export const startDemoErp = async (options: DemoErpOptions = {}): Promise<DemoErp> => {
  const erp: Erp = {
    state: freshState(),
    apiKey: options.apiKey ?? demoErpApiKey,
    receipts: options.receipts === undefined ? null : receiptCheck(options.receipts),
  };
  const { state } = erp;
  const server = createServer((request, response) => {
    handle(erp, request, response).catch(() => {
      if (!response.headersSent) send(response, 500, { code: 'internal', message: 'The ERP failed.' });
    });
  });
  const listening = await listen(server, options.host ?? '127.0.0.1', options.port ?? 0);
  const reset = () => {
    Object.assign(state, freshState());
    erp.receipts?.reset();
  };
  return {
    ...listening,
    url: `http://127.0.0.1:${listening.port}`,
    calls: () => state.received,
    callsFor: (requestId) => state.received.filter((call) => call.requestId === requestId).length,
    addFault: (rule) => state.faults.push(FaultRule.parse(rule)),
    reset,
  };
};
