import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, MinaraError, ToolInputError, ToolNotFoundError, SandboxEscapeError, StorageError, ApprovalError, ToolCallBlockedError, ConfigError } from '@minara/agent';

describe('MinaraError', () => {
  it('carries code, cause and retryable, and isInstance survives duplicate package copies', () => {
    const cause = new Error('disk');
    const e = new StorageError('audit.append', 'write failed', { cause, retryable: true });
    expect(e).toMatchObject({ code: 'STORAGE_ERROR', retryable: true, operation: 'audit.append', cause });
    expect(e.message).toBe('audit.append: write failed');
    expect(MinaraError.isInstance(e)).toBe(true);
    // An error from another copy of the package has a different prototype but the same marker.
    const foreign = Object.assign(Object.create(Error.prototype) as object, { code: 'X' });
    Object.defineProperty(foreign, Symbol.for('@minara/agent.error'), { value: true });
    expect(MinaraError.isInstance(foreign)).toBe(true);
    expect(MinaraError.isInstance(new Error('plain'))).toBe(false);
    expect(MinaraError.isInstance(null)).toBe(false);
    expect(e.toJSON()).toEqual({ name: 'StorageError', code: 'STORAGE_ERROR', message: 'audit.append: write failed', retryable: true });
  });

  it('subclasses expose the fields callers need', () => {
    expect(new ToolNotFoundError('get_prise', ['get_price'])).toMatchObject({ code: 'TOOL_NOT_FOUND', toolName: 'get_prise', suggestions: ['get_price'] });
    const input = new ToolInputError('swap', [{ path: 'amount', message: 'expected number' }]);
    expect(input.message).toBe('Invalid input for tool "swap": amount: expected number');
    expect(new SandboxEscapeError('../x', 'nope')).toMatchObject({ code: 'SANDBOX_ESCAPE', path: '../x' });
    expect(new ApprovalError('APPROVAL_EXPIRED', 'apr_1', 'late')).toMatchObject({ approvalId: 'apr_1', code: 'APPROVAL_EXPIRED' });
    expect(new ToolCallBlockedError('withdraw', 'no', 'EMERGENCY_STOP')).toMatchObject({ toolName: 'withdraw', code: 'EMERGENCY_STOP' });
    expect(new ConfigError('bad', ['a'])).toMatchObject({ code: 'CONFIG_INVALID', fields: ['a'] });
  });

  it('docs/errors.md lists every code', () => {
    const doc = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
    const missing = Object.keys(ERROR_CODES).filter((code) => !doc.includes(`\`${code}\``));
    expect(missing).toEqual([]);
  });
});
