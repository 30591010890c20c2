// Where redaction hid a value: kept with a held call so a hidden secret is told from a value that
// only reads "[REDACTED]".
import { describe, expect, it } from 'vitest';
import { hiddenSecretsOf, secretPointers, shownArgumentsJson } from '../../../shared/secret-pointers.js';
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
