// One reading of a bearer credential for every front that checks agents' tokens: the local HTTP
// and channel fronts (the local authorizer), the deployed agent authorizer and the gRPC gateway.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createLocalAuthorizer } from '../../../infra/local/authorizer.js';
import { projectPath } from '../../../infra/paths.js';
import { bearerToken } from '../../../shared/edge/tool-call/bearer.js';
import { verifies } from '../../support/requirements.js';

const sourceFiles = (folder: string): string[] =>
  readdirSync(folder).flatMap((entry) => {
    const path = join(folder, entry);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') ? [relative(projectPath(), path)] : [];
  });

/** Authorization values, and the token each presents (null: none). */
const presented: readonly [string | undefined, string | null][] = [
  ['Bearer t-1', 't-1'],
  ['bearer t-1', 't-1'],
  ['BEARER \t t-1 \t', 't-1'],
  ['Bearer t-1 extra', null],
  ['Bearer', null],
  ['Bearer  ', null],
  ['Basic t-1', null],
  ['t-1', null],
  ['', null],
  [undefined, null],
];

describe('a bearer credential', () => {
  it(verifies('auth.one-bearer-reading', 'is read as the scheme in any case and one token, blanks around it'), () => {
    for (const [value, token] of presented) expect(bearerToken(value), String(value)).toBe(token);
  });

  it(
    verifies('auth.one-bearer-reading', 'is read by the local fronts exactly as by the deployed authorizer and gRPC'),
    async () => {
      const authorize = createLocalAuthorizer({
        agents: () => [
          {
            id: 'support-agent',
            token: 't-1',
            tokenFromEnvironment: false,
            subject: null,
            groups: ['support'],
            customer: null,
          },
        ],
        anonymousAgent: null,
      });
      for (const [value, token] of presented) {
        const expected =
          token === null
            ? { kind: 'refused', tokenPresented: false }
            : { kind: 'authorized', caller: { kind: 'listed', agentId: 'support-agent' } };
        expect(await authorize(value), String(value)).toEqual(expected);
      }
      expect(await authorize('Bearer t-2')).toEqual({ kind: 'refused', tokenPresented: true });
    },
  );

  it(verifies('auth.one-bearer-reading', 'has one reading in the code'), () => {
    const readers = ['shared', 'functions', 'infra']
      .flatMap((folder) => sourceFiles(projectPath(folder)))
      .filter((path) => /verifyBearerToken|\/\^bearer/i.test(readFileSync(projectPath(path), 'utf8')));
    expect(readers).toEqual(['shared/edge/tool-call/bearer.ts']);
  });
});
