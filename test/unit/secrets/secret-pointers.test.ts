// Where redaction hid a value: kept with a held call so a hidden secret is told from a value that
// only reads "[REDACTED]".
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isJsonObject, type JsonObject } from '../../../shared/catalog/tool.js';
import { jsonPointer } from '../../../shared/json-pointer.js';
import { hiddenSecretsOf, secretPointers, shownArgumentsJson } from '../../../shared/secret-pointers.js';
import { redactedValue, redactSecrets, redactWithPointers, type SecretRules } from '../../../shared/secrets.js';
import { verifies } from '../../support/requirements.js';

const noRules = { names: new Set<string>() };
const schema = {
  type: 'object',
  properties: {
    note: { type: 'string' },
    pin_code: { type: 'string', 'x-sensitive': true },
    portal: { type: 'object', properties: { login: { type: 'string' }, word: { type: 'string', format: 'password' } } },
    tags: { type: 'array', items: { type: 'string' } },
  },
};

describe('secret pointers', () => {
  it(
    verifies(
      'console.redacted-distinct',
      'names the values redaction hides, never a plain value that reads [REDACTED]',
    ),
    () => {
      const value = {
        note: '[REDACTED]',
        pin_code: '1234',
        portal: { login: '[REDACTED]', word: 'hunter2' },
        tags: ['[REDACTED]', 'x'],
        api_key: { id: 'k', value: 'v' },
        client_secret: null,
      };
      expect(secretPointers(value, schema, noRules)).toEqual(['/pin_code', '/portal/word', '/api_key']);
      expect(secretPointers(value, schema, { names: new Set(['login']) })).toEqual([
        '/pin_code',
        '/portal/login',
        '/portal/word',
        '/api_key',
      ]);
    },
  );

  it(
    verifies('console.redacted-distinct', 'a secret whose value is the text [REDACTED] is still a hidden secret'),
    () => {
      expect(secretPointers({ pin_code: '[REDACTED]', note: '[REDACTED]' }, schema, noRules)).toEqual(['/pin_code']);
    },
  );

  it(verifies('console.redacted-distinct', 'escapes pointer segments as RFC 6901 says'), () => {
    expect(secretPointers({ 'a/b~password': 'x' }, null, noRules)).toEqual(['/a~1b~0password']);
  });

  it(
    verifies('console.redacted-distinct', 'records without pointers: hidden only when the arguments were sealed'),
    () => {
      expect(hiddenSecretsOf({ secret_pointers: null, sealed_arguments: null })('/note', '[REDACTED]')).toBe(false);
      expect(hiddenSecretsOf({ secret_pointers: null, sealed_arguments: 'blob' })('/note', '[REDACTED]')).toBe(true);
      const kept = hiddenSecretsOf({ secret_pointers: ['/pin_code'], sealed_arguments: 'blob' });
      expect(kept('/pin_code', '[REDACTED]')).toBe(true);
      expect(kept('/note', '[REDACTED]')).toBe(false);
      expect(kept('/pin_code', 'other')).toBe(false);
    },
  );

  it(
    verifies(
      'console.redacted-distinct',
      'the shown JSON writes a look-alike so it reads apart but parses to the same value',
    ),
    () => {
      const json = '{"b":["[REDACTED]",1.5,null,true],"a":"[REDACTED]","c":{"d":"[REDACTED]"}}';
      const shown = shownArgumentsJson(json, hiddenSecretsOf({ secret_pointers: ['/c/d'], sealed_arguments: 'x' }));
      expect(shown).toBe('{"a":"\\u005bREDACTED]","b":["\\u005bREDACTED]",1.5,null,true],"c":{"d":"[REDACTED]"}}');
      expect(JSON.parse(shown)).toEqual(JSON.parse(json));
      expect(shownArgumentsJson('not json', () => true)).toBe('not json');
    },
  );

  it(verifies('args.exact-integers', 'the shown JSON keeps an integer beyond 2^53 digit for digit'), () => {
    const json = '{"id":9007199254740993,"tags":[-12345678901234567890]}';
    expect(shownArgumentsJson(json, () => false)).toBe(json);
  });
});

/**
 * The pointers as first defined, in two walks: redact a copy in which nothing reads "[REDACTED]",
 * then collect where "[REDACTED]" appears. The one walk must find exactly these.
 */
const twoWalkPointers = (value: unknown, schema: JsonObject, rules: SecretRules): string[] => {
  const withoutLookalikes = (item: unknown): unknown => {
    if (item === redactedValue) return '';
    if (Array.isArray(item)) return item.map(withoutLookalikes);
    if (isJsonObject(item)) return Object.fromEntries(Object.entries(item).map(([k, v]) => [k, withoutLookalikes(v)]));
    return item;
  };
  const pointers: string[] = [];
  const collect = (item: unknown, path: (string | number)[]): void => {
    if (item === redactedValue) pointers.push(jsonPointer(path));
    else if (Array.isArray(item)) for (const [index, child] of item.entries()) collect(child, [...path, index]);
    else if (isJsonObject(item)) for (const [key, child] of Object.entries(item)) collect(child, [...path, key]);
  };
  collect(redactSecrets(withoutLookalikes(value), schema, rules), []);
  return pointers;
};

describe('redaction and its pointers in one walk', () => {
  const keys = ['note', 'pin_code', 'portal', 'login', 'word', 'tags', 'api_key', 'client_secret', 'a/b'];
  const { value } = fc.letrec<{ value: unknown }>((tie) => ({
    value: fc.oneof(
      { depthSize: 'small' },
      fc.constantFrom<unknown>('[REDACTED]', 'x', '', null, 0, 1.5, true),
      fc.array(tie('value'), { maxLength: 3 }),
      fc.dictionary(fc.constantFrom(...keys), tie('value'), { maxKeys: 4 }),
    ),
  }));
  it(
    verifies(
      'console.redacted-distinct',
      'gives the copy redactSecrets gives and the pointers of the two-walk reading',
    ),
    () => {
      fc.assert(
        fc.property(fc.dictionary(fc.constantFrom(...keys), value, { maxKeys: 5 }), fc.boolean(), (args, listed) => {
          const rules = { names: new Set(listed ? ['login'] : []) };
          const once = redactWithPointers(args, schema, rules);
          expect(once.redacted).toEqual(redactSecrets(args, schema, rules));
          expect(once.pointers).toEqual(twoWalkPointers(args, schema, rules));
        }),
        { numRuns: 500 },
      );
    },
  );
});
