/** Levenshtein distance, bounded work for short identifiers. */
export function editDistance(a: string, b: string): number {
  if (a === b) return 0;
  const prev = new Array<number>(b.length + 1);
  for (let j = 0; j <= b.length; j++) prev[j] = j;
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0]!;
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = prev[j]!;
      prev[j] = Math.min(prev[j]! + 1, prev[j - 1]! + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = tmp;
    }
  }
  return prev[b.length]!;
}

/** Up to `max` candidates close to `input` (substring match or small edit distance), closest first. */
export function closestMatches(input: string, candidates: Iterable<string>, max = 3): string[] {
  const needle = input.toLowerCase();
  const scored: Array<[string, number]> = [];
  for (const c of candidates) {
    const hay = c.toLowerCase();
    const d = hay.includes(needle) || needle.includes(hay) ? 0.5 : editDistance(needle, hay);
    if (d <= Math.max(2, Math.floor(needle.length / 3))) scored.push([c, d]);
  }
  scored.sort((x, y) => x[1] - y[1] || x[0].localeCompare(y[0]));
  return scored.slice(0, max).map(([c]) => c);
}
