// What a gRPC stream says about itself, read at its start: the Connect message (zod-checked) and
// the call's metadata, turned into the origin every execution of the stream records and the
// traceparent its system calls continue.
import * as z from 'zod';
import type { ExecutionOrigin } from '../../executions/execution.js';

/** The server_id that names the whole gateway (every system's tools); any other names one system by its key. */
export const wholeGatewayServerId = '*';

/** The metadata key of the per-call request UUID (gRPC metadata keys are lowercase, so any case matches). */
export const requestUuidMetadataKey = 'apple-request-uuid';

/** Recorded strings are the caller's text: bounded, and empty (proto3's unset) means absent. */
const recorded = z
  .string()
  .default('')
  .transform((value) => (value.length > 200 ? value.slice(0, 200) : value))
  .transform((value) => (value.length === 0 ? null : value));

const TraceContextMessage = z.object({ trace_id: z.string().default(''), span_id: z.string().default('') });
const TenantInfoMessage = z.object({
  bundle_id: recorded,
  feature_id: recorded,
  client_info: recorded,
  automated_test_device_group: recorded,
});

export const ConnectMessage = z.object({
  server_id: z.string().default(''),
  request_id: recorded,
  trace_context: TraceContextMessage.nullable().default(null),
  tenant_info: TenantInfoMessage.nullable().default(null),
  server_cloudos_version: recorded,
});
export type ConnectMessage = z.output<typeof ConnectMessage>;

/** One CreateMcpTransportRequest as proto-loader decodes it (oneofs: the `request` field names the member). */
export const RequestMessage = z.object({
  request: z.enum(['connect', 'request_body']).optional(),
  connect: z.unknown().optional(),
  request_body: z.string().optional(),
});

const hex = (length: number) => new RegExp(`^[0-9a-f]{${length}}$`);

/** The W3C traceparent naming the caller's trace and span, or null when they are not valid trace-context ids. */
export const traceparentOf = (connect: ConnectMessage): string | null => {
  const traceId = connect.trace_context?.trace_id.trim().toLowerCase() ?? '';
  const spanId = connect.trace_context?.span_id.trim().toLowerCase() ?? '';
  if (!hex(32).test(traceId) || /^0+$/.test(traceId)) return null;
  // Without a usable span the trace still continues: the gateway's span then stands for the caller's.
  const parent = hex(16).test(spanId) && !/^0+$/.test(spanId) ? spanId : '0000000000000001';
  return `00-${traceId}-${parent}-01`;
};

export const originOf = (connect: ConnectMessage, requestUuid: string | null): ExecutionOrigin => {
  const traceId = connect.trace_context?.trace_id.trim().toLowerCase() ?? '';
  const spanId = connect.trace_context?.span_id.trim().toLowerCase() ?? '';
  return {
    transport: 'grpc',
    server_id: connect.server_id.slice(0, 200),
    request_id: connect.request_id,
    request_uuid: requestUuid === null || requestUuid.length === 0 ? null : requestUuid.slice(0, 200),
    trace_id: traceId.length === 0 ? null : traceId.slice(0, 64),
    span_id: spanId.length === 0 ? null : spanId.slice(0, 32),
    tenant: connect.tenant_info,
    server_cloudos_version: connect.server_cloudos_version,
  };
};
