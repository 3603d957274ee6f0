import { MinaraError } from '../errors/minara-error';

/**
 * The oldest Node.js `@minara/agent` runs on. The native SQLite addon (better-sqlite3) is built for Node 22 and
 * later: an older Node does not fail with an error inside it, it crashes the process (a segmentation fault).
 */
export const MIN_NODE_VERSION = '22.12.0';

/**
 * Why this Node.js cannot run the package, or `undefined` when it can.
 *
 * @example
 * ```ts
 * nodeVersionProblem('20.20.2'); // '@minara/agent needs Node.js 22.12 or newer (this is 20.20.2). …'
 * nodeVersionProblem('24.1.0');  // undefined
 * ```
 */
export function nodeVersionProblem(version: string = process.versions.node): string | undefined {
  const [major = 0, minor = 0] = version.split('.').map((n) => Number.parseInt(n, 10) || 0);
  const [minMajor = 22, minMinor = 12] = MIN_NODE_VERSION.split('.').map(Number);
  if (major > minMajor || (major === minMajor && minor >= minMinor)) return undefined;
  return `@minara/agent needs Node.js ${minMajor}.${minMinor} or newer (this is ${version}): its SQLite addon would crash this one. Install a current Node.js (https://nodejs.org).`;
}

/**
 * Refuse an unsupported Node.js with a clear error before anything loads the native SQLite addon. Every entry of
 * the package calls it when loaded, and the SQLite engine again before it opens a database.
 *
 * @throws MinaraError `UNSUPPORTED_RUNTIME` naming the version found and the one needed.
 */
export function assertSupportedNode(version?: string): void {
  const problem = nodeVersionProblem(version);
  if (problem !== undefined) throw new MinaraError('UNSUPPORTED_RUNTIME', problem);
}
