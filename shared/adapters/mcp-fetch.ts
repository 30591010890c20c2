// The pieces of the gateway's own fetch for MCP servers: one exchange's record of what its
// requests did (see socket-tracking.ts), and answers read only up to their cap.

/** One exchange (a tools/call, or one discovery's pages): what its requests did, and its limits. */
export interface Exchange {
  /** A request of it reached a socket. */
  sent: boolean;
  /** Bytes of answer read so far, across its requests. */
  read: number;
  readonly limit: number;
  tooLarge: boolean;
  readonly signal: AbortSignal;
}

/** The part of a response body the counting reads (undici's and the platform's streams both have it). */
export interface BodySource {
  getReader(): {
    read(): Promise<{ readonly done: boolean; readonly value?: unknown }>;
    cancel(reason?: unknown): Promise<void>;
  };
}

/** A read body that stops at the cap (and marks its exchange too large there). */
export const countedBody = (body: BodySource | null, exchange: Exchange | undefined, cap: number) => {
  if (body === null) return null;
  const reader = body.getReader();
  let read = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const chunk = await reader.read();
      if (chunk.done || !(chunk.value instanceof Uint8Array)) return controller.close();
      read += chunk.value.byteLength;
      if (exchange !== undefined) exchange.read += chunk.value.byteLength;
      if (read > cap || (exchange !== undefined && exchange.read > exchange.limit)) {
        if (exchange !== undefined) exchange.tooLarge = true;
        await reader.cancel().catch(() => undefined);
        return controller.error(new Error('the answer is larger than the size cap'));
      }
      controller.enqueue(chunk.value);
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
};
