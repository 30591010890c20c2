// Each function's role in the template, as IAM would evaluate it for the calls the harness
// recorded: the Allow statements of the policies attached to the role (and its inline ones),
// actions and resources matched with IAM's wildcards (`*` any run of characters, `?` one; actions
// case-insensitively), resources resolved to the stand-ins' names as the functions' environment
// is. Conditions are not evaluated (the stack's function roles carry none); a Deny, NotAction or
// NotResource is refused as something this check does not read.
import { type Assembly, isJson } from './assembly.js';
import type { RecordedCall } from './recording-proxy.js';

const asList = (value: unknown): unknown[] => (Array.isArray(value) ? value : value === undefined ? [] : [value]);

export interface Grant {
  readonly action: string;
  readonly resource: string;
  /** The policy resource (or `<role>.Policies`) the statement is in. */
  readonly policy: string;
}

const wildcard = (pattern: string, flags = ''): RegExp =>
  new RegExp(
    `^${pattern
      .split('')
      .map((character) =>
        character === '*' ? '.*' : character === '?' ? '.' : character.replace(/[.+^${}()|[\]\\]/g, '\\$&'),
      )
      .join('')}$`,
    flags,
  );

export const actionMatches = (granted: string, action: string): boolean => wildcard(granted, 'i').test(action);
export const resourceMatches = (granted: string, resource: string): boolean => wildcard(granted).test(resource);

/** The role a function's Role property names (Fn::GetAtt [role, Arn]). */
export const roleOf = (assembly: Assembly, functionLogicalId: string): string => {
  const role = assembly.template.Resources[functionLogicalId]?.Properties.Role;
  const target = isJson(role) ? role['Fn::GetAtt'] : undefined;
  if (!Array.isArray(target) || typeof target[0] !== 'string')
    throw new Error(`${functionLogicalId} names its role in a form this check does not read`);
  return target[0];
};

/** Every (action, resource) the role's Allow statements grant, resolved. */
export const grantsOfRole = (
  assembly: Assembly,
  roleLogicalId: string,
  resolve: (value: unknown, where: string) => string,
): Grant[] => {
  const documents: [string, unknown][] = [];
  const role = assembly.template.Resources[roleLogicalId];
  for (const policy of asList(role?.Properties.Policies).filter(isJson)) {
    documents.push([`${roleLogicalId}.Policies`, policy.PolicyDocument]);
  }
  for (const [logicalId, resource] of Object.entries(assembly.template.Resources)) {
    if (resource.Type !== 'AWS::IAM::Policy') continue;
    if (!asList(resource.Properties.Roles).some((ref) => isJson(ref) && ref.Ref === roleLogicalId)) continue;
    documents.push([logicalId, resource.Properties.PolicyDocument]);
  }
  return documents.flatMap(([policy, document]) =>
    asList(isJson(document) ? document.Statement : undefined)
      .filter(isJson)
      .flatMap((statement, index) => {
        const where = `${policy}.Statement[${index}]`;
        if (statement.Effect !== 'Allow' || 'NotAction' in statement || 'NotResource' in statement) {
          throw new Error(`${where}: only Allow statements with Action and Resource are read`);
        }
        const resources = asList(statement.Resource).map((resource) => resolve(resource, `${where}.Resource`));
        return asList(statement.Action).flatMap((action) =>
          resources.map((resource) => ({ action: String(action), resource, policy })),
        );
      }),
  );
};

export interface PermissionReport {
  /** Calls no grant of the caller's role allows, each as a sentence. */
  readonly denied: string[];
  /** Granted actions no recorded call used, as `<function> <action> <resource>`. */
  readonly unused: string[];
}

/**
 * Checks recorded calls against the callers' roles. `grants` maps a function's logical id to its
 * role's grants; calls by other callers (the operator) are not checked.
 */
export const checkCalls = (
  calls: readonly RecordedCall[],
  grants: ReadonlyMap<string, readonly Grant[]>,
  ignoredActions: (action: string) => boolean,
): PermissionReport => {
  const denied = new Set<string>();
  const used = new Set<Grant>();
  for (const call of calls) {
    const granted = grants.get(call.caller);
    if (granted === undefined) continue;
    const allowing = granted.filter(
      (grant) => actionMatches(grant.action, call.action) && resourceMatches(grant.resource, call.resource),
    );
    if (allowing.length === 0)
      denied.add(`${call.caller} called ${call.action} on ${call.resource}, which its role does not allow`);
    for (const grant of allowing) used.add(grant);
  }
  const unused = [...grants].flatMap(([caller, list]) =>
    list
      .filter((grant) => !used.has(grant) && !ignoredActions(grant.action))
      .map((grant) => `${caller} ${grant.action} ${grant.resource}`),
  );
  return { denied: [...denied], unused: [...new Set(unused)].sort() };
};
