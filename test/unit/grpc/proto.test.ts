// The proto is the reference's, field for field: what a caller built from the reference sends is
// what the gateway reads. And the Connect fields become the recorded origin and the traceparent.
import * as protoLoader from '@grpc/proto-loader';
import { describe, expect, it } from 'vitest';
import { projectPath } from '../../../infra/paths.js';
import { ConnectMessage, originOf, traceparentOf } from '../../../shared/edge/grpc/stream-context.js';
import { verifies } from '../../support/requirements.js';

interface Field {
  readonly name: string;
  readonly number: number;
  readonly type: string;
  readonly typeName: string;
  readonly oneofIndex?: number;
}
interface Descriptor {
  readonly field: Field[];
  readonly nestedType: (Descriptor & { readonly name: string })[];
  readonly oneofDecl: { readonly name: string }[];
  readonly reservedRange: { readonly start: number; readonly end: number }[];
}

const definition = protoLoader.loadSync(['pcc_tool_gateway.proto'], {
  keepCase: true,
  includeDirs: [projectPath('proto')],
});
const message = (name: string): Descriptor => (definition[`pcc.toolgateway.v1.${name}`] as { type: Descriptor }).type;
/** Name, number, type and oneof of each field (the descriptor says oneofIndex 0 for plain fields too). */
const fields = (descriptor: Descriptor) =>
  descriptor.field.map((field) => [
    field.name,
    field.number,
    field.type.replace('TYPE_', '').toLowerCase(),
    descriptor.oneofDecl.length === 0 ? null : (descriptor.oneofDecl[field.oneofIndex ?? 0]?.name ?? null),
  ]);

describe('the tool gateway proto', () => {
  it(verifies('grpc.proto', 'declares the bidirectional CreateMcpTransport of PccToolGateway'), () => {
    const method = (
      definition['pcc.toolgateway.v1.PccToolGateway'] as Record<string, protoLoader.MethodDefinition<unknown, unknown>>
    ).CreateMcpTransport;
    expect(method?.path).toBe('/pcc.toolgateway.v1.PccToolGateway/CreateMcpTransport');
    expect(method?.requestStream).toBe(true);
    expect(method?.responseStream).toBe(true);
  });

  it(verifies('grpc.proto', 'numbers the request, Connect and response fields as the reference does'), () => {
    const request = message('CreateMcpTransportRequest');
    expect(fields(request)).toEqual([
      ['connect', 1, 'message', 'request'],
      ['request_body', 2, 'string', 'request'],
    ]);
    const connect = request.nestedType.find((nested) => nested.name === 'Connect');
    if (connect === undefined) throw new Error('no Connect');
    expect(fields(connect)).toEqual([
      ['server_id', 1, 'string', null],
      ['request_id', 5, 'string', null],
      ['trace_context', 6, 'message', null],
      ['tenant_info', 7, 'message', null],
      ['server_cloudos_version', 8, 'string', null],
    ]);
    expect(connect.reservedRange.map((range) => [range.start, range.end])).toEqual([
      [2, 2],
      [3, 3],
      [4, 4],
    ]);
    const response = message('CreateMcpTransportResponse');
    expect(fields(response)).toEqual([
      ['connected', 1, 'message', 'response'],
      ['json', 2, 'string', 'response'],
    ]);
    expect(response.nestedType.map((nested) => [nested.name, nested.field.length])).toEqual([['Connected', 0]]);
    expect(fields(message('TraceContext'))).toEqual([
      ['trace_id', 1, 'string', null],
      ['span_id', 2, 'string', null],
    ]);
    expect(fields(message('TenantInfo')).map((field) => field[0])).toEqual([
      'bundle_id',
      'feature_id',
      'client_info',
      'automated_test_device_group',
    ]);
  });
});

describe('the Connect as recorded', () => {
  const connect = (fields: Record<string, unknown>) => ConnectMessage.parse(fields);

  it(verifies('grpc.metadata-recorded', 'continues a valid trace, and starts none from an invalid one'), () => {
    const traceId = '0af7651916cd43dd8448eb211c80319c';
    expect(
      traceparentOf(connect({ trace_context: { trace_id: traceId.toUpperCase(), span_id: 'b7ad6b7169203331' } })),
    ).toBe(`00-${traceId}-b7ad6b7169203331-01`);
    expect(traceparentOf(connect({ trace_context: { trace_id: traceId, span_id: '' } }))).toBe(
      `00-${traceId}-0000000000000001-01`,
    );
    for (const trace_id of ['', '0'.repeat(32), 'xyz', `${traceId}00`]) {
      expect(traceparentOf(connect({ trace_context: { trace_id, span_id: 'b7ad6b7169203331' } }))).toBeNull();
    }
    expect(traceparentOf(connect({ trace_context: null }))).toBeNull();
  });

  it(verifies('grpc.metadata-recorded', 'records empty fields as null and bounds the caller’s text'), () => {
    const origin = originOf(
      connect({
        server_id: '*',
        request_id: 'r'.repeat(500),
        tenant_info: { bundle_id: 'com.example', feature_id: '' },
      }),
      '',
    );
    expect(origin).toEqual({
      transport: 'grpc',
      server_id: '*',
      request_id: 'r'.repeat(200),
      request_uuid: null,
      trace_id: null,
      span_id: null,
      tenant: { bundle_id: 'com.example', feature_id: null, client_info: null, automated_test_device_group: null },
      server_cloudos_version: null,
    });
  });
});
