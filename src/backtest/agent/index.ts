/**
 * The agent in the backtest loop (issue 40): model cassettes, costs, contamination, point-in-time runs of the
 * real runtime. Re-exported by `@minara/agent/backtest`.
 *
 * @module
 */
export { canonicalHash, canonicalJson, canonicalize } from './canonical-json';
export {
  cassetteKey,
  cassetteRequest,
  createCassetteModel,
  loadCassette,
  type CassetteEntry,
  type CassetteFile,
  type CassetteMode,
  type CassetteModel,
  type CassetteModelOptions,
  type CassetteRequest,
} from './cassette';
