// A conditional write that fails on its condition is an answer, not an error: the item was already
// there, or had already moved on. DynamoDB and the local store name that failure alike.

/** Whether a conditional write failed on its condition. */
export const isConditionFailure = (error: unknown): boolean =>
  error instanceof Error && error.name === 'ConditionalCheckFailedException';

/** A conditional write whose failed condition is an answer (false), not an error. */
export const appliedUnlessConditionFailed = (write: Promise<unknown>): Promise<boolean> =>
  write.then(
    () => true,
    (error: unknown) => {
      if (isConditionFailure(error)) return false;
      throw error;
    },
  );
