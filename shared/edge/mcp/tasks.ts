// Held calls as MCP tasks, in the two wire dialects the gateway speaks: the experimental tasks of
// 2025-11-25 (task-augmented tools/call, tasks/get · result · list · cancel) and the tasks
// extension `io.modelcontextprotocol/tasks` on 2026-07-28 (server-directed, flat task objects,
// the final result inlined in tasks/get). A task is a view of one execution: its id is the
// execution id and its result is the same result object tools/call answers. Pure: no store here.
import type { CallToolResult } from '@modelcontextprotocol/server';
import type { Execution } from '../../executions/execution.js';
import { isErrorStatus } from '../../result.js';
import { executionCallToolResult } from '../tool-call/tool-result.js';

/** The extension's identifier (client and server capabilities, 2026-07-28). */
export const tasksExtensionId = 'io.modelcontextprotocol/tasks';

/** The `_meta` key a 2025-11-25 tasks/result answer names its task by. */
const relatedTaskMetaKey = 'io.modelcontextprotocol/related-task';

export type TaskDialect = '2025-11-25' | '2026-07-28';

export type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

/**
 * How often a client should poll, in ms. A decision is handed to the call's run at once, so the
 * client's next poll is the only wait after an approval (clients such as ext-tasks follow this to
 * the letter): a few seconds, one store read each, rather than the pace asked of agents that poll
 * get_execution_status by hand.
 */
export const taskPollIntervalMs = 5_000;

/**
 * The task's status. A call waiting for a person is `working` in both dialects: `input_required`
 * means the client itself owes input (an elicitation it answers through tasks/result or
 * tasks/update), which a staff approval is not. A withdrawn call is `cancelled`. The other final
 * outcomes differ by dialect: 2025-11-25 counts a tool result with isError as `failed`; the
 * extension keeps `failed` for JSON-RPC errors and reports every tool result as `completed`.
 */
export const taskStatusOf = (execution: Execution, dialect: TaskDialect): TaskStatus => {
  switch (execution.status) {
    case 'pending_approval':
    case 'approved':
      return 'working';
    case 'rejected':
      if (execution.code === 'withdrawn') return 'cancelled';
      return dialect === '2025-11-25' ? 'failed' : 'completed';
    default:
      return dialect === '2025-11-25' && isErrorStatus(execution.status) ? 'failed' : 'completed';
  }
};

export const isTerminalTaskStatus = (status: TaskStatus): boolean =>
  status === 'completed' || status === 'failed' || status === 'cancelled';

/** The 2025-11-25 `Task`: ttl and pollInterval in ms; ttl null (records are kept, not expired). */
export interface Task2025 {
  readonly taskId: string;
  readonly status: TaskStatus;
  readonly statusMessage?: string;
  readonly createdAt: string;
  readonly lastUpdatedAt: string;
  readonly ttl: number | null;
  readonly pollInterval: number;
}

/** The extension's `Task` (2026-07-28): the same fields, renamed with their unit. */
export interface Task2026 {
  readonly taskId: string;
  readonly status: TaskStatus;
  readonly statusMessage?: string;
  readonly createdAt: string;
  readonly lastUpdatedAt: string;
  readonly ttlMs: number | null;
  readonly pollIntervalMs: number;
}

const statusMessageOf = (execution: Execution): { statusMessage?: string } =>
  execution.message === null ? {} : { statusMessage: execution.message };

export const task2025 = (execution: Execution): Task2025 => ({
  taskId: execution.execution_id,
  status: taskStatusOf(execution, '2025-11-25'),
  ...statusMessageOf(execution),
  createdAt: execution.created_at,
  lastUpdatedAt: execution.updated_at,
  ttl: null,
  pollInterval: taskPollIntervalMs,
});

export const task2026 = (execution: Execution): Task2026 => ({
  taskId: execution.execution_id,
  status: taskStatusOf(execution, '2026-07-28'),
  ...statusMessageOf(execution),
  createdAt: execution.created_at,
  lastUpdatedAt: execution.updated_at,
  ttlMs: null,
  pollIntervalMs: taskPollIntervalMs,
});

/** The result the call answers, as tools/call would send it now. */
const taskResultOf = (execution: Execution): CallToolResult => executionCallToolResult(execution);

/** 2025-11-25 CreateTaskResult: the task wrapped in `task`. */
export const createTaskResult2025 = (execution: Execution): { readonly task: Task2025 } => ({
  task: task2025(execution),
});

/** 2026-07-28 CreateTaskResult: `Result & Task`, flat, discriminated by resultType. */
export const createTaskResult2026 = (execution: Execution): Task2026 & { readonly resultType: 'task' } => ({
  resultType: 'task',
  ...task2026(execution),
});

/**
 * 2026-07-28 tasks/get (DetailedTask): a completed task inlines the result tools/call would have
 * answered; working and cancelled tasks carry none. (No gateway task fails: see taskStatusOf.)
 */
export const detailedTask2026 = (execution: Execution): Task2026 & { readonly result?: CallToolResult } => {
  const task = task2026(execution);
  return task.status === 'completed' ? { ...task, result: taskResultOf(execution) } : task;
};

/** 2025-11-25 tasks/result of a final task: exactly the tools/call answer (its receipt kept), naming its task. */
export const taskPayload2025 = (execution: Execution): CallToolResult => {
  const answer = taskResultOf(execution);
  return { ...answer, _meta: { ...answer._meta, [relatedTaskMetaKey]: { taskId: execution.execution_id } } };
};
