// A call's record fits one store item whatever it holds: the largest arguments (64 KB canonical,
// with their sealed copy and the copy approvers are shown) beside the largest answer a system may
// be allowed (max_response_size's ceiling), stored in the local DynamoDB (dynalite, which enforces
// DynamoDB's 400 KB item limit); and an answer that grows past the room when kept never turns a
// sent write into unknown.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AesSealer } from '../../shared/adapters/aes-sealer.js';
import { newExecutionRecord } from '../../shared/executions/execution.js';
import {
  fitsRecord,
  maxRecordBytes,
  maxResponseSizeCeiling,
  recordBytes,
} from '../../shared/executions/record-size.js';
import { callTool } from '../../shared/use-cases/call-tool.js';
import { humanStep } from '../support/executions.js';
import { startTestStore, type TestStore } from '../support/local-store.js';
import { verifies } from '../support/requirements.js';
import { argumentsOf, procurementAgent, tools, useCaseBed } from '../support/use-case-bed.js';

const kb = 1024;
const text = (bytes: number, fill = 'x') => fill.repeat(bytes);

/** The largest record a held, approved and run write may leave, with an answer of `answerBytes`. */
const maximalRecord = async (answerBytes: number) => {
  // 64 KB of canonical arguments: a long visible field and a short secret, so the shown copy keeps
  // nearly all of it and the sealed copy holds all of it.
  const visible = text(64 * kb - 40);
  const canonical = JSON.stringify({ api_key: 'k', note: visible });
  expect(Buffer.byteLength(canonical)).toBeLessThanOrEqual(64 * kb);
  const sealed = JSON.parse(await new AesSealer(randomBytes(32)).seal(canonical, 'context'));
  // As KMS seals it: the data key, encrypted, travels with the value (some 250 characters; 1 KB here).
  const sealedArguments = JSON.stringify({ ...sealed, edk: randomBytes(768).toString('base64') });
  const at = new Date(0).toISOString();
  const long = (length: number) => text(length, 'p');
  return newExecutionRecord({
    execution_id: '01900000-0000-7000-8000-000000000000',
    agent_id: long(256),
    customer_id: long(256),
    agent_groups: Array.from({ length: 20 }, () => long(64)),
    tool: long(160),
    status: 'succeeded',
    access: 'write',
    created_at: at,
    arguments_json: JSON.stringify({ api_key: '[REDACTED]', note: visible }),
    arguments_hash: 'h'.repeat(64),
    sealed_arguments: sealedArguments,
    secret_pointers: ['/api_key'],
    decision: {
      effect: 'allow',
      reason: null,
      determining: Array.from({ length: 10 }, () => ({ name: long(128), file: long(256), line: 1 })),
      step: humanStep({ staff: long(128), customer: true }),
      config_version: long(128),
    },
    approval_url: long(512),
    trace_id: long(55),
    decided_by: long(256),
    decided_at: at,
    decision_note: long(1000),
    customer_confirmed_at: at,
    notified_at: at,
    expires_at: at,
    claimed_at: at,
    deadline_at: at,
    http_status: 201,
    latency_ms: 1,
    origin: {
      transport: 'grpc',
      server_id: long(256),
      request_id: long(256),
      request_uuid: long(36),
      trace_id: long(55),
      span_id: long(16),
      tenant: {
        bundle_id: long(256),
        feature_id: long(256),
        client_info: long(1024),
        automated_test_device_group: long(256),
      },
      server_cloudos_version: long(64),
    },
    history: [
      { status: 'pending_approval', at },
      { status: 'approved', at },
      { status: 'succeeded', at },
    ],
    // The answer as kept: parsed, redacted and serialized again (a string's text is kept as sent).
    result_json: JSON.stringify(text(answerBytes - 2)),
  });
};

describe('a record with the largest arguments and the largest answer', () => {
  let local: TestStore;
  beforeAll(async () => {
    local = await startTestStore();
  });
  afterAll(async () => {
    await local?.close();
  });

  it(
    verifies('deploy.stored-result-bounded', 'is stored whole in the local DynamoDB, within its 400 KB item limit'),
    async () => {
      const record = await maximalRecord(maxResponseSizeCeiling);
      expect(fitsRecord(record)).toBe(true);
      // Everything but the answer, measured: the ceiling leaves room to spare beside it.
      const others = recordBytes({ ...record, result_json: null });
      expect(others).toBeGreaterThan(150 * kb);
      expect(others + maxResponseSizeCeiling).toBeLessThan(maxRecordBytes - 32 * kb);
      expect(await local.store.create(record)).toEqual({ kind: 'created' });
      expect((await local.store.get(record.execution_id))?.result_json).toBe(record.result_json);
    },
  );

  it(
    verifies('deploy.stored-result-bounded', 'is refused by the store beyond the limit, which fitsRecord tells first'),
    async () => {
      const record = { ...(await maximalRecord(maxRecordBytes)), execution_id: '01900000-0000-7000-8000-000000000001' };
      expect(fitsRecord(record)).toBe(false);
      await expect(local.store.create(record)).rejects.toThrow(/size/i);
    },
  );
});

describe('an answer that outgrows the record when kept', () => {
  /** Numbers written short by the system and out in full when kept: 1e20 becomes 21 digits. */
  const growingAnswer = (): Buffer => {
    const count = Math.floor((maxResponseSizeCeiling - 2) / 5);
    return Buffer.from(`[${Array.from({ length: count }, () => '1e20').join(',')}]`);
  };

  it(
    verifies('deploy.stored-result-bounded', 'leaves a sent write succeeded without its answer, never unknown'),
    async () => {
      const bed = await useCaseBed();
      const answer = growingAnswer();
      expect(answer.length).toBeLessThanOrEqual(maxResponseSizeCeiling);
      bed.behaviour = {
        kind: 'answer',
        result: { kind: 'response', status: 201, contentType: 'application/json', body: answer },
      };
      const result = await callTool(
        bed.deps,
        procurementAgent,
        tools.create,
        argumentsOf({ vendor: 'acme', amount: '10' }),
      );
      expect(result).toMatchObject({ status: 'succeeded', result: null });
      const record = await bed.record(result.execution_id ?? '');
      expect(record).toMatchObject({ status: 'succeeded', result_json: 'null', http_status: 201 });
      expect(fitsRecord(record)).toBe(true);
    },
  );

  it(verifies('deploy.stored-result-bounded', 'fails a read as response_too_large'), async () => {
    const bed = await useCaseBed();
    bed.behaviour = {
      kind: 'answer',
      result: { kind: 'response', status: 200, contentType: 'application/json', body: growingAnswer() },
    };
    const result = await callTool(bed.deps, procurementAgent, tools.list, argumentsOf({ vendor: 'acme' }));
    expect(result).toMatchObject({ status: 'failed', code: 'response_too_large', result: null });
  });
});
