import { normalizeEntity } from '../memory/entities';
import { extractRoutingEntities } from '../skills/taxonomy-entities';

/**
 * An asset symbol as the learning tables key it: upper case, `$` dropped, forex pairs kept as pairs
 * (`EUR/USD` → `EURUSD`, never `EUR`), perp suffixes dropped (`BTC-PERP` → `BTC`).
 */
export function normalizeAsset(input: string): string {
  let out = assetCache.get(input);
  if (out === undefined) {
    out = normalize(input);
    if (assetCache.size >= 1024) assetCache.clear();
    assetCache.set(input, out);
  }
  return out;
}

const assetCache = new Map<string, string>();

function normalize(input: string): string {
  const raw = input.trim().replace(/^\$/u, '').replace(/[-_ ]?perps?$/iu, '');
  const pair = /^([A-Za-z]{3})\s*[/-]\s*([A-Za-z]{3})$/u.exec(raw);
  if (pair) return `${pair[1]}${pair[2]}`.toUpperCase();
  const e = normalizeEntity(raw);
  return (e.kind === 'forex' ? e.key.replace('/', '') : e.key).toUpperCase();
}

const classCache = new Map<string, string | undefined>();

/** The asset class of a symbol (`BTC` → `crypto_major`, `EURUSD` → `forex`), when the taxonomy knows it. */
export function assetClassOf(symbol: string): string | undefined {
  if (classCache.has(symbol)) return classCache.get(symbol);
  const cls = classify(symbol);
  if (classCache.size >= 1024) classCache.clear();
  classCache.set(symbol, cls);
  return cls;
}

function classify(symbol: string): string | undefined {
  const s = normalizeAsset(symbol);
  const fx = /^([A-Z]{3})([A-Z]{3})$/u.exec(s);
  const text = fx && extractRoutingEntities(`${fx[1]}/${fx[2]}`).some((e) => e.kind === 'forex_pair') ? `${fx[1]}/${fx[2]}` : s;
  for (const e of extractRoutingEntities(text)) if (e.assetClass !== undefined && e.kind !== 'market') return e.assetClass;
  return undefined;
}

/** The assets (normalised) and asset classes a message mentions, in order. */
export function assetsOfMessage(message: string): { readonly assets: string[]; readonly classes: string[] } {
  const assets: string[] = [];
  const classes: string[] = [];
  for (const e of extractRoutingEntities(message)) {
    if (e.kind === 'ticker' || e.kind === 'asset' || e.kind === 'forex_pair') {
      const a = normalizeAsset(e.value);
      if (!assets.includes(a)) assets.push(a);
    }
    if (e.assetClass !== undefined && !classes.includes(e.assetClass)) classes.push(e.assetClass);
  }
  return { assets, classes };
}
