// A write plan (shared/executions/write-plan.ts) as the expressions of one conditional UpdateItem
// on an execution: what it sets, its change to the index of open calls, and its conditions.
import { defaultRetentionSeconds } from '../../executions/retention.js';
import { unsettledShard, type WritePlan } from '../../executions/write-plan.js';

/**
 * All of `conditions` (each one term, never an OR), and one term of each of `choices` (each a
 * small OR: an attribute absent or NULL, a list absent or of a size). Written out as conjunctions
 * joined by OR, one per combination, not as parenthesized ORs: the same condition to DynamoDB (AND
 * binds tighter than OR), and one the local store's expression parser reads in a fraction of the
 * time (a parenthesized group costs it about a third of a millisecond per write).
 */
export const conditionOf = (conditions: readonly string[], ...choices: readonly (readonly string[])[]): string =>
  choices
    .reduce<string[][]>(
      (combined, either) => combined.flatMap((terms) => either.map((term) => [...terms, term])),
      [[...conditions]],
    )
    .map((terms) => terms.join(' AND '))
    .join(' OR ');

/** A write plan as one UpdateCommand's expressions: its sets, its index change, and its conditions. */
export const updateOf = (plan: WritePlan) => {
  const names: Record<string, string> = { '#status': 'status' };
  const values: Record<string, unknown> = { ':expected_status': plan.conditions.status };
  const sets: string[] = [];
  for (const [field, value] of Object.entries(plan.sets)) {
    names[`#${field}`] = field;
    values[`:${field}`] = value;
    sets.push(`#${field} = :${field}`);
  }
  if (plan.historyEntry !== null) {
    values[':history_entry'] = [plan.historyEntry];
    sets.push('history = list_append(history, :history_entry)');
  }
  if (plan.retainFrom !== null) {
    values[':final_s'] = plan.retainFrom;
    values[':default_retention_s'] = defaultRetentionSeconds;
    sets.push('retain_until = :final_s + if_not_exists(retention_s, :default_retention_s)');
  }
  if (plan.openIndex.kind === 'due') {
    values[':open_until'] = plan.openIndex.until;
    sets.push('open_until = :open_until');
  }
  if (plan.openIndex.kind === 'unsettled') {
    values[':open_shard'] = unsettledShard;
    values[':open_until'] = plan.openIndex.since;
    sets.push('open_shard = :open_shard', 'open_until = :open_until');
  }
  const removes = plan.openIndex.kind === 'leave' ? ' REMOVE open_shard, open_until' : '';
  return {
    UpdateExpression: `SET ${sets.join(', ')}${removes}`,
    ConditionExpression: conditionsOf(plan.conditions, names, values),
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
  };
};

/** The plan's conditions as a condition expression, their names and values added to the given ones. */
const conditionsOf = (
  conditions: WritePlan['conditions'],
  names: Record<string, string>,
  values: Record<string, unknown>,
): string => {
  const terms = ['attribute_exists(execution_id)', '#status = :expected_status'];
  if (conditions.argumentsHash !== undefined) {
    values[':hash'] = conditions.argumentsHash;
    terms.push('arguments_hash = :hash');
  }
  if (conditions.expiresAfter !== undefined) {
    values[':now'] = conditions.expiresAfter;
    terms.push('expires_at > :now');
  }
  const choices: string[][] = [];
  if (conditions.approvalsGiven !== undefined) {
    // A record written before approvals were kept has no list: it holds none.
    values[':approvals_given'] = conditions.approvalsGiven;
    const sized = 'size(approvals) = :approvals_given';
    if (conditions.approvalsGiven === 0) choices.push(['attribute_not_exists(approvals)', sized]);
    else terms.push(sized);
  }
  if (conditions.unset !== undefined) {
    const unset = `#${conditions.unset}`;
    names[unset] = conditions.unset;
    values[':null'] = 'NULL';
    choices.push([`attribute_not_exists(${unset})`, `attribute_type(${unset}, :null)`]);
  }
  return conditionOf(terms, ...choices);
};
