import type { z } from 'zod';
import { ProviderError } from './provider-fetch';

/** Validate a provider response; a wrong shape is PROVIDER_ERROR naming the fields, never a partial result. */
export function parsed<S extends z.ZodType>(provider: string, what: string, schema: S, body: unknown): z.output<S> {
  const r = schema.safeParse(body);
  if (r.success) return r.data;
  const detail = r.error.issues.slice(0, 3).map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
  throw new ProviderError('PROVIDER_ERROR', provider, `malformed ${what} response (${detail})`, { attempts: 1 });
}

/** A price that is a finite positive number (strings allowed), else PROVIDER_ERROR: never a silent wrong price. */
export function positivePrice(provider: string, symbol: string, value: unknown): number {
  const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : typeof value === 'number' ? value : Number.NaN;
  if (!(Number.isFinite(n) && n > 0)) throw new ProviderError('PROVIDER_ERROR', provider, `no valid price for ${symbol} (got ${JSON.stringify(value) ?? 'nothing'})`, { attempts: 1 });
  return n;
}
