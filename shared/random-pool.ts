// Random bytes drawn from a pool the system's CSPRNG fills a few kilobytes at a time: one request
// for random bytes per 256 trace ids or execution ids instead of one per id, which costs a call
// tens of microseconds on a busy machine. What is drawn is as unpredictable and as unique as the
// CSPRNG's own output; each byte is handed out once.
import { randomFillSync } from 'node:crypto';

const poolBytes = 4096;
const pool = Buffer.alloc(poolBytes);
let offset = poolBytes;

/** The next `bytes` bytes of the pool (a view, valid until the next draw). */
const draw = (bytes: number): Buffer => {
  if (!Number.isInteger(bytes) || bytes < 1 || bytes > poolBytes) throw new RangeError('1 to 4096 random bytes');
  if (offset + bytes > poolBytes) {
    randomFillSync(pool);
    offset = 0;
  }
  const drawn = pool.subarray(offset, offset + bytes);
  offset += bytes;
  return drawn;
};

/** `bytes` random bytes, a copy of their own. */
export const randomBytes = (bytes: number): Uint8Array => Uint8Array.from(draw(bytes));

/** `bytes` random bytes as lowercase hex; never all zeros (W3C trace context refuses those ids). */
export const randomHex = (bytes: number): string => {
  for (;;) {
    const hex = draw(bytes).toString('hex');
    if (!/^0+$/.test(hex)) return hex;
  }
};
