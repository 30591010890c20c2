// Writing keys that come from outside (arguments, schemas, records) onto objects the gateway builds,
// and telling such an object from other JSON values.

/** A JSON object (an object, not null, not an array), as parsed JSON or an event's parts may hold one. */
export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Makes `key` an ordinary own property of `target` holding `value`. A plain assignment of
 * "__proto__" would set the object's prototype instead of adding the key (and drop the value);
 * defining the property never does, so every key an agent or a schema sends stays data.
 */
export const setOwn = (target: object, key: string | number, value: unknown): void => {
  // Every other key of a plain object's prototype is a writable data property, which an assignment
  // shadows with an own one: the same outcome, far cheaper on the per-call paths.
  if (key === '__proto__' || !isPlainTarget(target)) {
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  } else target[key] = value;
};

/** An extensible object whose prototype is Object's or none (not an array, whose length is special). */
const isPlainTarget = (target: object): target is Record<string | number, unknown> => {
  const prototype: unknown = Object.getPrototypeOf(target);
  return (prototype === Object.prototype || prototype === null) && Object.isExtensible(target);
};
