import { spawn } from 'node:child_process';

/** Run a TypeScript fixture in a child Node process (tsx) and parse the JSON it prints on stdout. */
export function runFixture<T>(fixture: string, args: readonly string[]): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', fixture, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out) as T) : reject(new Error(`${fixture} ${args.join(' ')} exited ${code}: ${err}`))));
  });
}
