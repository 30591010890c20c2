// The embedded store's answer to a data folder that refuses reads or writes (an immutable folder,
// a full disk): each failed storage operation is answered as a temporary error instead of ending
// the process, and the runtime is told once when the store begins failing and once it works again.
import type * as DynaliteDb from 'dynalite/db/index.js';
import { errorText } from '../../shared/errors.js';

export interface FaultHooks {
  /** Reads and writes the data folder refused (an I/O error, a full disk), since the start. */
  faults: number;
  /** Whether the data folder refused a read or write, and no write has worked since. */
  failing: boolean;
  onFault?: (fault: StoreFaultEvent) => void;
}

/** The store began failing (its first refused read or write), or works again after `faults` failures. */
export type StoreFaultEvent =
  | { readonly kind: 'failing'; readonly error: string }
  | { readonly kind: 'recovered'; readonly faults: number };

/**
 * What dynalite answers for a read or write the data folder refused: DynamoDB's own 500
 * InternalServerError, which clients treat as temporary. dynalite throws any other error out of
 * its request handler, which ended the whole process at the first failed write.
 */
const faultAnswer = (error: unknown) =>
  Object.assign(new Error('The local store could not read or write its data folder.'), {
    statusCode: 500,
    body: {
      __type: 'com.amazonaws.dynamodb.v20120810#InternalServerError',
      message: 'The local store could not read or write its data folder; try again shortly.',
    },
    cause: error,
  });

/**
 * Every storage operation's failure is answered as a temporary error, logged once when the store
 * begins failing and once when it works again: the next operation simply tries the folder again.
 */
export const answerFaults = (database: DynaliteDb.LevelDatabase, hooks: FaultHooks): void => {
  // A read may work while writes still fail (a full disk): only a write says the store works again.
  const answering =
    <A extends unknown[], R>(operation: (...args: A) => Promise<R>, write: boolean) =>
    async (...args: A): Promise<R> => {
      let result: R;
      try {
        result = await operation(...args);
      } catch (error) {
        hooks.faults += 1;
        if (!hooks.failing) {
          hooks.failing = true;
          hooks.onFault?.({ kind: 'failing', error: errorText(error) });
        }
        throw faultAnswer(error);
      }
      if (write && hooks.failing) {
        hooks.failing = false;
        hooks.onFault?.({ kind: 'recovered', faults: hooks.faults });
      }
      return result;
    };
  database._put = answering(database._put.bind(database), true);
  database._batch = answering(database._batch.bind(database), true);
  database._del = answering(database._del.bind(database), true);
  database._get = answering(database._get.bind(database), false);
  database._getMany = answering(database._getMany.bind(database), false);
};
