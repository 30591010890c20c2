// The functions' structured logger (Powertools), kept apart from the AWS clients so a function
// that needs only a logger bundles nothing else.
import { Logger } from '@aws-lambda-powertools/logger';

export const serviceLogger = (serviceName: string): Logger => new Logger({ serviceName });
