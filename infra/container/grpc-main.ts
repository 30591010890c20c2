// The gRPC tool gateway's container entry (the image the Dockerfile builds; ECS Fargate behind an
// Application Load Balancer, infra/constructs/grpc-service.ts): the same domain wired to the same
// AWS adapters as the MCP function, agents' bearer JWTs verified in process as the agent
// authorizer verifies them (each caller identified by the configuration, as behind that authorizer), plain HTTP/2 on GRPC_PORT (the load balancer ends TLS), and a drain on
// SIGTERM within the task's stop timeout.

import { agentTokenAuthenticator } from '../../functions/commons/agent-tokens.js';
import { agentServicesFor, serviceLogger } from '../../functions/commons/aws.js';
import { processGrpcEnvironment } from '../../functions/commons/token-environments.js';
import { systemClock } from '../../shared/clock.js';
import { startGrpcGateway } from '../../shared/edge/grpc/gateway.js';
import { errorText } from '../../shared/errors.js';
import { RequestGate } from '../../shared/limits/request-gate.js';
import { identifyCaller } from '../../shared/use-cases/identify-caller.js';

const environment = processGrpcEnvironment();
const logger = serviceLogger('grpc');

const services = agentServicesFor(environment, logger);
const verify = agentTokenAuthenticator(environment);

const gateway = await startGrpcGateway({
  host: '0.0.0.0',
  port: environment.GRPC_PORT,
  services,
  authenticate: async (token) => identifyCaller(services, await verify(token)),
  // One gate per task: an agent's limits hold per task, as they hold per Lambda instance.
  requestGate: new RequestGate(systemClock),
  log: logger,
});
logger.info('gRPC tool gateway listening', { port: gateway.port });

process.once('SIGTERM', () => {
  logger.info('stopping: draining open streams');
  void gateway.close().then(
    () => process.exit(0),
    (error: unknown) => {
      logger.warn('the gRPC gateway did not close cleanly', {
        error: errorText(error),
      });
      process.exit(1);
    },
  );
});
