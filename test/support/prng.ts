/**
 * A seeded pseudo-random generator for tests that draw many values: mulberry32, in 32-bit integer arithmetic.
 * (A linear congruential step written with float multiplication, `seed * 1103515245 + 12345`, loses precision
 * above 2^53 and falls into cycles of a few hundred to ten thousand values.)
 */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
