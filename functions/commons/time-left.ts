// What the running invocation has left before Lambda stops it, for the calls it sends (their
// deadlines are cut to it: shared/invoke/time-budget.ts). A Lambda instance runs one invocation at
// a time, so the one being served is kept here by the middleware stack.
import type { MiddlewareObj } from '@middy/core';
import type { Context } from 'aws-lambda';

let current: Pick<Context, 'getRemainingTimeInMillis'> | null = null;

/** The middy step that notes the invocation being served. */
export const trackTimeLeft = <Event, Result>(): MiddlewareObj<Event, Result, Error, Context> => ({
  before: (request) => {
    current = request.context;
  },
});

/** Milliseconds the invocation being served has left; null outside one. */
export const timeLeftMs = (): number | null => current?.getRemainingTimeInMillis() ?? null;
