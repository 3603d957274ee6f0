import { createInMemoryStorage } from '@minara/agent/testing';
import { describe, expect, it, vi } from 'vitest';
import { runStorageContract } from './contract';
import { runControlsContract } from './controls-contract';

runStorageContract('in-memory', ({ now }) => createInMemoryStorage({ now }));
runControlsContract('in-memory', () => createInMemoryStorage());

describe('createInMemoryStorage', () => {
  it('describes itself as a single-process engine without vectors', async () => {
    const storage = createInMemoryStorage();
    expect(storage.kind).toBe('memory');
    expect(storage.capabilities).toEqual({ fullText: true, vector: true, multiProcess: false });
    expect(await storage.schemaVersions()).toEqual({});
  });

  it('keeps two instances apart', async () => {
    const a = createInMemoryStorage();
    const b = createInMemoryStorage();
    await a.meta.set('k', 'a');
    expect(await b.meta.get('k')).toBeUndefined();
    expect((await a.meta.getInstance()).instanceId).not.toBe((await b.meta.getInstance()).instanceId);
  });

  it('stamps instance creation with the injected clock', async () => {
    const storage = createInMemoryStorage({ now: () => new Date('2026-01-02T03:04:05.000Z') });
    expect((await storage.meta.getInstance()).createdAt).toBe('2026-01-02T03:04:05.000Z');
  });

  it('calls a method a test replaced after its first use (vi.spyOn), and still refuses every call once closed', async () => {
    const storage = createInMemoryStorage();
    await storage.meta.set('k', 'v');
    expect(await storage.meta.get('k')).toBe('v'); // the method has been used once
    const spy = vi.spyOn(storage.meta, 'get').mockResolvedValue('from the spy');
    expect(await storage.meta.get('k')).toBe('from the spy');
    expect(spy).toHaveBeenCalledWith('k');
    spy.mockRestore();
    expect(await storage.meta.get('k')).toBe('v');
    await storage.close();
    await expect(storage.meta.get('k')).rejects.toThrow(/storage is closed/);
    vi.spyOn(storage.meta, 'get').mockResolvedValue('from the spy');
    await expect(storage.meta.get('k')).rejects.toThrow(/storage is closed/);
  });
});
