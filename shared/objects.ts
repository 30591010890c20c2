// Writing keys that come from outside (arguments, schemas, records) onto objects the gateway builds.

/**
 * Makes `key` an ordinary own property of `target` holding `value`. A plain assignment of
 * "__proto__" would set the object's prototype instead of adding the key (and drop the value);
 * defining the property never does, so every key an agent or a schema sends stays data.
 */
export const setOwn = (target: object, key: string | number, value: unknown): void => {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
};
