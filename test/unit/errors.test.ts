// The one error vocabulary: a code table with meanings and messages, the type that keeps loose
// text out of an execution's code, and the README's list of codes kept equal to the table.
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { projectPath } from '../../infra/paths.js';
import {
  coded,
  type ExecutionCode,
  faultText,
  httpStatusCode,
  inputError,
  isExecutionCode,
  limitRefusals,
  mcpErrorCode,
  refusal,
  rejectedBecause,
  resultCodes,
  systemCode,
} from '../../shared/errors.js';
import { Execution } from '../../shared/executions/execution.js';
import { anExecution } from '../support/executions.js';
import { verifies } from '../support/requirements.js';

describe('the result code vocabulary', () => {
  it(
    verifies('result.code-vocabulary', 'gives every code a meaning and, unless its outcome words it, a message'),
    () => {
      for (const [code, entry] of Object.entries(resultCodes)) {
        expect(entry.meaning.length, code).toBeGreaterThan(10);
        const message: unknown = entry.message;
        if (message !== null) expect(typeof message === 'string' || typeof message === 'function', code).toBe(true);
      }
      // The system-call outcomes are worded by their status; nothing else is.
      const wordedByOutcome = Object.entries(resultCodes)
        .filter(([, entry]) => entry.message === null)
        .map(([code]) => code);
      expect(wordedByOutcome.sort()).toEqual(
        [
          'connection_failed',
          'interrupted',
          'redirect_refused',
          'response_too_large',
          'timeout',
          'tool_error',
          'unreadable_response',
        ].sort(),
      );
    },
  );

  it(
    verifies(
      'result.code-vocabulary',
      'lists in the reference page exactly the codes of the table, with their meanings',
    ),
    async () => {
      const page = await readFile(projectPath('docs', 'reference.md'), 'utf8');
      const section = page.slice(page.indexOf('## Result codes'), page.indexOf('## Limits'));
      const rows = [...section.matchAll(/^\| `([a-z_]+)` +\| (.+?) +\|$/gm)].map(([, code, meaning]) => [
        code,
        meaning,
      ]);
      expect(rows).toEqual(Object.entries(resultCodes).map(([code, entry]) => [code, entry.meaning]));
    },
  );

  it(verifies('result.code-vocabulary', 'lets a system code through only in its safe shape, lowercased'), () => {
    expect(systemCode('OUT_OF_STOCK')).toBe('out_of_stock');
    expect(systemCode('Out of stock, sorry')).toBeNull();
    expect(systemCode('a'.repeat(65))).toBeNull();
    expect(systemCode('-leading')).toBeNull();
    expect(httpStatusCode(404)).toBe('http_404');
    expect(isExecutionCode('approval_expired')).toBe(true);
    expect(isExecutionCode('http_503')).toBe(true);
    expect(isExecutionCode('Free text from a system')).toBe(false);
    expect(isExecutionCode(42)).toBe(false);
  });

  it(
    verifies('result.code-vocabulary', 'refuses to read back a record whose code is not one the gateway writes'),
    () => {
      const stored = { ...anExecution({ status: 'denied', code: 'policy_denied' }) };
      expect(Execution.safeParse(stored).success).toBe(true);
      expect(Execution.safeParse({ ...stored, code: 'The system said: no!' }).success).toBe(false);
    },
  );

  it(verifies('result.code-vocabulary', 'builds each refusal with its code and the message of that code'), () => {
    expect(refusal('policy_denied')).toEqual({
      status: 'denied',
      code: 'policy_denied',
      message: resultCodes.policy_denied.message,
    });
    expect(limitRefusals.pending(3)).toEqual({
      status: 'denied',
      code: 'too_many_pending',
      message:
        'This agent may have 3 calls waiting for approval at once; this one was not held. Try again when one is decided.',
    });
    // The compiler keeps loose text out of a code: these lines fail to type-check if the type loosens.
    // @ts-expect-error a typo is not a result code
    const typo: ExecutionCode = 'policy_denid';
    // @ts-expect-error a system's text becomes a code only through systemCode()
    const raw: ExecutionCode = 'out_of_stock' as string;
    expect([typo, raw]).toHaveLength(2);
  });

  it(verifies('code.coded-words', 'builds a code with its words, or a variant written on its entry'), () => {
    expect(coded('withdrawn')).toEqual({ code: 'withdrawn', message: resultCodes.withdrawn.message });
    expect(coded('interrupted', 'write')).toEqual({ code: 'interrupted', message: resultCodes.interrupted.write });
    expect(rejectedBecause(null)).toEqual({ code: 'rejected', message: resultCodes.rejected.message });
    expect(rejectedBecause('over budget').message).toBe(`${resultCodes.rejected.because}over budget`);
    expect(inputError('/a', 'missing_field')).toEqual({
      path: '/a',
      code: 'missing_field',
      message: 'This required field is missing.',
    });
    // A code worded by its outcome has no message of its own to pair: the compiler asks for a variant.
    // @ts-expect-error interrupted is worded by its outcome (read or write)
    expect(coded('interrupted').message).toBe('');
    // Numbers always make a code of the safe shape, whatever a server sends.
    expect([mcpErrorCode(-32601), mcpErrorCode(1e21), httpStatusCode(Number.NaN)]).toEqual([
      'mcp_-32601',
      'mcp_unknown',
      'http_unknown',
    ]);
    expect(faultText(new TypeError('x'.repeat(2000)))).toHaveLength(1000);
  });
});
