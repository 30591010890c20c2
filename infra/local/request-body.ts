// A request's body as every local server reads it (the HTTP front, the channel's POST, the local
// AWS stand-ins): up to a cap, and nothing past it buffered; a body declared larger is refused
// before a byte is read; a front that must not wait forever bounds the wait.
import type { IncomingMessage } from 'node:http';

/** What reading a body gave. */
export type BodyRead =
  | { readonly kind: 'read'; readonly bytes: Buffer }
  | { readonly kind: 'too_large' }
  /** The wait ran out before the body ended. */
  | { readonly kind: 'late' }
  /** The connection failed while the body was read. */
  | { readonly kind: 'failed'; readonly error: Error };

/**
 * Reads a body of at most `limitBytes`, within `waitMs` when given. Once it ends (any way) the
 * request's listeners are its own again, so a server may re-emit the body to another handler.
 */
export const readCappedBody = (
  request: IncomingMessage,
  limitBytes: number,
  waitMs: number | null = null,
): Promise<BodyRead> =>
  new Promise((resolve) => {
    if (Number(request.headers['content-length'] ?? '0') > limitBytes) {
      resolve({ kind: 'too_large' });
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let timer: NodeJS.Timeout | null = null;
    const finish = (read: BodyRead) => {
      if (timer !== null) clearTimeout(timer);
      request.off('data', onData).off('end', onEnd).off('error', onError);
      resolve(read);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limitBytes) {
        chunks.push(chunk);
        return;
      }
      // Stop reading at the cap: nothing beyond it is buffered.
      request.pause();
      finish({ kind: 'too_large' });
    };
    const onEnd = () => finish({ kind: 'read', bytes: Buffer.concat(chunks) });
    const onError = (error: Error) => finish({ kind: 'failed', error });
    if (waitMs !== null) timer = setTimeout(() => finish({ kind: 'late' }), waitMs);
    request.on('data', onData).on('end', onEnd).on('error', onError);
  });

export class BodyTooLargeError extends Error {}

/** The whole body of at most `limitBytes`, for servers that answer a failure by throwing: BodyTooLargeError past it. */
export const readRequestBody = async (request: IncomingMessage, limitBytes: number): Promise<Buffer> => {
  const read = await readCappedBody(request, limitBytes);
  if (read.kind === 'read') return read.bytes;
  if (read.kind === 'failed') throw read.error;
  throw new BodyTooLargeError(`The request is larger than ${limitBytes} bytes.`);
};
