// The document client the execution store is given, built where the client is (the functions and
// the local runtime): the store itself changes nothing of what it is given.
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { StoreUnavailableError } from '../../errors.js';

/** DynamoDB's answers that mean "not now": nothing was written, and the same request may work shortly. */
const throttlingErrors = new Set([
  'ProvisionedThroughputExceededException',
  'RequestLimitExceeded',
  'ThrottlingException',
  'LimitExceededException',
]);
const isTemporaryFault = (error: unknown): boolean =>
  error instanceof Error && (('$fault' in error && error.$fault === 'server') || throttlingErrors.has(error.name));

/**
 * The document client the execution store is given: `client`'s, with a fault on the store's side
 * that outlasts the SDK's own retries turned into the one kind of error callers know (a call refused
 * with nothing sent, not an internal fault of unknown outcome). It adds that step to `client`'s
 * middleware, which the document client shares: build `client` for it.
 */
export const executionStoreDocuments = (client: DynamoDBClient): DynamoDBDocumentClient => {
  const documents = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
  documents.middlewareStack.add(
    (next) => async (args) => {
      try {
        return await next(args);
      } catch (error) {
        throw isTemporaryFault(error)
          ? new StoreUnavailableError('The execution store is unavailable.', { cause: error })
          : error;
      }
    },
    { step: 'initialize', name: 'storeUnavailable', override: true },
  );
  return documents;
};
