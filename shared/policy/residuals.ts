// Reading what Cedar's partial evaluation leaves of a policy once the request's unknowns (the
// agent, the arguments) are set aside: whether the policy can still apply, or always applies.
// Cedar keeps conditions such as `principal in Group::"x" && false` unsimplified, so the
// constants are folded here; anything that still mentions an unknown may apply.
import type { PolicyJson } from '@cedar-policy/cedar-wasm/nodejs';
import { isJsonObject } from '../catalog/tool.js';

type Truth = true | false | 'unknown';

/** The value of a residual condition where constants decide it, else 'unknown'. */
const truthOf = (expr: unknown): Truth => {
  if (!isJsonObject(expr)) return 'unknown';
  const entries = Object.entries(expr);
  if (entries.length !== 1) return 'unknown';
  const [operator, operand] = entries[0] ?? ['', null];
  if (operator === 'Value') return typeof operand === 'boolean' ? operand : 'unknown';
  if (!isJsonObject(operand)) return 'unknown';
  if (operator === '!') {
    const inner = truthOf(operand.arg);
    return inner === 'unknown' ? inner : !inner;
  }
  if (operator === '&&' || operator === '||') {
    const left = truthOf(operand.left);
    const right = truthOf(operand.right);
    const decisive = operator === '||';
    if (left === decisive || right === decisive) return decisive;
    return left === 'unknown' || right === 'unknown' ? 'unknown' : !decisive;
  }
  if (operator === 'if-then-else') {
    const condition = truthOf(operand.if);
    if (condition === 'unknown') {
      const [then, otherwise] = [truthOf(operand.then), truthOf(operand.else)];
      return then === otherwise ? then : 'unknown';
    }
    return truthOf(condition ? operand.then : operand.else);
  }
  return 'unknown';
};

/** Each condition's value: a `when` must hold, an `unless` must not. */
const conditionTruths = (residual: PolicyJson): Truth[] =>
  residual.conditions.map((condition) => {
    const truth = truthOf(condition.body);
    return condition.kind === 'when' || truth === 'unknown' ? truth : !truth;
  });

/** Whether the policy may still apply for some value of the unknowns. */
export const mayApply = (residual: PolicyJson): boolean => conditionTruths(residual).every((truth) => truth !== false);

/** Whether the policy applies whatever the unknowns are. */
export const alwaysHolds = (residual: PolicyJson): boolean =>
  conditionTruths(residual).every((truth) => truth === true);
