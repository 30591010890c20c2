// Which policies may apply to a tool for some agent and some arguments: Cedar's partial
// evaluation with both unknown, then what it leaves of each policy read. Cedar keeps conditions
// such as `principal in Group::"x" && false` unsimplified, so the constants are folded here;
// anything that still mentions an unknown may apply.
import type { PolicyJson } from '@cedar-policy/cedar-wasm/nodejs';
import * as cedar from '@cedar-policy/cedar-wasm/nodejs';
import type { CatalogTool } from '../catalog/tool.js';
import { isJsonObject } from '../catalog/tool.js';
import { actionEntityOf, entityTypes } from './cedar-schema.js';
import type { CompiledPolicies, PolicyInfo } from './policy-set.js';

/** The policies that may apply to a tool for some agent and some arguments. */
export interface ToolReach {
  readonly permits: readonly PolicyInfo[];
  readonly forbids: readonly PolicyInfo[];
  /** Forbids that hold for every agent and every arguments. */
  readonly alwaysForbidden: readonly PolicyInfo[];
}

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
const mayApply = (residual: PolicyJson): boolean => conditionTruths(residual).every((truth) => truth !== false);

/** Whether the policy applies whatever the unknowns are. */
const alwaysHolds = (residual: PolicyJson): boolean => conditionTruths(residual).every((truth) => truth === true);

/** The policies that may apply to a tool, with the agent and the arguments unknown. */
export const toolReach = (tool: CatalogTool, compiled: CompiledPolicies): ToolReach => {
  const answer = cedar.isAuthorizedPartial({
    principal: null,
    action: { type: 'Action', id: tool.name },
    resource: { type: entityTypes.system, id: tool.systemKey },
    context: { arguments: { __extn: { fn: 'unknown', arg: 'arguments' } } },
    entities: [actionEntityOf(tool)],
    policies: { staticPolicies: compiled.texts },
    validateRequest: false,
  });
  // Not analysable: every policy may apply, so nothing is reported unreachable.
  const every = [...compiled.policies.values()];
  if (answer.type === 'failure') {
    return {
      permits: every.filter((policy) => policy.effect === 'permit'),
      forbids: every.filter((policy) => policy.effect === 'forbid'),
      alwaysForbidden: [],
    };
  }
  const { residuals } = answer.response;
  const applying = every.filter((policy) => {
    const residual = residuals[policy.id];
    return residual === undefined || mayApply(residual);
  });
  return {
    permits: applying.filter((policy) => policy.effect === 'permit'),
    forbids: applying.filter((policy) => policy.effect === 'forbid'),
    alwaysForbidden: applying.filter((policy) => {
      const residual = residuals[policy.id];
      return policy.effect === 'forbid' && residual !== undefined && alwaysHolds(residual);
    }),
  };
};
