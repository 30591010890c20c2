// The published JSON Schema is the zod schema's own, kept current, and it accepts what the
// gateway accepts (the demo) and refuses what it refuses.
import { readFile } from 'node:fs/promises';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { projectPath } from '../../../infra/paths.js';
import { configJsonSchema, configJsonSchemaFile } from '../../../shared/config/json-schema.js';
import { verifies } from '../../support/requirements.js';

describe('gateway.config.schema.json', () => {
  it(
    verifies('config.schema-published', 'is exactly what the zod schema generates (run npm run config:schema)'),
    async () => {
      expect(await readFile(projectPath(configJsonSchemaFile), 'utf8')).toBe(configJsonSchema());
      const example = await readFile(projectPath('examples/gateway.config.yaml'), 'utf8');
      expect(example.split('\n')[0]).toBe(`# yaml-language-server: $schema=../${configJsonSchemaFile}`);
    },
  );

  it(
    verifies('config.schema-published', 'accepts the demo configuration and refuses mistakes an editor should flag'),
    async () => {
      const ajv = new Ajv2020({ strict: false, allErrors: true });
      const validate = ajv.compile(JSON.parse(configJsonSchema()));
      const demo = parse(await readFile(projectPath('examples/gateway.config.yaml'), 'utf8'));
      expect(validate(demo), JSON.stringify(validate.errors)).toBe(true);
      expect(validate({ settings: { approval_time: 'soon' } })).toBe(false);
      expect(validate({ settings: { enabled: true, colour: 'red' } })).toBe(false);
      expect(validate({ systems: [{ key: 'erp', base_url: 'http://x', credentials: { type: 'kerberos' } }] })).toBe(
        false,
      );
      expect(validate({ agents: [{ id: 'Agent One', token: 't' }] })).toBe(false);
    },
  );
});
