// The gRPC services as the repo's proto files define them (proto/), loaded with proto-loader, and
// the standard health check a load balancer asks (grpc.health.v1.Health/Check).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

/** The fully qualified name of the tool gateway service (the reference names no package; see docs/adr/0045-the-grpc-tool-gateway-a-second-front-on-the-same-use-cases.md). */
const gatewayServiceName = 'pcc.toolgateway.v1.PccToolGateway';

/**
 * The proto files: beside the module when it runs bundled (the container image ships them in
 * dist/proto/), else the repo's proto/ folder three levels up from shared/edge/grpc/.
 */
const bundledProtos = fileURLToPath(new URL('./proto/', import.meta.url));
const protoFolder = existsSync(bundledProtos)
  ? bundledProtos
  : fileURLToPath(new URL('../../../proto', import.meta.url));
const loaderOptions: protoLoader.Options = {
  keepCase: true,
  longs: String,
  enums: String,
  // Unset proto3 strings arrive as '' and unset messages as null; the oneof names its member.
  defaults: true,
  oneofs: true,
  includeDirs: [protoFolder],
};

const serviceAt = (root: grpc.GrpcObject, name: string): grpc.ServiceDefinition => {
  // Packages are objects, message types name their format, and a service is its client's class.
  let node: grpc.GrpcObject[string] | undefined = root;
  for (const part of name.split('.')) node = typeof node === 'object' && !('format' in node) ? node[part] : undefined;
  const service = typeof node === 'function' ? node.service : undefined;
  if (service === undefined) throw new Error(`The proto defines no service ${name}.`);
  return service;
};

export const loadServices = (): { gateway: grpc.ServiceDefinition; health: grpc.ServiceDefinition } => {
  const root = grpc.loadPackageDefinition(
    protoLoader.loadSync(['pcc_tool_gateway.proto', 'health.proto'], loaderOptions),
  );
  return { gateway: serviceAt(root, gatewayServiceName), health: serviceAt(root, 'grpc.health.v1.Health') };
};

export const failure = (code: grpc.status, details: string): Partial<grpc.StatusObject> => ({ code, details });

/** Check answers for the server as a whole ('') and for the gateway service; another name is NOT_FOUND. */
export const healthCheck = (status: () => 'SERVING' | 'NOT_SERVING'): grpc.UntypedServiceImplementation => ({
  Check: (
    call: grpc.ServerUnaryCall<{ service?: string }, unknown>,
    callback: grpc.sendUnaryData<{ status: string }>,
  ) => {
    const service = call.request.service ?? '';
    if (service !== '' && service !== gatewayServiceName) {
      return callback(failure(grpc.status.NOT_FOUND, `Unknown service "${service.slice(0, 100)}".`));
    }
    callback(null, { status: status() });
  },
});
