// An execution item as the table holds it, read back into a record: the index attributes the store
// adds are dropped, and what remains must parse (a record that does not is a fault, not data).
import { Execution } from '../../executions/execution.js';

export const readItem = (item: Record<string, unknown> | undefined): Execution | undefined => {
  if (item === undefined) return undefined;
  const { open_shard: _shard, open_until: _until, created_shard: _partition, created_key: _place, ...fields } = item;
  return Execution.parse(fields);
};
