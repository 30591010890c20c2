// What one execution record may hold. The store is DynamoDB (in AWS, and its API over dynalite
// locally), whose items hold at most 400 KB; a record must fit whole, or the write that records a
// call's outcome fails after the call was sent.

/** A DynamoDB item's limit, counted as DynamoDB counts it (attribute names and values, UTF-8). */
export const maxRecordBytes = 400 * 1024;

/** Room kept for what the store adds to a record (index and retention attributes) and a new status. */
const storeOverheadBytes = 1024;

/**
 * The largest answer a system's `max_response_size` may allow, and its default: what a record holds
 * beside the largest arguments (64 KB canonical, their sealed copy and the copy approvers are shown)
 * and everything else a call records, with room to spare (measured in
 * test/adapters/record-size.test.ts). A larger answer is refused by the configuration check.
 */
export const maxResponseSizeCeiling = 200 * 1024;

/**
 * An upper bound of the record's size as DynamoDB counts it: its JSON text, which holds every name
 * and value and adds quotes and separators DynamoDB does not count.
 */
export const recordBytes = (record: object): number => Buffer.byteLength(JSON.stringify(record), 'utf8');

/** Whether the record, as it will be written, fits one item. */
export const fitsRecord = (record: object): boolean => recordBytes(record) + storeOverheadBytes <= maxRecordBytes;
