// A system's configured credential as request headers, built in one place for every client that
// calls a system (HTTP, MCP, the channel).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectPath } from '../../../infra/paths.js';
import { credentialHeaders } from '../../../shared/invoke/credentials.js';
import { verifies } from '../../support/requirements.js';

const sourceFiles = (folder: string): string[] =>
  readdirSync(folder).flatMap((entry) => {
    const path = join(folder, entry);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') ? [relative(projectPath(), path)] : [];
  });

describe("a system's credential headers", () => {
  it(verifies('code.one-credential-headers', 'presents each kind of credential as its headers'), () => {
    expect(credentialHeaders({ type: 'none' })).toEqual({});
    expect(credentialHeaders({ type: 'bearer', token: 't-1' })).toEqual({ authorization: 'Bearer t-1' });
    expect(credentialHeaders({ type: 'basic', username: 'gateway', password: 's3cret' })).toEqual({
      authorization: `Basic ${Buffer.from('gateway:s3cret').toString('base64')}`,
    });
    expect(credentialHeaders({ type: 'api_key', header: 'X-Api-Key', value: 'k-1' })).toEqual({ 'x-api-key': 'k-1' });
  });

  it(verifies('code.one-credential-headers', 'builds them in one place for every client of a system'), () => {
    const builders = ['shared', 'functions', 'infra']
      .flatMap((folder) => sourceFiles(projectPath(folder)))
      // What a credential holds is read only where it becomes headers.
      .filter((path) => /credentials\.(token|username|password|value)\b/.test(readFileSync(projectPath(path), 'utf8')));
    expect(builders).toEqual(['shared/invoke/credentials.ts']);
  });
});
