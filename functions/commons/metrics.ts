// The functions' metrics: one buffer per function instance, flushed after every invocation (returned
// or thrown) as CloudWatch embedded-metric-format lines, so a call costs no metrics I/O of its own.
import type { MiddlewareObj } from '@middy/core';
import { EmfMetrics } from '../../shared/adapters/emf-metrics.js';
import type { Clock } from '../../shared/clock.js';
import type { ControlPlane } from '../../shared/control-plane/control-plane.js';
import { hasFreshness, sampleConfigurationAge } from '../../shared/metrics.js';

/** What a function does with its metrics once an invocation ends. */
export interface InvocationMetrics {
  flush(): void;
}

let functionBuffer: EmfMetrics | undefined;
/** The function instance's one metrics buffer. */
export const functionMetrics = (): EmfMetrics => {
  functionBuffer ??= new EmfMetrics();
  return functionBuffer;
};

/**
 * After each invocation: the age of the configuration the function holds (when it holds one, read
 * from its control plane's last sync), then one flush of the buffer.
 */
export const invocationMetrics = (
  metrics: EmfMetrics,
  sources: { readonly controlPlane: ControlPlane; readonly clock: Clock } | null = null,
): InvocationMetrics => ({
  flush: () => {
    if (sources !== null && hasFreshness(sources.controlPlane)) {
      sampleConfigurationAge(sources.controlPlane, sources.clock, metrics);
    }
    metrics.flush();
  },
});

/** The middy step that flushes after the handler returns or throws. */
export const flushMetrics = <Event, Result>(metrics: InvocationMetrics): MiddlewareObj<Event, Result> => ({
  after: () => metrics.flush(),
  onError: () => metrics.flush(),
});
