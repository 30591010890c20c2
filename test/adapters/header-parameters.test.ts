// Header parameters from an OpenAPI document to the wire: the catalog offers agents only headers
// they may set, canonicalization refuses values that are not printable ASCII (nothing is built or
// sent), and a real call to a loopback server that records the raw header lines carries exactly
// the gateway's transport, credentials and tracing headers plus the agent's allowed ones.
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpSystemClient } from '../../shared/adapters/http-system-client.js';
import { canonicalizeArguments } from '../../shared/arguments/canonicalize.js';
import { readArguments } from '../../shared/arguments/strict-json.js';
import { buildSystemTools } from '../../shared/catalog/build.js';
import { loadOpenApiDocument } from '../../shared/catalog/openapi-document.js';
import { operationsFromOpenApi } from '../../shared/catalog/operations.js';
import type { CatalogTool, FieldBinding, ToolWithValidator } from '../../shared/catalog/tool.js';
import type { ResolvedOpenApiSystem } from '../../shared/config/resolved.js';
import { buildRequest } from '../../shared/invoke/call.js';
import { verifies } from '../support/requirements.js';
import { aSystem, httpTargetOf } from '../support/systems.js';
import { withValidator } from '../support/validators.js';

interface Received {
  readonly rawHeaders: readonly string[];
  readonly body: string;
}

const received: Received[] = [];
const server = createServer((request: IncomingMessage, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    received.push({ rawHeaders: request.rawHeaders, body: Buffer.concat(chunks).toString('utf8') });
    response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
  });
});
let baseUrl = '';

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const optionalHeader = (name: string) => ({ name, in: 'header', required: false, schema: { type: 'string' } });

/** Every header name a document may try to hand to agents, beside one plain header and a body. */
const document = JSON.stringify({
  openapi: '3.1.0',
  info: { title: 'Headers', version: '1' },
  paths: {
    '/notes': {
      post: {
        operationId: 'notes.add',
        parameters: [
          optionalHeader('X-Tenant'),
          ...[
            'Host',
            'Connection',
            'Keep-Alive',
            'Proxy-Authenticate',
            'Proxy-Authorization',
            'Proxy-Connection',
            'TE',
            'Trailer',
            'Transfer-Encoding',
            'Upgrade',
            'Content-Length',
            'Cookie',
            'Accept',
            'Content-Type',
            'Authorization',
            'api_key',
            'X-Request-Id',
            'traceparent',
          ].map(optionalHeader),
          { name: 'session', in: 'cookie', required: false, schema: { type: 'string' } },
        ],
        requestBody: {
          required: true,
          content: { 'application/json': { schema: { type: 'object', properties: { text: { type: 'string' } } } } },
        },
        responses: { '200': { description: 'OK' } },
      },
    },
  },
});

const system = (): ResolvedOpenApiSystem =>
  aSystem({
    base_url: baseUrl,
    openapi: 'notes.yaml',
    credentials: { type: 'api_key', header: 'api_key', value: 'system-key-1' },
  });

const notesTool = async (): Promise<ToolWithValidator> => {
  const loaded = await loadOpenApiDocument(document);
  if (!loaded.ok) throw new Error(loaded.messages.join('\n'));
  const built = buildSystemTools(system(), 0, operationsFromOpenApi(loaded.document));
  expect(built.problems).toEqual([]);
  const [tool] = built.tools;
  if (tool === undefined) throw new Error('expected the notes tool');
  return withValidator(tool);
};

const canonical = (tool: ToolWithValidator, json: string) => {
  const read = readArguments(json, []);
  if (read === null) throw new Error(`not JSON: ${json}`);
  return canonicalizeArguments(tool, read);
};

/** The raw header lines as name → values, names lowercased. */
const headerLines = (raw: readonly string[]): Map<string, string[]> => {
  const lines = new Map<string, string[]>();
  for (let index = 0; index + 1 < raw.length; index += 2) {
    const name = (raw[index] ?? '').toLowerCase();
    lines.set(name, [...(lines.get(name) ?? []), raw[index + 1] ?? '']);
  }
  return lines;
};

describe('header parameters, from the document to the wire', () => {
  it(
    verifies(
      'catalog.header-parameters',
      'offers agents only the header they may set, and a call carries only the gateway’s own besides',
    ),
    async () => {
      const tool = await notesTool();
      expect(httpTargetOf(tool).fields).toEqual<FieldBinding[]>([
        { field: 'text', in: 'body', name: 'text' },
        { field: 'X-Tenant', in: 'header', name: 'X-Tenant' },
      ]);
      // Smuggling a header through an unknown field is refused like any unknown field.
      const smuggled = canonical(tool, '{"text":"hi","Host":"evil.example","Connection":"upgrade","api_key":"mine"}');
      expect(smuggled.ok).toBe(false);
      if (!smuggled.ok) {
        expect(smuggled.errors.map((error) => [error.path, error.code])).toEqual([
          ['/Connection', 'unknown_field'],
          ['/Host', 'unknown_field'],
          ['/api_key', 'unknown_field'],
        ]);
      }

      const args = canonical(tool, '{"text":"hi","X-Tenant":"acme-1 ~!"}');
      if (!args.ok) throw new Error(JSON.stringify(args.errors));
      const outbound = buildRequest(httpTargetOf(tool), system(), args.arguments.value, {
        executionId: '0199d2a4-5c1e-7b3a-9f10-2c8e4b7a1d55',
        traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      });
      received.length = 0;
      const result = await new HttpSystemClient().send(outbound);
      expect(result).toMatchObject({ kind: 'response', status: 200 });
      expect(received).toHaveLength(1);
      const lines = headerLines(received[0]?.rawHeaders ?? []);
      expect(Object.fromEntries(lines)).toEqual({
        host: [baseUrl.slice('http://'.length)],
        connection: ['keep-alive'],
        'content-length': [String(Buffer.byteLength('{"text":"hi"}'))],
        accept: ['application/json'],
        'content-type': ['application/json'],
        'x-tenant': ['acme-1 ~!'],
        api_key: ['system-key-1'],
        'x-request-id': ['0199d2a4-5c1e-7b3a-9f10-2c8e4b7a1d55'],
        traceparent: ['00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'],
      });
      expect(received[0]?.body).toBe('{"text":"hi"}');
    },
  );

  it.each([
    ['a line break (header injection)', 'acme\r\nX-Admin: yes'],
    ['a line feed', 'acme\nHost: evil.example'],
    ['a tab', 'acme\tone'],
    ['a NUL', 'acme\u0000'],
    ['a letter beyond ASCII', 'Café'],
    ['Arabic text', 'شركة'],
    ['a zero-width space', 'acme\u200bone'],
    ['DEL', 'acme\u007f'],
  ])(
    verifies(
      'invoke.header-values',
      'refuses a header value holding %s with input_errors, so nothing is built or sent',
    ),
    async (_label, value) => {
      const tool = await notesTool();
      const result = canonical(tool, JSON.stringify({ text: 'hi', 'X-Tenant': value }));
      expect(result).toEqual({
        ok: false,
        errors: [
          {
            path: '/X-Tenant',
            code: 'invalid_format',
            message:
              'A value sent as an HTTP header may hold only printable ASCII (space to ~): no line breaks, tabs or other characters.',
          },
        ],
      });
    },
  );

  it(verifies('invoke.header-values', 'accepts numbers and booleans in headers, sent as their JSON text'), async () => {
    const loaded = await loadOpenApiDocument(
      JSON.stringify({
        openapi: '3.1.0',
        info: { title: 'Headers', version: '1' },
        paths: {
          '/ping': {
            get: {
              operationId: 'ping',
              parameters: [
                { name: 'X-Attempt', in: 'header', schema: { type: 'integer' } },
                { name: 'X-Dry-Run', in: 'header', schema: { type: 'boolean' } },
              ],
              responses: { '200': { description: 'OK' } },
            },
          },
        },
      }),
    );
    if (!loaded.ok) throw new Error(loaded.messages.join('\n'));
    const [tool] = buildSystemTools(system(), 0, operationsFromOpenApi(loaded.document)).tools;
    if (tool === undefined) throw new Error('expected the ping tool');
    const args = canonical(withValidator(tool), '{"X-Attempt":2,"X-Dry-Run":true}');
    if (!args.ok) throw new Error(JSON.stringify(args.errors));
    received.length = 0;
    await new HttpSystemClient().send(
      buildRequest(httpTargetOf(tool), system(), args.arguments.value, {
        executionId: '0199d2a4-5c1e-7b3a-9f10-2c8e4b7a1d56',
        traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      }),
    );
    const lines = headerLines(received[0]?.rawHeaders ?? []);
    expect(lines.get('x-attempt')).toEqual(['2']);
    expect(lines.get('x-dry-run')).toEqual(['true']);
  });

  it(
    verifies(
      'catalog.header-parameters',
      'never sends a header binding the catalog would not make (a hand-built tool)',
    ),
    async () => {
      const names = ['Host', 'Connection', 'Transfer-Encoding', 'Content-Length', 'Cookie', 'Upgrade', 'TE', 'Accept'];
      const notes = await notesTool();
      const tool: CatalogTool = {
        ...notes,
        target: {
          ...httpTargetOf(notes),
          fields: [
            { field: 'text', in: 'body', name: 'text' },
            ...names.map((name): FieldBinding => ({ field: name, in: 'header', name })),
          ],
        },
      };
      const args = Object.fromEntries([['text', 'hi'], ...names.map((name) => [name, 'agent-value'])]);
      const outbound = buildRequest(httpTargetOf(tool), system(), args, {
        executionId: '0199d2a4-5c1e-7b3a-9f10-2c8e4b7a1d57',
        traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      });
      expect(Object.values(outbound.headers)).not.toContain('agent-value');
      received.length = 0;
      expect(await new HttpSystemClient().send(outbound)).toMatchObject({ kind: 'response', status: 200 });
      const raw = received[0]?.rawHeaders ?? [];
      expect(raw).not.toContain('agent-value');
      expect(headerLines(raw).get('host')).toEqual([baseUrl.slice('http://'.length)]);
      expect(received[0]?.body).toBe('{"text":"hi"}');
    },
  );
});
