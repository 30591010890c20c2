// The bench's floor for the held reply, on the local runtime in this process (its store and its Step
// Functions endpoint): each of the bench's held calls is held, not joined to the last, and the floor
// makes the requests the gateway's hold makes on the way to its reply, writes a record of the same
// size, and leaves nothing waiting once the bench has rejected the open calls.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callerOf, callOnce, heldCallTarget, portOf, waitFor } from '../../bench/bed.js';
import { startRuntime, unlimitedDemo } from '../../bench/demo-runtime.js';
import { rejectOpenCalls, startHeldFloor } from '../../bench/held-calls.js';
import { HeldPathTrace } from '../../bench/held-path.js';
import { bodyNumberer, type Target } from '../../bench/load.js';
import type { LocalRuntime } from '../../infra/local/runtime.js';
import { verifies } from '../support/requirements.js';

describe("the bench's minimal held server", () => {
  let org: Awaited<ReturnType<typeof unlimitedDemo>>;
  let runtime: LocalRuntime;
  let floor: Awaited<ReturnType<typeof startHeldFloor>>;
  const numbered = bodyNumberer();

  beforeAll(async () => {
    org = await unlimitedDemo();
    // Nothing here runs a call: the held calls never reach the ERP.
    runtime = await startRuntime(org.config, 'http://127.0.0.1:9');
    floor = await startHeldFloor({ runtime, call: callerOf(runtime.baseUrl) });
  });
  afterAll(async () => {
    await floor?.close();
    await runtime?.stop();
    await org?.remove();
  });

  /** One call of the load to `target`, traced at its server: its result and the path's marks. */
  const tracedCall = async (target: Target) => {
    const trace = new HeldPathTrace(portOf(target.origin));
    try {
      return { result: await callOnce(target, numbered(target)), paths: trace.paths };
    } finally {
      trace.close();
    }
  };

  /** The record once its approval run has registered and notified (the same later writes on both sides). */
  const registered = (executionId: string | null) =>
    waitFor(
      () => runtime.store.get(executionId ?? ''),
      (execution) => execution?.notified_at != null,
      10_000,
    );

  it(
    verifies(
      'perf.held-reply-floor',
      "holds each numbered call, and the floor makes the gateway's key, place, record and run start",
    ),
    async () => {
      const gatewayTarget = heldCallTarget('gateway (held)', 'the runtime', runtime.baseUrl);
      const calls = [await tracedCall(gatewayTarget), await tracedCall(gatewayTarget), await tracedCall(floor.target)];
      for (const { result, paths } of calls) {
        expect(result.status).toBe('pending_approval');
        // Each made all four requests on the way (the trace keeps only such calls), the key first.
        expect(paths).toHaveLength(1);
        expect(paths[0]?.keySent).not.toBeNull();
      }
      const [first, second, floorCall] = calls.map(({ result }) => result.execution_id);
      // The second call is held on its own, not joined to the first still waiting.
      expect(second).not.toBe(first);
      const gatewayRecord = await registered(second ?? null);
      const floorRecord = await registered(floorCall ?? null);
      expect(floorRecord?.agent_id).not.toBe(gatewayRecord?.agent_id);
      expect(Buffer.byteLength(JSON.stringify(floorRecord))).toBe(Buffer.byteLength(JSON.stringify(gatewayRecord)));
      // Rejected with the gateway's, the floor's run ends too: nothing is left waiting.
      expect(await rejectOpenCalls({ runtime })).toBe(4);
      expect((await runtime.store.listOpen({ limit: 10 })).items).toEqual([]);
    },
  );
});
