import { randomBytes } from 'node:crypto';
import { sha256Hex } from '../../util/canonical-json';
import type { InstanceInfo, MetaStorage } from '../types';
import { checkId, invalidArgument } from '../sqlite/checks';

/** The `meta` domain in memory: one instance record (created on first call) and a key/value map. */
export function createInMemoryMetaStorage(now: () => Date, instanceKey?: Uint8Array): MetaStorage {
  let instance: InstanceInfo | undefined;
  const kv = new Map<string, string>();

  return {
    async getInstance() {
      if (instance === undefined) {
        const key = instanceKey === undefined ? new Uint8Array(randomBytes(32)) : new Uint8Array(instanceKey);
        instance = { instanceId: sha256Hex(key).slice(0, 16), hmacKey: key, createdAt: now().toISOString() };
      }
      return { instanceId: instance.instanceId, hmacKey: new Uint8Array(instance.hmacKey), createdAt: instance.createdAt };
    },
    async get(key) {
      checkId('meta.get', 'key', key);
      return kv.get(key);
    },
    async set(key, value) {
      checkId('meta.set', 'key', key);
      if (typeof value !== 'string') throw invalidArgument('meta.set', `value must be a string, got ${typeof value}`);
      kv.set(key, value);
    },
    async delete(key) {
      checkId('meta.delete', 'key', key);
      kv.delete(key);
    },
  };
}
