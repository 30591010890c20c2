// What the functions' bundles put in place of the MCP server SDK's Node shims: the same exports,
// with the SDK's interpreting JSON Schema validator (no code generation, no second copy of ajv)
// as the default. The gateway validates agents' arguments itself; the SDK's validator is used
// only for what the SDK checks on its own (elicitation answers, output schemas).
import process from 'node:process';

export { CfWorkerJsonSchemaValidator as DefaultJsonSchemaValidator } from '@modelcontextprotocol/server/validators/cf-worker';
export { process };
