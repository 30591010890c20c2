// The gateway's ports: everything the domain asks of the world, in one list. Each is an interface
// defined beside the rule that needs it; adapters implement them for AWS (shared/adapters) and for
// the local runtime (infra/local), and tests give their own (test/support).
//
// | port                | what the domain asks                                   | AWS                       | local                         |
// | ------------------- | ------------------------------------------------------ | ------------------------- | ----------------------------- |
// | ExecutionStore      | keep each call's record, by single-item conditional writes | DynamoDB              | DynamoDB (dynalite)           |
// | ExecutionWrites     | wake a request waiting on a call when a write ends it  | none: nothing waits       | the store's writes, told      |
// | ConfigBundleStore   | keep the pushed configuration bundle, signed           | S3, a DynamoDB pointer, KMS | files, read directly        |
// | ControlPlane        | what may be offered now (catalog, policy, settings)    | the stored bundle         | the files, and MCP servers asked |
// | SystemClient        | send one HTTP request to a system, bounded             | node:http(s), kept alive  | node:http(s), kept alive      |
// | ToolServerClient    | run one tool on an MCP server (call-tool proxy or MCP) | ws, the MCP client        | ws, the MCP client            |
// | ApprovalRuns    | start a held call's approval run; hand it a decision   | Step Functions            | the same definition, run here |
// | Notifier            | tell approvers a call waits                            | EventBridge, webhooks     | log, webhooks                 |
// | Sealer              | encrypt secret arguments at rest                       | KMS data keys             | AES-256-GCM, local key        |
// | SessionSigner       | sign console sessions                                  | KMS HMAC key              | local key                     |
// | Clock, IdSource, Log | time, execution ids, structured logs                  | system, UUIDv7, Powertools | the same                     |

export type { ApprovalRuns } from './approvals/approval-runs.js';
export type { Notifier } from './approvals/notifier.js';
export type { Clock } from './clock.js';
export type { ConfigBundleStore } from './control-plane/bundle.js';
export type { ControlPlane } from './control-plane/control-plane.js';
export type { ExecutionWrites } from './executions/execution-writes.js';
export type { ExecutionStore } from './executions/store.js';
export type { IdSource } from './ids.js';
export type { SystemClient } from './invoke/system-client.js';
export type { ToolServerClient } from './invoke/tool-server.js';
export type { Log } from './log.js';
export type { Sealer } from './sealing.js';
export type { SessionSigner } from './sessions/session.js';
