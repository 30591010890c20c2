// Figures one section of a run measures and a later one uses: the cost section prices the
// transitions, store requests and handler times the others measured in the same run.

/** What one call of a kind cost the store, counted on the wire. */
export interface StoreUse {
  readonly writes: number;
  readonly reads: number;
  /** The execution record's size at the end of the call (its JSON), bytes. */
  readonly itemBytes: number;
}

export interface Measured {
  /** Handler time per call, ms: what Lambda would bill as duration. */
  readonly handlerMs: {
    /** The bundled MCP function, warm, in its own process (first-call section). */
    directRead?: number;
    directWrite?: number;
    /** The local runtime's reply to a held call, p50 (held-reply section). */
    hold?: number;
    /** From the held reply until the approval run's register step recorded its token (decision section). */
    register?: number;
    /** From the approver's click until the console answered (decision section). */
    decide?: number;
  };
  readonly store: {
    directRead?: StoreUse;
    directWrite?: StoreUse;
    heldApproved?: StoreUse;
    heldExpired?: StoreUse;
  };
  /** Step Functions state transitions per held call (held-cost section). */
  readonly transitions: {
    approved?: number;
    expired?: number;
  };
}

export const nothingMeasured = (): Measured => ({ handlerMs: {}, store: {}, transitions: {} });
