// Synthesizing the gateway stack for CDK assertion tests, and reading what it synthesized: each
// App is synthesized once, with esbuild bundling skipped ('aws:cdk:bundling-stacks': []) and the
// cdk-nag pack registered as app.ts does.
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import {
  App,
  CfnElement,
  type IPolicyValidationContext,
  type PolicyValidationPluginReport,
  Stack,
  Validations,
} from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { GatewayStack, type GatewayStackProps } from '../../infra/gateway-stack.js';

export type JsonObject = Record<string, unknown>;

export const isObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** IAM and CloudFormation accept one value or a list in many places. */
export const asList = (value: unknown): unknown[] => {
  if (Array.isArray(value)) return value;
  return value === undefined ? [] : [value];
};

/** The AwsSolutions pack, remembering what it reported each time the synthesis ran it. */
export class RecordingAwsSolutionsChecks extends AwsSolutionsChecks {
  readonly reports: PolicyValidationPluginReport[] = [];

  override validate(context: IPolicyValidationContext): PolicyValidationPluginReport {
    const report = super.validate(context);
    this.reports.push(report);
    return report;
  }
}

export interface Synthesized {
  readonly stack: GatewayStack;
  readonly template: Template;
  readonly nag: RecordingAwsSolutionsChecks;
  /** The parsed validation-report.json of the cloud assembly. */
  readonly validationReport: unknown;
  /** The text of each staged JSON file asset, by its S3 object key (`<hash>.json`). */
  readonly jsonAssets: ReadonlyMap<string, string>;
}

export const synthesize = (props?: GatewayStackProps): Synthesized => {
  const app = new App({
    context: {
      // No stack needs bundling: NodejsFunction does not run esbuild.
      'aws:cdk:bundling-stacks': [],
      // Keep the assembly and its validation report when findings exist, so the cdk-nag test
      // below names them instead of every test failing on a thrown synthesis.
      '@aws-cdk/core:failSynthOnValidationErrors': false,
    },
  });
  const stack = new GatewayStack(app, 'ApprovalGateway', props);
  const nag = new RecordingAwsSolutionsChecks(app);
  Validations.of(app).addPlugins(nag);
  if (stack.bundlingRequired) throw new Error('Bundling would run: the test app must skip esbuild.');
  const assembly = app.synth();
  const validationReport: unknown = JSON.parse(
    readFileSync(join(assembly.directory, 'validation-report.json'), 'utf8'),
  );
  const jsonAssets = new Map<string, string>();
  for (const name of readdirSync(assembly.directory)) {
    const staged = /^asset\.([0-9a-f]+\.json)$/.exec(name);
    if (staged?.[1] !== undefined) jsonAssets.set(staged[1], readFileSync(join(assembly.directory, name), 'utf8'));
  }
  const template = Template.fromStack(stack);
  // Everything needed is read: do not leave a temporary cloud assembly behind per run.
  rmSync(assembly.directory, { recursive: true, force: true });
  return { stack, template, nag, validationReport, jsonAssets };
};

export const child = <T extends IConstruct>(
  scope: IConstruct,
  id: string,
  type: abstract new (...args: never[]) => T,
): T => {
  const found = scope.node.findChild(id);
  if (!(found instanceof type)) throw new Error(`${scope.node.path}/${id} is not a ${type.name}`);
  return found;
};

export const logicalIdOf = (construct: IConstruct): string => {
  const cfn = construct instanceof CfnElement ? construct : construct.node.defaultChild;
  if (!(cfn instanceof CfnElement)) throw new Error(`${construct.node.path} has no CloudFormation element`);
  return Stack.of(construct).getLogicalId(cfn);
};

export const resourcesOf = (template: Template, type: string): Map<string, JsonObject> => {
  const found: Record<string, unknown> = template.findResources(type);
  const resources = new Map<string, JsonObject>();
  for (const [logicalId, resource] of Object.entries(found)) {
    if (!isObject(resource)) throw new Error(`${logicalId} is not an object`);
    resources.set(logicalId, resource);
  }
  return resources;
};

export const propertiesOf = (resource: JsonObject | undefined): JsonObject => {
  const properties = resource?.Properties;
  return isObject(properties) ? properties : {};
};

/** The properties of one resource of the template, by logical id. */
export const resourceProperties = (template: Template, logicalId: string): JsonObject => {
  const resources: Record<string, unknown> = template.toJSON().Resources ?? {};
  const resource = resources[logicalId];
  if (!isObject(resource)) throw new Error(`The template has no resource ${logicalId}`);
  return propertiesOf(resource);
};

/** The statements of the IAM policies attached to a role (by Ref in the policy's Roles). */
export const statementsForRole = (template: Template, roleLogicalId: string): JsonObject[] =>
  [...resourcesOf(template, 'AWS::IAM::Policy').values()]
    .map(propertiesOf)
    .filter((policy) => asList(policy.Roles).some((role) => isObject(role) && role.Ref === roleLogicalId))
    .flatMap((policy) => (isObject(policy.PolicyDocument) ? asList(policy.PolicyDocument.Statement) : []))
    .filter(isObject);

export const allStatements = (template: Template): JsonObject[] =>
  [...resourcesOf(template, 'AWS::IAM::Policy').values()]
    .map(propertiesOf)
    .flatMap((policy) => (isObject(policy.PolicyDocument) ? asList(policy.PolicyDocument.Statement) : []))
    .filter(isObject);

export const actionsOf = (statement: JsonObject): string[] =>
  asList(statement.Action).filter((action): action is string => typeof action === 'string');

/** Every (action, resource) a role is allowed, as comparable strings, for actions of one service. */
export const grantsOf = (template: Template, roleLogicalId: string, service: string): string[] =>
  statementsForRole(template, roleLogicalId)
    .flatMap((statement) => {
      if (statement.Effect !== 'Allow') throw new Error(`${roleLogicalId} has a statement that does not allow`);
      return actionsOf(statement)
        .filter((action) => action.startsWith(`${service}:`))
        .flatMap((action) => asList(statement.Resource).map((resource) => `${action} ${JSON.stringify(resource)}`));
    })
    .sort();

/** The variables of a Lambda function's environment. */
export const environmentOf = (template: Template, functionLogicalId: string): JsonObject => {
  const environment = resourceProperties(template, functionLogicalId).Environment;
  return isObject(environment) && isObject(environment.Variables) ? environment.Variables : {};
};

/** The AwsSolutions entries of the assembly's validation report (present only when it found something). */
export const awsSolutionsReports = (validationReport: unknown): JsonObject[] =>
  (isObject(validationReport) ? asList(validationReport.pluginReports) : [])
    .filter(isObject)
    .filter((report) => report.pluginName === 'AwsSolutions');

export const describeViolations = (violations: readonly unknown[]): string[] =>
  violations.filter(isObject).map((violation) => {
    const where = asList(violation.violatingResources ?? violation.violatingConstructs)
      .filter(isObject)
      .map((resource) => String(resource.constructPath));
    return `${String(violation.ruleName)} (${String(violation.severity)}) at ${where.join(', ')}`;
  });

/** What cdk-nag found in one synthesis, both as the pack reported it and as the assembly recorded it. */
export const nagFindings = ({ nag, validationReport }: Pick<Synthesized, 'nag' | 'validationReport'>) => ({
  runs: nag.reports.length,
  reported: describeViolations(nag.reports.flatMap((report) => report.violations)),
  recorded: describeViolations(awsSolutionsReports(validationReport).flatMap((report) => asList(report.violations))),
  failedPlugins: (isObject(validationReport) ? asList(validationReport.pluginReports) : [])
    .filter(isObject)
    .filter((report) => report.conclusion === 'failure')
    .map((report) => String(report.pluginName)),
});

/** The HTTP API's Lambda authorizers (payload 2.0; the WebSocket API's has no payload format), by logical id. */
export const httpAgentAuthorizers = (template: Template): Map<string, JsonObject> =>
  new Map(
    [...resourcesOf(template, 'AWS::ApiGatewayV2::Authorizer').entries()].filter(
      ([, resource]) => propertiesOf(resource).AuthorizerPayloadFormatVersion === '2.0',
    ),
  );

/** The properties of the resources of a type that belong to one API (by its logical id). */
export const ofApi = (template: Template, type: string, apiLogicalId: string): JsonObject[] =>
  [...resourcesOf(template, type).values()]
    .map(propertiesOf)
    .filter((properties) => isObject(properties.ApiId) && properties.ApiId.Ref === apiLogicalId);
