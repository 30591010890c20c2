// The deployed functions' validators: the code config:push generated for each tool (ajv's
// standalone code, a CommonJS module) instantiated with a fixed `require` that answers only the
// ajv runtime helpers and ajv-formats' formats such code asks for. A module that asks for anything
// else, or that does not export a validation function, is refused (and with it the bundle).
//
// The code comes from the configuration table: whoever may write that table runs code here. The
// fixed `require` keeps the code to what ajv generates from schemas; it is no sandbox.
import type { ErrorObject } from 'ajv';
import * as equal from 'ajv/dist/runtime/equal.js';
import * as ucs2length from 'ajv/dist/runtime/ucs2length.js';
import * as validationError from 'ajv/dist/runtime/validation_error.js';
import { fullFormats } from 'ajv-formats/dist/formats.js';
import { type ArgumentsValidator, isJsonObject } from '../catalog/tool.js';
import { errorText } from '../errors.js';
import { inputErrorsOf } from './validation.js';

/** A CommonJS module's default export, whichever way the loader presents it (Node: module.exports). */
const defaultExport = (imported: { readonly default?: unknown }): unknown => {
  const outer = imported.default;
  const inner = typeof outer === 'object' && outer !== null ? Reflect.get(outer, 'default') : undefined;
  return inner ?? outer;
};

/** Every module the generated code may ask for, as the code reads it. */
const runtimeModules: ReadonlyMap<string, unknown> = new Map<string, unknown>([
  ['ajv/dist/runtime/equal', Object.freeze({ default: defaultExport(equal) })],
  ['ajv/dist/runtime/ucs2length', Object.freeze({ default: defaultExport(ucs2length) })],
  ['ajv/dist/runtime/validation_error', Object.freeze({ default: defaultExport(validationError) })],
  ['ajv-formats/dist/formats', Object.freeze({ fullFormats })],
]);

/** The names the generated code may ask `require` for. */
export const runtimeModuleNames: readonly string[] = [...runtimeModules.keys()];

class UnknownModule extends Error {
  constructor(readonly module: string) {
    super(`asks for the module ${JSON.stringify(module)}`);
  }
}

const fixedRequire = (name: unknown): unknown => {
  const found = typeof name === 'string' ? runtimeModules.get(name) : undefined;
  if (found === undefined) throw new UnknownModule(String(name));
  return found;
};

const isErrorList = (value: unknown): value is ErrorObject[] =>
  Array.isArray(value) &&
  value.every(
    (item) => isJsonObject(item) && typeof item.keyword === 'string' && typeof item.instancePath === 'string',
  );

export type ValidatorInstance = { ok: true; validate: ArgumentsValidator } | { ok: false; reason: string };

/** Runs a validator module's code once, with the fixed `require`, and takes its exported function. */
export const instantiateValidator = (code: string): ValidatorInstance => {
  const module: { exports: unknown } = { exports: {} };
  try {
    new Function('require', 'module', 'exports', code)(fixedRequire, module, module.exports);
  } catch (error) {
    if (error instanceof UnknownModule) {
      return {
        ok: false,
        reason: `its code asks for the module ${JSON.stringify(error.module)}, which is none of ${runtimeModuleNames.join(', ')}`,
      };
    }
    return { ok: false, reason: `its code does not run (${errorText(error)})` };
  }
  const exported = module.exports;
  if (typeof exported !== 'function') return { ok: false, reason: 'its code exports no validation function' };
  return {
    ok: true,
    validate: (value) => {
      const valid: unknown = Reflect.apply(exported, undefined, [value]);
      if (valid) return [];
      const errors: unknown = Reflect.get(exported, 'errors');
      if (errors !== null && errors !== undefined && !isErrorList(errors)) {
        throw new Error('a validator reported errors that are not ajv errors');
      }
      return inputErrorsOf(valid, errors);
    },
  };
};
