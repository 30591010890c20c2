// Random trace and span ids, drawn from a pool the system's CSPRNG fills a few kilobytes at a time:
// one request for random bytes per 256 ids instead of one per id, which costs a call a few
// microseconds each. The ids are not secrets (they travel in headers); only unpredictability and
// uniqueness matter, which the pool keeps.
import { randomFillSync } from 'node:crypto';

const poolBytes = 4096;
const pool = Buffer.alloc(poolBytes);
let offset = poolBytes;

/** `bytes` random bytes as lowercase hex; never all zeros (W3C trace context refuses those ids). */
export const randomHex = (bytes: number): string => {
  if (!Number.isInteger(bytes) || bytes < 1 || bytes > poolBytes) throw new RangeError('1 to 4096 random bytes');
  for (;;) {
    if (offset + bytes > poolBytes) {
      randomFillSync(pool);
      offset = 0;
    }
    const hex = pool.toString('hex', offset, offset + bytes);
    offset += bytes;
    if (!/^0+$/.test(hex)) return hex;
  }
};
