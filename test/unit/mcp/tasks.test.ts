// The task view of an execution in both dialects: every execution status mapped to a task status,
// the task object's fields, and the result a final task carries (the tools/call answer itself).
import { describe, expect, it } from 'vitest';
import {
  createTaskResult2025,
  createTaskResult2026,
  detailedTask2026,
  task2025,
  task2026,
  taskPayload2025,
  taskPollIntervalMs,
  taskStatusOf,
} from '../../../shared/edge/mcp/tasks.js';
import { toCallToolResult } from '../../../shared/edge/mcp/tool-result.js';
import type { Execution } from '../../../shared/executions/execution.js';
import { toResultObject } from '../../../shared/executions/execution.js';
import { executionStatuses } from '../../../shared/result.js';
import { anExecution } from '../../support/executions.js';
import { verifies } from '../../support/requirements.js';

const withStatus = (status: Execution['status'], code: Execution['code'] = null): Execution =>
  anExecution({ status, code, message: status === 'pending_approval' ? 'Waiting for approval.' : null });

describe('the task status of an execution', () => {
  it(verifies('mcp.tasks-get-mapping', 'maps every execution status, in both dialects'), () => {
    const table = Object.fromEntries(
      executionStatuses.map((status) => [
        status,
        [taskStatusOf(withStatus(status), '2025-11-25'), taskStatusOf(withStatus(status), '2026-07-28')],
      ]),
    );
    expect(table).toEqual({
      pending_approval: ['working', 'working'],
      approved: ['working', 'working'],
      succeeded: ['completed', 'completed'],
      // 2025-11-25: a tool result with isError is a failed task; the extension keeps failed for JSON-RPC errors.
      failed: ['failed', 'completed'],
      unknown: ['failed', 'completed'],
      denied: ['failed', 'completed'],
      rejected: ['failed', 'completed'],
      expired: ['failed', 'completed'],
    });
  });

  it(verifies('mcp.tasks-cancel', 'shows a withdrawn call as cancelled in both dialects'), () => {
    const withdrawn = withStatus('rejected', 'withdrawn');
    expect(taskStatusOf(withdrawn, '2025-11-25')).toBe('cancelled');
    expect(taskStatusOf(withdrawn, '2026-07-28')).toBe('cancelled');
    expect(detailedTask2026(withdrawn)).not.toHaveProperty('result');
  });
});

describe('the task object', () => {
  const held = anExecution({
    status: 'pending_approval',
    message: 'Waiting for approval by the organization.',
    created_at: '2026-12-01T04:00:00.000Z',
    updated_at: '2026-12-01T04:00:00.000Z',
  });

  it(verifies('mcp.tasks-held-call', 'names the task by the execution id, with the 2025-11-25 field names'), () => {
    expect(createTaskResult2025(held)).toEqual({
      task: {
        taskId: held.execution_id,
        status: 'working',
        statusMessage: 'Waiting for approval by the organization.',
        createdAt: '2026-12-01T04:00:00.000Z',
        lastUpdatedAt: '2026-12-01T04:00:00.000Z',
        ttl: null,
        pollInterval: taskPollIntervalMs,
      },
    });
    expect(task2025(held)).toEqual(createTaskResult2025(held).task);
  });

  it(verifies('mcp.tasks-held-call', 'is flat and discriminated in 2026-07-28, with ttlMs and pollIntervalMs'), () => {
    const created = createTaskResult2026(held);
    expect(created).toEqual({
      resultType: 'task',
      taskId: held.execution_id,
      status: 'working',
      statusMessage: 'Waiting for approval by the organization.',
      createdAt: '2026-12-01T04:00:00.000Z',
      lastUpdatedAt: '2026-12-01T04:00:00.000Z',
      ttlMs: null,
      pollIntervalMs: taskPollIntervalMs,
    });
    for (const absent of ['task', 'ttl', 'pollInterval', 'result', 'error', 'inputRequests', 'requestState']) {
      expect(created).not.toHaveProperty(absent);
    }
    const { resultType: _discriminator, ...task } = created;
    expect(task2026(held)).toEqual(task);
    expect(detailedTask2026(held)).not.toHaveProperty('result');
  });

  it(verifies('mcp.tasks-poll-interval', 'suggests polling every 5 s in both dialects'), () => {
    expect(task2025(held).pollInterval).toBe(5_000);
    expect(task2026(held).pollIntervalMs).toBe(5_000);
  });

  it(
    verifies(
      'mcp.tasks-get-mapping',
      'carries the tools/call answer itself once final, and no message while it has none',
    ),
    () => {
      const done = anExecution({
        status: 'succeeded',
        message: null,
        result_json: JSON.stringify({ id: 'PO-1' }),
        updated_at: new Date(Date.now() + 5_000).toISOString(),
      });
      const answer = toCallToolResult(toResultObject(done));
      const detailed = detailedTask2026(done);
      expect(detailed).toMatchObject({ status: 'completed', result: answer, lastUpdatedAt: done.updated_at });
      expect(detailed).not.toHaveProperty('statusMessage');
      expect(taskPayload2025(done)).toEqual({
        ...answer,
        _meta: { 'io.modelcontextprotocol/related-task': { taskId: done.execution_id } },
      });
      const refused = anExecution({
        status: 'rejected',
        code: 'rejected',
        message: 'An approver rejected the call; nothing ran.',
      });
      expect(detailedTask2026(refused)).toMatchObject({
        status: 'completed',
        statusMessage: 'An approver rejected the call; nothing ran.',
        result: { isError: true, structuredContent: { status: 'rejected', code: 'rejected' } },
      });
    },
  );
});
