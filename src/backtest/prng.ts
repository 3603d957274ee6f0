/**
 * Seeded random numbers for the synthetic bars, the random strategy and the bootstrap: pure-rand's
 * xoroshiro128+ (the generator fast-check uses), uniform doubles with 53 random bits, normals by Box–Muller.
 */
import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus';
import { uniformFloat64 } from 'pure-rand/distribution/uniformFloat64';

/** A seeded source of random numbers. Same seed, same sequence, on every platform. */
export interface SeededRandom {
  /** Uniform in [0, 1). */
  next(): number;
  /** Standard normal. */
  normal(): number;
  /** Integer in [0, n). */
  int(n: number): number;
  /** A raw 32-bit unsigned integer (cheapest draw). */
  uint32(): number;
}

/** Mix two integers into a 32-bit seed (for per-symbol or per-baseline streams). */
export function mixSeed(seed: number, salt: number): number {
  let h = (Math.imul(seed | 0, 0x9e3779b1) ^ Math.imul(salt | 0, 0x85ebca6b)) | 0;
  h = Math.imul(h ^ (h >>> 16), 0x7feb352d);
  h = Math.imul(h ^ (h >>> 15), 0x846ca68b);
  return (h ^ (h >>> 16)) | 0;
}

/** A {@link SeededRandom} over pure-rand's xoroshiro128+ seeded with `seed` (an integer). */
export function createSeededRandom(seed: number): SeededRandom {
  if (!Number.isFinite(seed)) throw new TypeError(`seed: expected a finite integer, got ${String(seed)}`);
  const rng = xoroshiro128plus(Math.trunc(seed) | 0);
  let spare = Number.NaN;
  const next = () => uniformFloat64(rng);
  return {
    next,
    normal() {
      if (!Number.isNaN(spare)) {
        const s = spare;
        spare = Number.NaN;
        return s;
      }
      let u = next();
      while (u === 0) u = next();
      const v = next();
      const r = Math.sqrt(-2 * Math.log(u));
      spare = r * Math.sin(2 * Math.PI * v);
      return r * Math.cos(2 * Math.PI * v);
    },
    int: (n) => Math.floor(next() * n),
    uint32: () => rng.next() >>> 0,
  };
}
