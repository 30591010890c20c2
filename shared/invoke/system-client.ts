// The port through which the gateway calls an organization's system, and what can come back.
// `sent` tells whether the request may have reached the system (so a write may have happened).

export interface OutboundRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string | null;
  /** Total time allowed, from the first byte sent to the last byte read. */
  readonly deadlineMs: number;
  /** Largest answer read; the connection is dropped beyond it. */
  readonly maxResponseBytes: number;
}

export type OutboundResult =
  | { readonly kind: 'response'; readonly status: number; readonly contentType: string | null; readonly body: Buffer }
  | { readonly kind: 'too_large'; readonly status: number }
  | { readonly kind: 'timeout'; readonly sent: boolean }
  /** `cause`: what went wrong, for the operator's log line (never shown to the agent). */
  | { readonly kind: 'connection_failed'; readonly sent: boolean; readonly cause?: string };

export interface SystemClient {
  send(request: OutboundRequest): Promise<OutboundResult>;
}

/**
 * The client, calling `refused` whenever a system answers 401: the credentials the configuration
 * gave may have been rotated, and the control plane reads its secrets fresh.
 */
export const reportingRefusedCredentials = (systems: SystemClient, refused: () => void): SystemClient => ({
  send: async (request) => {
    const result = await systems.send(request);
    if (result.kind === 'response' && result.status === 401) refused();
    return result;
  },
});
