import { StorageError } from '../../errors/subclasses';

/**
 * Wrap a domain so every method rejects with StorageError "storage is closed" once `isClosed()` is true.
 * Non-function properties pass through unchanged.
 */
export function guardClosed<T extends object>(domain: string, target: T, isClosed: () => boolean): T {
  const wrappers = new Map<PropertyKey, unknown>();
  return new Proxy(target, {
    get(obj, prop, receiver) {
      const value: unknown = Reflect.get(obj, prop, receiver);
      if (typeof value !== 'function') return value;
      let wrapped = wrappers.get(prop);
      if (wrapped === undefined) {
        const fn = value as (...args: unknown[]) => unknown;
        wrapped = (...args: unknown[]) =>
          isClosed() ? Promise.reject(new StorageError(`${domain}.${String(prop)}`, 'storage is closed')) : fn.apply(obj, args);
        wrappers.set(prop, wrapped);
      }
      return wrapped;
    },
  });
}
