import { StorageError } from '../../errors/subclasses';

/**
 * Wrap a domain so every method rejects with StorageError "storage is closed" once `isClosed()` is true.
 * Non-function properties pass through unchanged. Wrappers are kept per function, not per name: a method a test
 * replaces after its first use (`vi.spyOn(storage.meta, 'get')`) is the one called from then on.
 */
export function guardClosed<T extends object>(domain: string, target: T, isClosed: () => boolean): T {
  const wrappers = new WeakMap<object, unknown>();
  return new Proxy(target, {
    get(obj, prop, receiver) {
      const value: unknown = Reflect.get(obj, prop, receiver);
      if (typeof value !== 'function') return value;
      let wrapped = wrappers.get(value);
      if (wrapped === undefined) {
        const fn = value as (...args: unknown[]) => unknown;
        wrapped = (...args: unknown[]) =>
          isClosed() ? Promise.reject(new StorageError(`${domain}.${String(prop)}`, 'storage is closed')) : fn.apply(obj, args);
        wrappers.set(value, wrapped);
      }
      return wrapped;
    },
  });
}
