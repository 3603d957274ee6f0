/**
 * The `minara` command. It imports only the public API (`@minara/agent` and its subpaths).
 */
import { readFileSync } from 'node:fs';
import { loadEnv } from '@minara/agent';
import { runDemo } from './demo';

const HELP = `minara — the reference CLI of @minara/agent

Usage:
  minara demo          Run an offline demo (no model key needed): tools, tiers, approvals, audit
  minara --version     Print the version
  minara --help        Show this help
`;

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

async function main(argv: readonly string[]): Promise<number> {
  loadEnv();
  const [command] = argv;
  switch (command) {
    case undefined:
    case '--help':
    case '-h':
    case 'help':
      process.stdout.write(HELP);
      return 0;
    case '--version':
    case '-v':
      process.stdout.write(`${version()}\n`);
      return 0;
    case 'demo':
      return runDemo({ write: (s) => process.stdout.write(s) });
    default:
      process.stderr.write(`minara: unknown command "${command}"\n\n${HELP}`);
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`minara: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
