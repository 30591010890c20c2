// An execution item as the table holds it, read back into a record: the index attributes the store
// adds are dropped, and what remains must parse (a record that does not is a fault, not data).
import { Execution } from '../../executions/execution.js';

/**
 * The record's schema keeps only its own fields, so the index attributes (open_shard, open_until,
 * created_shard, created_key) are dropped by the parse itself. Not copied out first: an item as
 * the document client reads it is a large object of dynamically added keys, and copying all but a
 * few of them costs more than the parse.
 */
export const readItem = (item: Record<string, unknown> | undefined): Execution | undefined =>
  item === undefined ? undefined : Execution.parse(item);
