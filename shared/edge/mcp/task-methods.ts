// The tasks methods on the gateway's MCP server, per dialect (see tasks.ts for the shapes). The
// SDK has no server-side tasks, so the methods are registered with their own params schemas and
// answered from the execution store: 2025-11-25 gets tasks/get · result · list · cancel, the
// 2026-07-28 extension gets tasks/get · cancel · update (its removed tasks/result and tasks/list
// are answered -32601 by the SDK, which knows they left that revision).
import {
  MissingRequiredClientCapabilityError,
  ProtocolError,
  ProtocolErrorCode,
  type RequestId,
  type Result,
  type Server,
  type ServerContext,
} from '@modelcontextprotocol/server';
import * as z from 'zod';
import type { AgentIdentity } from '../../auth/agent.js';
import type { Execution } from '../../executions/execution.js';
import { jsonRpcCodes } from '../../json-rpc-codes.js';
import type { ResultObject } from '../../result.js';
import {
  findOwnCall,
  listOwnCalls,
  ownCallOnceFinal,
  type WaitingDeps,
  type WithdrawDeps,
  withdrawCall,
} from '../../use-cases/tasks.js';
import {
  createTaskResult2025,
  createTaskResult2026,
  detailedTask2026,
  isTerminalTaskStatus,
  type TaskDialect,
  task2025,
  taskPayload2025,
  taskStatusOf,
  tasksExtensionId,
} from './tasks.js';

/**
 * Declared in both revisions: 2025-11-25 reads `tasks` (list, cancel, task-augmented tools/call),
 * 2026-07-28 reads `extensions` (the SDK's 2026 codec drops the older `tasks` slot from discover).
 */
export const tasksCapabilities = {
  tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
  extensions: { [tasksExtensionId]: {} },
};

/** Task answers to tools/call, by JSON-RPC id, waiting for the server's seam (see server.ts). */
export type TaskAnswers = Map<RequestId, Result>;

export const taskAnswerFor = (answers: TaskAnswers, id: RequestId): Result | undefined => {
  const answer = answers.get(id);
  answers.delete(id);
  return answer;
};

/**
 * How long tasks/result (2025-11-25) waits for a task still working before it answers -32000,
 * where waiting is free (the local runtime, woken by the call's writes; in AWS it answers at once,
 * see ownCallOnceFinal): the spec has it block until the task ends, which a person's decision
 * outlasts; this stays inside API Gateway's 30 s integration timeout. The client asks again or
 * polls tasks/get.
 */
export const taskResultWaitMs = 20_000;

/** What the task methods use: withdrawing a call, and waiting on one where that costs nothing. */
type TaskDeps = WithdrawDeps & WaitingDeps;

/** Whether tasks/result (2025-11-25) answers the result: the task is completed, failed or cancelled. */
export const isFinal2025 = (execution: Execution): boolean =>
  isTerminalTaskStatus(taskStatusOf(execution, '2025-11-25'));

const TaskParams = z.object({ taskId: z.string() });
const ListParams = z.object({ cursor: z.string().optional() });
const UpdateParams = z.object({ taskId: z.string(), inputResponses: z.record(z.string(), z.unknown()).optional() });

/** The per-request client capabilities (2026-07-28 envelope), as far as the extension is concerned. */
const Envelope = z.object({
  'io.modelcontextprotocol/clientCapabilities': z.object({
    extensions: z.record(z.string(), z.unknown()).optional(),
  }),
});

/** Whether a request's per-request envelope (2026-07-28: its params._meta) declares the tasks extension. */
export const envelopeDeclaresTasks = (envelope: unknown): boolean => {
  const declared = Envelope.safeParse(envelope);
  return (
    declared.success &&
    declared.data['io.modelcontextprotocol/clientCapabilities'].extensions?.[tasksExtensionId] !== undefined
  );
};

/** Whether this request's client declared the tasks extension (2026-07-28: per request). */
const declaresTasks = (ctx: ServerContext): boolean => envelopeDeclaresTasks(ctx.mcpReq.envelope);

const requireTasksExtension = (ctx: ServerContext): void => {
  if (!declaresTasks(ctx)) {
    throw new MissingRequiredClientCapabilityError(
      { requiredCapabilities: { extensions: { [tasksExtensionId]: {} } } },
      `Declare the ${tasksExtensionId} extension in this request's client capabilities to use tasks.`,
    );
  }
};

/** Unknown ids, malformed ids and other agents' ids: one answer (the spec's -32602). */
const taskNotFound = (): ProtocolError =>
  new ProtocolError(ProtocolErrorCode.InvalidParams, 'Failed to retrieve task: Task not found');

const ownTask = async (deps: WithdrawDeps, agent: AgentIdentity, taskId: string): Promise<Execution> => {
  const execution = await findOwnCall(deps, agent, taskId);
  if (execution === undefined) throw taskNotFound();
  return execution;
};

/**
 * The task a tools/call answers instead of its result, or null for the plain result. 2025-11-25:
 * whenever the request asked (`params.task`) and the call was recorded (a task-augmented request
 * is answered by a task, already final when the call ran at once or was refused). 2026-07-28:
 * only for a call held for a person, to a client that declared the extension on this request (the
 * server decides; a call that ends at once answers its result, as the extension allows).
 */
export const createdTask = async (
  deps: WithdrawDeps,
  agent: AgentIdentity,
  dialect: TaskDialect,
  request: { readonly asked: boolean; readonly ctx: ServerContext },
  result: ResultObject,
): Promise<Result | null> => {
  if (result.execution_id === null) return null;
  if (dialect === '2025-11-25' ? !request.asked : result.status !== 'pending_approval' || !declaresTasks(request.ctx)) {
    return null;
  }
  // Read back from the store: the task exists (a tasks/get for it resolves) before it is answered.
  const execution = await findOwnCall(deps, agent, result.execution_id);
  if (execution === undefined) return null;
  return dialect === '2025-11-25' ? { ...createTaskResult2025(execution) } : { ...createTaskResult2026(execution) };
};

const tooLateMessage = (execution: Execution): string =>
  `Cannot cancel task: the call is ${execution.status} already${execution.status === 'approved' ? ' and runs' : ''}; only a call still waiting for a decision can be withdrawn.`;

const register2025 = (server: Server, deps: TaskDeps, agent: AgentIdentity): void => {
  server.setRequestHandler('tasks/get', { params: TaskParams }, async ({ taskId }) => ({
    ...task2025(await ownTask(deps, agent, taskId)),
  }));

  // At most two reads, never a loop: waiting on a person is the client's, at tasks/get's interval.
  server.setRequestHandler('tasks/result', { params: TaskParams }, async ({ taskId }, ctx) => {
    const wait = { signal: ctx.mcpReq.signal, limitMs: taskResultWaitMs };
    const execution = await ownCallOnceFinal(deps, agent, taskId, isFinal2025, wait);
    if (execution === undefined) throw taskNotFound();
    if (isFinal2025(execution)) return taskPayload2025(execution);
    throw new ProtocolError(
      jsonRpcCodes.serverError,
      'The task is still working (a person has not decided yet). Poll tasks/get at its pollInterval and call tasks/result once it is final.',
    );
  });

  server.setRequestHandler('tasks/list', { params: ListParams }, async ({ cursor }) => {
    const listed = await listOwnCalls(deps, agent, cursor);
    if (listed.kind === 'invalid_cursor') {
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'Invalid cursor: use a nextCursor from tasks/list.');
    }
    const { items, next } = listed.page;
    return { tasks: items.map(task2025), ...(next === undefined ? {} : { nextCursor: next }) };
  });

  server.setRequestHandler('tasks/cancel', { params: TaskParams }, async ({ taskId }) => {
    const withdrawn = await withdrawCall(deps, agent, taskId);
    if (withdrawn.kind === 'not_found') throw taskNotFound();
    if (withdrawn.kind === 'too_late')
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, tooLateMessage(withdrawn.execution));
    return { ...task2025(withdrawn.execution) };
  });
};

const register2026 = (server: Server, deps: WithdrawDeps, agent: AgentIdentity): void => {
  server.setRequestHandler('tasks/get', { params: TaskParams }, async ({ taskId }, ctx) => {
    requireTasksExtension(ctx);
    return { ...detailedTask2026(await ownTask(deps, agent, taskId)) };
  });

  // An acknowledgement, whatever happened: cancellation is cooperative in the extension. A call
  // already decided stays as it is, which the next tasks/get shows; only an unknown id is an error.
  server.setRequestHandler('tasks/cancel', { params: TaskParams }, async ({ taskId }, ctx) => {
    requireTasksExtension(ctx);
    if ((await withdrawCall(deps, agent, taskId)).kind === 'not_found') throw taskNotFound();
    return {};
  });

  // A gateway task never asks the client for input, so there is nothing to update: acknowledged.
  server.setRequestHandler('tasks/update', { params: UpdateParams }, async (_params, ctx) => {
    requireTasksExtension(ctx);
    return {};
  });
};

export const registerTaskMethods = (
  server: Server,
  deps: TaskDeps,
  agent: AgentIdentity,
  dialect: TaskDialect,
): void => (dialect === '2025-11-25' ? register2025(server, deps, agent) : register2026(server, deps, agent));
