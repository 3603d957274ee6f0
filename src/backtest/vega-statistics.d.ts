// vega-statistics ships no type declarations; these are the two functions the metrics use.
declare module 'vega-statistics' {
  /** Normal CDF at `value` (West 2005, double precision). */
  export function cumulativeNormal(value: number, mean?: number, stdev?: number): number;
  /** Normal quantile of `p` (Giles' erfinv). */
  export function quantileNormal(p: number, mean?: number, stdev?: number): number;
}
