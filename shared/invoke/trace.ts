// W3C trace context: the caller's trace continues into the system call, with the gateway's own
// span as the parent; without one, the gateway starts a trace.
import { randomHex } from '../random-pool.js';

const traceparentPattern = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

export interface TraceContext {
  readonly traceId: string;
  /** The header to send downstream: the same trace, the gateway's span. */
  readonly traceparent: string;
}

export const continueTrace = (incoming: string | null | undefined): TraceContext => {
  const match = traceparentPattern.exec(incoming?.trim().toLowerCase() ?? '');
  // An all-zero trace or parent id makes the header invalid: it is ignored, flags included.
  const valid = match?.[1] !== undefined && match[2] !== undefined && !/^0+$/.test(match[1]) && !/^0+$/.test(match[2]);
  const traceId = valid && match?.[1] !== undefined ? match[1] : randomHex(16);
  const flags = valid && match?.[3] !== undefined ? match[3] : '01';
  return { traceId, traceparent: `00-${traceId}-${randomHex(8)}-${flags}` };
};

/** The trace a held call was made in, continued when it finally runs (a new span of the gateway's). */
export const resumeTrace = (traceId: string | null): TraceContext =>
  traceId !== null && /^[0-9a-f]{32}$/.test(traceId) && !/^0+$/.test(traceId)
    ? { traceId, traceparent: `00-${traceId}-${randomHex(8)}-01` }
    : continueTrace(null);
