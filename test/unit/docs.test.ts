// The docs kept true: links that resolve, the limits the code enforces, and nothing cited from
// outside the repository.
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectPath } from '../../infra/paths.js';
import { maxInputErrors } from '../../shared/arguments/canonicalize.js';
import { maxArgumentDepth, maxArgumentValues, maxArrayItems } from '../../shared/arguments/strict-json.js';
import { maxToolNameLength } from '../../shared/catalog/naming.js';
import { GatewayConfig } from '../../shared/config/schema.js';
import { channelParamsWaitMs, maxChannelParamsBytes } from '../../shared/edge/call-tool/serve.js';
import { taskResultWaitMs } from '../../shared/edge/mcp/task-methods.js';
import { taskPollIntervalMs } from '../../shared/edge/mcp/tasks.js';
import { toolsPageSize } from '../../shared/edge/mcp/tool-pages.js';
import { maxIdempotencyKeyLength } from '../../shared/executions/call-keys.js';
import { maxSettlementReasonLength } from '../../shared/executions/execution.js';
import { transportCaps } from '../../shared/limits/transport-caps.js';
import { maxQuorum } from '../../shared/policy/human-step.js';
import { customerSessionTtlMs, sessionTtlMs } from '../../shared/sessions/session.js';
import { sessionIdleMs } from '../../shared/sessions/session-store.js';
import { verifies } from '../support/requirements.js';

const pages = async (): Promise<string[]> => {
  const docs = (await readdir(projectPath('docs'))).filter((name) => name.endsWith('.md'));
  return ['README.md', 'bench/README.md', ...docs.map((name) => `docs/${name}`)];
};

/** The text outside fenced code blocks: links and claims in prose only. */
const prose = (text: string): string => text.replace(/^```[\s\S]*?^```/gm, '');

/** GitHub's anchor for a heading: lowercased, punctuation but `-` and `_` dropped, spaces as `-`. */
const anchorOf = (heading: string): string =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[`*]/g, '')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');

const anchorsOf = (text: string): Set<string> =>
  new Set([...prose(text).matchAll(/^#{1,6} (.+)$/gm)].map(([, heading]) => anchorOf(heading ?? '')));

describe('the docs', () => {
  it(verifies('docs.links-resolve', 'link only to files and headings that exist'), async () => {
    const broken: string[] = [];
    for (const page of await pages()) {
      const text = await readFile(projectPath(page), 'utf8');
      for (const [, target = ''] of prose(text).matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target)) continue;
        const [path = '', anchor] = target.split('#');
        const file = path === '' ? projectPath(page) : join(dirname(projectPath(page)), path);
        if (!existsSync(file)) {
          broken.push(`${page}: ${target} (no file ${relative(projectPath(), file)})`);
        } else if (anchor !== undefined && file.endsWith('.md')) {
          if (!anchorsOf(await readFile(file, 'utf8')).has(anchor)) broken.push(`${page}: ${target} (no such heading)`);
        }
      }
    }
    expect(broken).toEqual([]);
  });

  it(verifies(['docs.numbers-from-code', 'limits.caps-as-data'], 'state the limits the code enforces'), async () => {
    const limits = GatewayConfig.parse({}).settings.limits;
    const expected: Record<string, number> = {
      "values in one call's arguments": maxArgumentValues,
      'items in one array of arguments': maxArrayItems,
      'nesting of arguments': maxArgumentDepth,
      '`input_errors` listed in one refusal': maxInputErrors,
      'tools in one `tools/list` page': toolsPageSize,
      "characters in a tool's name (longer ones are shortened)": maxToolNameLength,
      'characters in an idempotency key': maxIdempotencyKeyLength,
      'requests in progress per agent (default)': limits.concurrent_requests,
      'requests per second per agent (default)': limits.requests_per_second,
      'burst above that rate per agent (default)': limits.burst,
      'calls waiting for approval per agent (default)': limits.pending_calls,
      'bytes of requests per second per agent (default)': limits.request_bytes_per_second,
      'bytes of requests per day per agent (default)': limits.request_bytes_per_day,
      'API stage requests per second, all agents together': transportCaps.apiStage.rateLimitPerSecond,
      'API stage burst above that rate, all agents together': transportCaps.apiStage.burstLimit,
      'gRPC message': transportCaps.grpc.maxMessageBytes,
      'gRPC messages per stream': transportCaps.grpc.maxMessagesPerStream,
      'gRPC open streams per agent': transportCaps.grpc.maxStreamsPerAgent,
      'gRPC stream with no message (idle)': transportCaps.grpc.idleTimeoutMs,
      '`/tool/call-tool` params': maxChannelParamsBytes,
      '`/tool/call-tool` wait for the params': channelParamsWaitMs,
      '`tasks/result` wait before "still working" (local only)': taskResultWaitMs,
      'task poll interval the gateway suggests': taskPollIntervalMs,
      'approver console session, at most': sessionTtlMs,
      'approver console session, unused': sessionIdleMs,
      'customer session': customerSessionTtlMs,
      'characters in the reason of a settlement': maxSettlementReasonLength,
      'approvers a quorum may ask for (`@quorum`)': maxQuorum,
    };
    const units: Record<string, number> = {
      '': 1,
      KiB: 1024,
      MiB: 1024 ** 2,
      GiB: 1024 ** 3,
      s: 1000,
      min: 60_000,
      h: 3_600_000,
    };
    const text = await readFile(projectPath('docs', 'reference.md'), 'utf8');
    const table = text.slice(text.indexOf('## Limits'), text.indexOf('## Commands'));
    const stated = Object.fromEntries(
      [...table.matchAll(/^\| (.+?) +\| ([\d ]+?) ?(KiB|MiB|GiB|s|min|h)? +\|$/gm)].map(
        ([, label = '', number = '', unit = '']) => [
          label,
          Number(number.replaceAll(' ', '')) * (units[unit] ?? Number.NaN),
        ],
      ),
    );
    expect(stated).toEqual(expected);
  });

  it(verifies('docs.own-words', 'cite nothing outside the repository, and the README stays short'), async () => {
    const outside: string[] = [];
    for (const page of await pages()) {
      const text = await readFile(projectPath(page), 'utf8');
      for (const [line, index] of text.split('\n').map((line, index) => [line, index + 1] as const)) {
        if (/\b(DESIGN|QUALITY|STYLE)(\.md| §)|\.\.\/shared\/|\bspecs\//.test(line)) outside.push(`${page}:${index}`);
      }
    }
    expect(outside).toEqual([]);
    expect((await readFile(projectPath('README.md'), 'utf8')).split('\n').length).toBeLessThanOrEqual(250);
  });
});
