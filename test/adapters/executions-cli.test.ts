// `npm run executions` as a process, against a real local store (dynalite): records written through
// the store adapter, then listed with each filter, page by page until the cursor ends, as a table
// and as JSON lines; sealed values and task tokens never printed; wrong input refused with exit 2.
// The store is read as an operator reads it: through a running gateway's store (its lock and its
// aws-config file), from a stopped gateway's folder, or at an endpoint.
//
// Long: one fixture of records serves every filter and both targets; each check is a run of the CLI.
import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeLocalAwsConfig } from '../../infra/local/aws-config-file.js';
import { type DataLock, lockDataFolder } from '../../infra/local/data-lock.js';
import { ensureTables, type LocalDynamoDb, localTableNames, startLocalDynamoDb } from '../../infra/local/dynamodb.js';
import { projectPath } from '../../infra/paths.js';
import { DynamoDbExecutionStore } from '../../shared/adapters/dynamodb/execution-store.js';
import { executionsTable } from '../../shared/adapters/dynamodb/tables.js';
import type { DecisionRecord, Execution } from '../../shared/executions/execution.js';
import { uuidV7Ids } from '../../shared/ids.js';
import { anExecution, humanStep } from '../support/executions.js';
import { quietLog } from '../support/logs.js';
import { verifies } from '../support/requirements.js';
import { temporaryFolder } from '../support/runtime-process.js';
import { type CollectedRun, runProcess } from '../support/spawn.js';

const hour = 3_600_000;
const sealed = 'SEALED-CIPHERTEXT-never-shown';
const taskToken = 'TASK-TOKEN-never-shown';

const decision = (effect: 'allow' | 'deny', policy: string, step: DecisionRecord['step'] = null): DecisionRecord => ({
  effect,
  reason: effect === 'deny' ? 'forbidden' : null,
  determining: [{ name: policy, file: 'policies.cedar', line: 1 }],
  step,
  config_version: 'v-audit',
});

/** What the fixture wrote, by name, and every record as it was written. */
interface Fixture {
  readonly rejected: Execution;
  readonly denied: Execution;
  readonly held: Execution;
  readonly all: Execution[];
}

/** Records of two agents over three days, through the real store adapter. */
const writeFixture = async (store: DynamoDbExecutionStore): Promise<Fixture> => {
  const now = Date.now();
  const ago = (ms: number) => new Date(now - ms).toISOString();
  const all: Execution[] = [];
  const put = async (execution: Execution) => {
    expect(await store.create(execution)).toEqual({ kind: 'created' });
    all.push(execution);
    return execution;
  };
  for (let index = 0; index < 7; index += 1) {
    await put(
      anExecution({
        agent_id: 'alpha-agent',
        tool: 'erp.orders.list',
        status: 'succeeded',
        created_at: ago(72 * hour - index * 60_000),
        decision: decision('allow', 'lookups'),
        arguments_json: '{"vendor":"acme"}',
      }),
    );
  }
  const waiting = await put(
    anExecution({
      agent_id: 'alpha-agent',
      tool: 'erp.orders.create',
      created_at: ago(48 * hour),
      decision: decision('allow', 'large-orders', humanStep({ staff: 'finance', customer: false })),
      arguments_json: '{"amount":"1500","api_key":"[REDACTED]"}',
      sealed_arguments: sealed,
      secret_pointers: ['/api_key'],
      task_token: taskToken,
    }),
  );
  const decidedAt = ago(47 * hour);
  const moved = await store.transition(waiting, {
    from: 'pending_approval',
    to: 'rejected',
    at: decidedAt,
    patch: { code: 'rejected', decided_by: 'farah', decided_at: decidedAt, decision_note: 'Budget frozen' },
  });
  if (moved.kind !== 'applied') throw new Error('the fixture could not reject its held call');
  const rejected = moved.execution;
  all.splice(all.indexOf(waiting), 1, rejected);
  const denied = await put(
    anExecution({
      agent_id: 'beta-agent',
      tool: 'erp.orders.create',
      status: 'denied',
      code: 'policy_denied',
      created_at: ago(hour),
      decision: decision('deny', 'positive-amounts'),
      arguments_json: '{"amount":"0"}',
    }),
  );
  const held = await put(
    anExecution({
      agent_id: 'beta-agent',
      tool: 'erp.orders.create',
      created_at: ago(hour / 2),
      decision: decision('allow', 'large-orders', humanStep({ staff: 'finance', customer: true })),
    }),
  );
  // An agent's places for held calls share the table: no listing shows them.
  await store.reservePending('beta-agent', held.execution_id, 10);
  return { rejected, denied, held, all };
};

const newestFirst = (records: readonly Execution[]): string[] =>
  [...records].sort((a, b) => (a.created_at < b.created_at ? 1 : -1)).map((record) => record.execution_id);

const cli = (args: readonly string[], environment: Record<string, string> = {}): Promise<CollectedRun> => {
  const {
    AWS_ACCESS_KEY_ID: _id,
    AWS_SECRET_ACCESS_KEY: _secret,
    AWS_SESSION_TOKEN: _token,
    AWS_PROFILE: _profile,
    ...inherited
  } = process.env;
  return runProcess(process.execPath, ['--import', 'tsx', projectPath('scripts/executions.ts'), ...args], {
    cwd: projectPath(),
    env: { ...inherited, AWS_SHARED_CREDENTIALS_FILE: '/nonexistent', AWS_CONFIG_FILE: '/nonexistent', ...environment },
  });
};

/** JSON lines of a run: the calls, and the cursor line if any. */
const jsonOf = (run: CollectedRun): { lines: Record<string, unknown>[]; next: string | undefined } => {
  expect(run.code, run.output).toBe(0);
  const parsed = run.stdout
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  const last = parsed.at(-1);
  const next = typeof last?.next_cursor === 'string' ? last.next_cursor : undefined;
  return { lines: next === undefined ? parsed : parsed.slice(0, -1), next };
};

const idsIn = (lines: readonly Record<string, unknown>[]): string[] => lines.map((line) => String(line.execution_id));

/** Every page, following the printed cursors to the end. */
const everyPage = async (args: readonly string[], limit: number): Promise<string[][]> => {
  const pages: string[][] = [];
  let cursor: string | undefined;
  do {
    const page = jsonOf(
      await cli([...args, '--json', '--limit', String(limit), ...(cursor ? ['--cursor', cursor] : [])]),
    );
    expect(page.lines.length).toBeLessThanOrEqual(limit);
    pages.push(idsIn(page.lines));
    cursor = page.next;
    if (pages.length > 20) throw new Error('the cursors never end');
  } while (cursor !== undefined);
  return pages;
};

/** STS on loopback, as the SDK reaches it through AWS_ENDPOINT_URL_STS: it answers who the caller is. */
const stsStandIn = async (arn: string): Promise<{ url: string; asked: string[]; close(): Promise<void> }> => {
  const asked: string[] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => {
      body += chunk.toString('utf8');
    });
    request.on('end', () => {
      asked.push(body);
      response.setHeader('content-type', 'text/xml');
      response.end(
        `<GetCallerIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><GetCallerIdentityResult><Arn>${arn}</Arn><UserId>AROAEXAMPLE:alice</UserId><Account>123456789012</Account></GetCallerIdentityResult><ResponseMetadata><RequestId>1</RequestId></ResponseMetadata></GetCallerIdentityResponse>`,
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the STS stand-in has no port');
  return {
    url: `http://127.0.0.1:${address.port}`,
    asked,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
};

describe('npm run executions', () => {
  let data: { path: string; remove(): Promise<void> };
  let dynamodb: LocalDynamoDb;
  let lock: DataLock;
  let fixture: Fixture;
  const local = () => ['--local', '--data-dir', data.path];

  beforeAll(async () => {
    // A gateway running on the folder, as `npm start` leaves it: the lock, the store, its aws-config.
    data = await temporaryFolder('gateway-executions-');
    lock = await lockDataFolder(data.path);
    dynamodb = await startLocalDynamoDb({ dataPath: join(data.path, 'dynamodb') });
    await ensureTables(dynamodb.client, [{ definition: executionsTable, tableName: localTableNames.executions }]);
    await writeLocalAwsConfig(join(data.path, 'aws-config'), {
      credentials: dynamodb.credentials,
      dynamodbEndpoint: dynamodb.endpoint,
      stepFunctionsEndpoint: 'http://127.0.0.1:9',
    });
    fixture = await writeFixture(new DynamoDbExecutionStore(dynamodb.documents, localTableNames.executions, quietLog));
  });
  afterAll(async () => {
    await dynamodb?.close();
    await lock?.release();
    await data?.remove();
  });

  it(
    verifies(
      'ops.executions-cli',
      'lists newest first through the running gateway: who asked, the decision and policies, who decided, the outcome',
    ),
    async () => {
      const run = await cli([...local(), '--agent', 'alpha-agent', '--limit', '3']);
      expect(run.code, run.output).toBe(0);
      const lines = run.stdout.split('\n');
      expect(lines[0]).toContain("the running gateway's store");
      expect(lines[1]).toMatch(
        /^CREATED\s+EXECUTION\s+AGENT\s+TOOL\s+STATUS\s+CODE\s+DECISION\s+POLICIES\s+DECIDED BY/,
      );
      const alpha = fixture.all.filter((record) => record.agent_id === 'alpha-agent');
      const shown = newestFirst(alpha).slice(0, 3);
      expect(lines.slice(2, 5).map((line) => line.split(/\s+/)[1])).toEqual(shown);
      const rejectedRow = lines.find((line) => line.includes(fixture.rejected.execution_id)) ?? '';
      expect(rejectedRow.split(/\s+/)).toEqual([
        fixture.rejected.created_at,
        fixture.rejected.execution_id,
        'alpha-agent',
        'erp.orders.create',
        'rejected',
        'rejected',
        'held:finance',
        'large-orders',
        'farah',
        fixture.rejected.decided_at,
        // No approvals kept on this record, and no escalation named.
        '-',
        '-',
      ]);
      expect(lines.at(-2)).toMatch(/^Next page: npm run executions -- <the same options> --cursor \S+$/);
      expect(run.output).not.toContain(sealed);
      expect(run.output).not.toContain(taskToken);
    },
  );

  it(
    verifies('ops.executions-cli', '--json: one object per line, the redacted arguments only, never a sealed value'),
    async () => {
      const { lines, next } = jsonOf(await cli([...local(), '--json', '--status', 'rejected']));
      expect(next).toBeUndefined();
      expect(lines).toEqual([
        expect.objectContaining({
          execution_id: fixture.rejected.execution_id,
          agent_id: 'alpha-agent',
          status: 'rejected',
          decision: 'held:finance',
          policies: ['large-orders'],
          config_version: 'v-audit',
          decided_by: 'farah',
          decided_at: fixture.rejected.decided_at,
          decision_note: 'Budget frozen',
          arguments_json: '{"amount":"1500","api_key":"[REDACTED]"}',
          sealed_fields: ['/api_key'],
          retain_until: expect.stringMatching(/^\d{4}-/),
        }),
      ]);
      const everything = await cli([...local(), '--json', '--limit', '1000']);
      expect(everything.output).not.toContain(sealed);
      expect(everything.output).not.toContain(taskToken);
      expect(everything.output).not.toMatch(/sealed_arguments|task_token|result_json/);
    },
  );

  it(verifies('ops.executions-cli', "pages through one agent's calls by the index until the cursor ends"), async () => {
    const pages = await everyPage([...local(), '--agent', 'alpha-agent'], 3);
    const alpha = fixture.all.filter((record) => record.agent_id === 'alpha-agent');
    expect(pages.flat()).toEqual(newestFirst(alpha));
    expect(pages.map((page) => page.length)).toEqual([3, 3, 2]);
  });

  it(
    verifies(
      ['ops.executions-cli', 'ops.executions-newest-first'],
      'pages through every call by the by-time index: newest first across pages, every call once, nothing else',
    ),
    async () => {
      const pages = await everyPage(local(), 4);
      expect(pages.flat()).toEqual(newestFirst(fixture.all));
    },
  );

  it(verifies('ops.executions-cli', 'filters by status, tool, agent and time, alone and together'), async () => {
    const ids = async (...args: string[]) => idsIn(jsonOf(await cli([...local(), '--json', ...args])).lines).sort();
    const idsOf = (records: readonly Execution[]) => records.map((record) => record.execution_id).sort();
    expect(await ids('--status', 'pending_approval')).toEqual([fixture.held.execution_id]);
    expect(await ids('--tool', 'erp.orders.create')).toEqual(idsOf([fixture.rejected, fixture.denied, fixture.held]));
    expect(await ids('--agent', 'beta-agent', '--status', 'denied')).toEqual([fixture.denied.execution_id]);
    expect(await ids('--since', '24h')).toEqual(idsOf([fixture.denied, fixture.held]));
    const since = new Date(Date.parse(fixture.rejected.created_at) - 1).toISOString();
    expect(await ids('--agent', 'alpha-agent', '--since', since)).toEqual([fixture.rejected.execution_id]);
    expect(await ids('--agent', 'alpha-agent', '--tool', 'erp.orders.list', '--since', since)).toEqual([]);
  });

  it(
    verifies(
      ['ops.executions-cli', 'ops.executions-own-only'],
      "refuses an unknown status, a bad time, a bad cursor and another agent's cursor, with exit 2",
    ),
    async () => {
      const status = await cli([...local(), '--status', 'done']);
      expect(status.code).toBe(2);
      expect(status.stderr).toContain(
        'unknown status "done": expected one of succeeded, failed, unknown, denied, pending_approval',
      );
      const since = await cli([...local(), '--since', 'yesterday']);
      expect(since.code).toBe(2);
      expect(since.stderr).toContain('cannot read the time "yesterday"');
      const limit = await cli([...local(), '--limit', '0']);
      expect(limit.code).toBe(2);
      const garbage = await cli([...local(), '--agent', 'beta-agent', '--cursor', 'bm90LWEtY3Vyc29y']);
      expect(garbage.code).toBe(2);
      expect(garbage.stderr).toContain('--cursor: The cursor is not one this listing gave out');
      // A cursor into alpha's calls does not open them to a listing of beta's.
      const { next } = jsonOf(await cli([...local(), '--json', '--agent', 'alpha-agent', '--limit', '1']));
      expect(next).toBeDefined();
      const crossed = await cli([...local(), '--json', '--agent', 'beta-agent', '--cursor', next ?? '']);
      expect(crossed.code).toBe(2);
      expect(crossed.stdout).toBe('');
    },
  );

  it(
    verifies('ops.executions-cli', 'reads a table at an endpoint, with credentials from the environment'),
    async () => {
      const run = await cli(['--endpoint', dynamodb.endpoint, '--json', '--agent', 'beta-agent'], {
        AWS_ACCESS_KEY_ID: dynamodb.credentials.accessKeyId,
        AWS_SECRET_ACCESS_KEY: dynamodb.credentials.secretAccessKey,
      });
      expect(idsIn(jsonOf(run).lines)).toEqual([fixture.held.execution_id, fixture.denied.execution_id]);
    },
  );

  it(
    verifies('ops.executions-cli', "reads a stopped gateway's folder under its lock, and gives the lock back"),
    async () => {
      const stopped = await temporaryFolder('gateway-executions-stopped-');
      try {
        const store = await startLocalDynamoDb({ dataPath: join(stopped.path, 'dynamodb') });
        await ensureTables(store.client, [{ definition: executionsTable, tableName: localTableNames.executions }]);
        const only = anExecution({ agent_id: 'gamma-agent', status: 'expired', code: 'approval_expired' });
        await new DynamoDbExecutionStore(store.documents, localTableNames.executions, quietLog).create(only);
        await store.close();
        const run = await cli(['--data-dir', stopped.path, '--json']);
        expect(idsIn(jsonOf(run).lines)).toEqual([only.execution_id]);
        expect(existsSync(join(stopped.path, 'runtime.lock'))).toBe(false);
        const missing = await cli(['--data-dir', join(stopped.path, `none-${uuidV7Ids.next()}`)]);
        expect(missing.code).toBe(1);
        expect(missing.stderr).toContain('No local store in');
      } finally {
        await stopped.remove();
      }
    },
  );
  // Last: it adds a call of its own agent, which the listings of every call above do not expect.
  it(
    verifies(
      ['settle.cli', 'settle.audit', 'settle.reason'],
      'settles an unknown call once, as the OS user locally and as the STS caller with --table, and tells every refusal by its exit',
    ),
    async () => {
      const store = new DynamoDbExecutionStore(dynamodb.documents, localTableNames.executions, quietLog);
      const unknown = anExecution({ agent_id: 'settle-agent', status: 'unknown', code: 'timeout' });
      await store.create(unknown);
      expect(await store.countUnsettled()).toBe(1);
      const settle = (...args: string[]) => cli(['settle', unknown.execution_id, ...local(), ...args]);

      const control = await settle('--outcome', 'succeeded', '--reason', 'two\nlines');
      expect([control.code, control.stderr]).toEqual([2, expect.stringContaining('control characters')]);

      const done = await settle('--outcome', 'succeeded', '--reason', 'PO-9 is in the ERP');
      expect(done.code, done.output).toBe(0);
      expect(done.stdout).toContain(`Settled execution ${unknown.execution_id} as succeeded by ${userInfo().username}`);
      expect(await store.countUnsettled()).toBe(0);

      const again = await settle('--outcome', 'failed', '--reason', 'second look');
      expect([again.code, again.stderr]).toEqual([
        5,
        expect.stringContaining(`settled already as succeeded by ${userInfo().username}`),
      ]);
      const notUnknown = await cli([
        'settle',
        fixture.held.execution_id,
        ...local(),
        '--outcome',
        'failed',
        '--reason',
        'x',
      ]);
      expect([notUnknown.code, notUnknown.stderr]).toEqual([
        4,
        expect.stringContaining('pending_approval, not unknown'),
      ]);
      const missing = await cli(['settle', uuidV7Ids.next(), ...local(), '--outcome', 'failed', '--reason', 'x']);
      expect([missing.code, missing.stderr]).toEqual([3, expect.stringContaining('No execution')]);

      // A deployed table, with the operator's AWS credentials: recorded as their ARN, as STS answers it.
      const deployed = anExecution({ agent_id: 'settle-agent', status: 'unknown', code: 'timeout' });
      await store.create(deployed);
      const operatorArn = 'arn:aws:sts::123456789012:assumed-role/operations/alice';
      const sts = await stsStandIn(operatorArn);
      try {
        const table = ['--table', localTableNames.executions, '--region', 'eu-west-1'];
        const remote = await cli(
          ['settle', deployed.execution_id, ...table, '--outcome', 'failed', '--reason', 'none'],
          {
            AWS_ACCESS_KEY_ID: dynamodb.credentials.accessKeyId,
            AWS_SECRET_ACCESS_KEY: dynamodb.credentials.secretAccessKey,
            AWS_ENDPOINT_URL_DYNAMODB: dynamodb.endpoint,
            AWS_ENDPOINT_URL_STS: sts.url,
          },
        );
        expect(remote.code, remote.output).toBe(0);
        expect(remote.stdout).toContain(`as failed by ${operatorArn}`);
        expect(sts.asked).toEqual(['Action=GetCallerIdentity&Version=2011-06-15']);
      } finally {
        await sts.close();
      }

      const [line] = jsonOf(await cli([...local(), '--json', '--agent', 'settle-agent'])).lines.filter(
        (listed) => listed.execution_id === unknown.execution_id,
      );
      expect(line).toMatchObject({
        status: 'succeeded',
        history: [{ status: 'unknown' }, { status: 'succeeded' }],
        settlement: {
          outcome: 'succeeded',
          by: userInfo().username,
          reason: 'PO-9 is in the ERP',
          unknown_code: 'timeout',
        },
      });
      const table = await cli([...local(), '--agent', 'settle-agent']);
      expect(table.stdout).toContain('succeeded(settled)');
    },
  );
});
