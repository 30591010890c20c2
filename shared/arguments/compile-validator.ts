// The validators' compiler (ajv, draft 2020-12, no coercion, every error, ajv-formats' formats):
// the local runtime compiles each tool's validator on its first call, and config:push generates
// each validator's code ahead of time, so the deployed functions never compile a schema.
import { Ajv2020 } from 'ajv/dist/2020.js';
import standaloneModule from 'ajv/dist/standalone/index.js';
import addFormatsModule from 'ajv-formats';
import type { ArgumentsValidator, JsonObject } from '../catalog/tool.js';
import { inputErrorsOf, validationSchema } from './validation.js';

const addFormats = addFormatsModule.default ?? addFormatsModule;
const standaloneCode = standaloneModule.default ?? standaloneModule;

/** One set of options for both: generated code answers exactly as a validator compiled here. */
const gatewayAjv = (source: boolean): Ajv2020 => {
  const ajv = new Ajv2020({
    allErrors: true,
    strict: false,
    coerceTypes: false,
    useDefaults: false,
    removeAdditional: false,
    validateFormats: true,
    code: { source },
  });
  addFormats(ajv);
  // The gateway's own formats are checked by canonicalization, not by the validator.
  ajv.addFormat('decimal', true);
  ajv.addFormat('identifier', true);
  return ajv;
};

let compiler: Ajv2020 | undefined;
let generator: Ajv2020 | undefined;
const compiled = new WeakMap<JsonObject, ArgumentsValidator>();

/** The validator for a tool's input schema, compiled on its first use, once per schema object. */
export const compileValidator =
  (schema: JsonObject): ArgumentsValidator =>
  (value) => {
    let validate = compiled.get(schema);
    if (validate === undefined) {
      compiler ??= gatewayAjv(false);
      const check = compiler.compile(validationSchema(schema));
      validate = (candidate) => inputErrorsOf(check(candidate), check.errors);
      compiled.set(schema, validate);
    }
    return validate(value);
  };

/**
 * The validator of a tool's input schema as the code of a CommonJS module (ajv's standalone code),
 * for the deployed functions to instantiate. Throws when the schema cannot be compiled.
 */
export const validatorCode = (schema: JsonObject): string => {
  generator ??= gatewayAjv(true);
  return standaloneCode(generator, generator.compile(validationSchema(schema)));
};
