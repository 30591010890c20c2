// The whole-word rule for secret names, redaction, and sealing.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AesSealer } from '../../../shared/adapters/aes-sealer.js';
import type { JsonObject } from '../../../shared/catalog/tool.js';
import { holdsSecrets, isSecretName, nameWords, redactSecrets, redactWithPointers } from '../../../shared/secrets.js';
import { verifies } from '../../support/requirements.js';

const noRules = { names: new Set<string>() };

describe('secret field names', () => {
  it.each([
    'password',
    'new_password',
    'portalPassword',
    'PORTAL_PASSWORD',
    'api_key',
    'apiKey',
    'API-KEY',
    'x-api-key',
    'apikey',
    'api_keys',
    'access_token',
    'accessToken',
    'refresh-token',
    'client_secret',
    'clientSecret',
    'client-secret',
    'private_key',
    'privateKey',
    'aws_secret_access_key',
    'credentials',
    'Authorization',
    'session_id',
    'card_cvv',
    'pin',
    'passphrase',
  ])(verifies('secrets.whole-words', 'treats %s as secret'), (name) => {
    expect(isSecretName(name)).toBe(true);
  });

  it.each([
    'passenger_name',
    'passengerName',
    'boarding_pass',
    'boardingPass',
    'bypass',
    'passport_number',
    'tokenizer_version',
    'secretary',
    'keynote',
    'monkey',
    'api_version',
    'spinner',
    'author',
    'key',
    'primary_key_column',
  ])(verifies('secrets.whole-words', 'leaves %s alone'), (name) => {
    expect(isSecretName(name)).toBe(false);
  });

  it(
    verifies('secrets.whole-words', 'answers the same for a name asked again, long or past the names it keeps'),
    () => {
      // More names than are kept between calls, then the first ones again: each answer is recomputed or kept alike.
      const names = Array.from({ length: 5000 }, (_, index) => (index % 2 === 0 ? `field_${index}` : `token_${index}`));
      for (const round of [1, 2]) {
        for (const [index, name] of names.entries())
          expect(isSecretName(name), `${round}: ${name}`).toBe(index % 2 === 1);
      }
      const long = `${'x'.repeat(200)}_api_key`;
      expect([isSecretName(long), isSecretName(long)]).toEqual([true, true]);
      expect([isSecretName('passenger_name'), isSecretName('passenger_name')]).toEqual([false, false]);
    },
  );

  it(verifies('secrets.whole-words', 'splits names into words across naming styles'), () => {
    expect(nameWords('clientSecret_value-HTTPToken')).toEqual(['client', 'secret', 'value', 'http', 'token']);
  });
});

describe('redaction', () => {
  const schema = {
    type: 'object',
    properties: { pin_hint: { type: 'string', format: 'password' }, note: { type: 'string', 'x-sensitive': true } },
  };

  it(verifies('secrets.redaction', 'redacts by schema mark, by configured name and by name, at any depth'), () => {
    expect(
      redactSecrets(
        {
          pin_hint: 'a',
          note: 'b',
          nested: { api_key: 'c', passenger_name: 'Layla', items: [{ accessToken: 'd', id: 1 }] },
          internal_code: 'e',
          empty_token: null,
        },
        schema,
        { names: new Set(['internal_code']) },
      ),
    ).toEqual({
      pin_hint: '[REDACTED]',
      note: '[REDACTED]',
      nested: { api_key: '[REDACTED]', passenger_name: 'Layla', items: [{ accessToken: '[REDACTED]', id: 1 }] },
      internal_code: '[REDACTED]',
      empty_token: null,
    });
  });

  it(verifies('secrets.redaction', 'tells whether arguments hold a secret at all'), () => {
    expect(holdsSecrets({ vendor_id: 'V-1', amount: '5' }, null, noRules)).toBe(false);
    expect(holdsSecrets({ vendor_id: 'V-1', initial_password: 'x' }, null, noRules)).toBe(true);
  });
});

describe('a schema that marks nothing and says of no string that it carries JSON', () => {
  const keys = ['note', 'items', 'pin_code', 'login', 'api_key', 'passenger_name', 'id'];
  const { value } = fc.letrec<{ value: unknown }>((tie) => ({
    value: fc.oneof(
      { depthSize: 'small' },
      fc.constantFrom<unknown>('x', '[REDACTED]', null, 1, true),
      fc.array(tie('value'), { maxLength: 3 }),
      fc.dictionary(fc.constantFrom(...keys), tie('value'), { maxKeys: 4 }),
    ),
  }));
  const plain: JsonObject = {
    type: 'object',
    properties: {
      note: { type: 'string', description: 'a note' },
      items: { type: 'array', items: { anyOf: [{ type: 'object', additionalProperties: { type: 'string' } }] } },
      login: { allOf: [{ type: 'object', properties: { id: { type: 'integer' } } }] },
    },
    patternProperties: { '^pin': { type: 'string' } },
  };
  // The same schema with one property no value here has, whose JSON content makes it not plain.
  const walked: JsonObject = {
    ...plain,
    properties: {
      ...(plain.properties as JsonObject),
      unused: { type: 'string', contentMediaType: 'application/json' },
    },
  };

  it(verifies('secrets.redaction', 'hides by name under it exactly what the walk through the schema hides'), () => {
    fc.assert(
      fc.property(fc.dictionary(fc.constantFrom(...keys), value, { maxKeys: 5 }), fc.boolean(), (args, listed) => {
        const rules = { names: new Set(listed ? ['login'] : []) };
        expect(redactWithPointers(args, plain, rules)).toEqual(redactWithPointers(args, walked, rules));
        expect(redactSecrets(args, plain, rules, 'note')).toEqual(redactSecrets(args, walked, rules, 'note'));
      }),
      { numRuns: 500 },
    );
  });
});

describe('sealing', () => {
  it(
    verifies('secrets.at-rest', 'seals with AES-256-GCM bound to the execution, opening only for the same one'),
    async () => {
      const sealer = new AesSealer(Buffer.alloc(32, 7));
      const sealed = await sealer.seal('{"initial_password":"hunter2"}', 'execution-1');
      expect(sealed).not.toContain('hunter2');
      expect(await sealer.open(sealed, 'execution-1')).toBe('{"initial_password":"hunter2"}');
      await expect(sealer.open(sealed, 'execution-2')).rejects.toThrow();
      const tampered = JSON.parse(sealed);
      tampered.ct = Buffer.from('forged').toString('base64');
      await expect(sealer.open(JSON.stringify(tampered), 'execution-1')).rejects.toThrow();
      // A fresh IV each time: the same text never seals the same way twice.
      expect(await sealer.seal('same', 'e')).not.toBe(await sealer.seal('same', 'e'));
      expect(() => new AesSealer(Buffer.alloc(16))).toThrow(/32 bytes/);
    },
  );
});
