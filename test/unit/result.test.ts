import { describe, expect, it } from 'vitest';
import { isUuid, uuidV7Ids } from '../../shared/ids.js';
import {
  executionStatuses,
  isErrorStatus,
  ResultObject,
  resultObject,
  resultObjectJsonSchema,
} from '../../shared/result.js';
import { verifies } from '../support/requirements.js';

describe('the result object', () => {
  it(verifies('result.fields-always-present', 'fills every field it is not given with null'), () => {
    expect(resultObject({ status: 'denied', code: 'unknown_tool' })).toEqual({
      status: 'denied',
      execution_id: null,
      result: null,
      code: 'unknown_tool',
      message: null,
      approval_url: null,
      input_errors: null,
    });
    expect(resultObjectJsonSchema.required).toEqual(Object.keys(ResultObject.shape));
    expect(ResultObject.safeParse({ status: 'succeeded' }).success).toBe(false);
  });

  it(verifies('result.is-error', 'marks exactly denied, failed, unknown, rejected and expired as errors'), () => {
    const errors = executionStatuses.filter(isErrorStatus);
    expect(errors).toEqual(['failed', 'unknown', 'denied', 'rejected', 'expired']);
    expect(executionStatuses.filter((status) => !isErrorStatus(status))).toEqual([
      'succeeded',
      'pending_approval',
      'approved',
    ]);
  });

  it(verifies('store.ids-uuidv7', 'mints UUIDv7 ids that sort by creation time'), async () => {
    const first = uuidV7Ids.next();
    await new Promise((resolve) => setTimeout(resolve, 2));
    const second = uuidV7Ids.next();
    for (const id of [first, second]) {
      expect(isUuid(id)).toBe(true);
      expect(id[14]).toBe('7');
    }
    expect(first < second).toBe(true);
  });

  it(
    verifies('store.ids-uuidv7', 'mints ids in one millisecond that still sort as minted, each a valid UUIDv7'),
    () => {
      const ids = Array.from({ length: 2000 }, () => uuidV7Ids.next());
      for (const id of ids) {
        expect(isUuid(id)).toBe(true);
        expect(id[14]).toBe('7');
        // The RFC 9562 variant: the first hex digit of the fourth group is 8, 9, a or b.
        expect('89ab').toContain(id[19]);
      }
      expect(new Set(ids).size).toBe(ids.length);
      expect([...ids].sort()).toEqual(ids);
    },
  );
});
