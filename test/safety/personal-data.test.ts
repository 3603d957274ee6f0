import { mkdir, readFile, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createWorkspace, findPersonalData, normaliseForScan } from '@minara/agent';
import { cleanupTempDirs, tempDir, textModel } from '../workspace/helpers';

afterEach(cleanupTempDirs);

const classes = (text: string) => findPersonalData(text).map((h) => h.pattern);
// A valid BIP-39 phrase (the standard all-"abandon … about" test vector) and a random 12-word run from the list.
const SEED = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';
const RUN = 'tribe engage lottery velvet cabin orbit pudding mimic spray ozone gallery harbor';

describe('findPersonalData: positives', () => {
  it.each([
    ['e-mail', 'write to ana.lopez+tax@example.co.uk today', 'email'],
    ['international phone', 'call +44 20 7946 0958 after 5', 'phone'],
    ['US phone', 'my cell is (415) 555-0132', 'phone'],
    ['SSN', 'SSN 123-45-6789 on file', 'us_ssn'],
    ['Visa test card (Luhn)', 'card 4111 1111 1111 1111 exp 12/29', 'card_number'],
    ['Amex test card', 'amex 3782-822463-10005', 'card_number'],
    ['IBAN (mod-97)', 'IBAN DE89 3704 0044 0532 0130 00 for rent', 'iban'],
    ['seed phrase', `backup: ${SEED}`, 'seed_phrase'],
    ['numbered seed phrase', RUN.split(' ').map((w, i) => `${i + 1}. ${w}`).join(' '), 'seed_phrase'],
  ])('%s', (_label, text, expected) => {
    expect(classes(text)).toContain(expected);
  });

  it('sees through zero-width characters and full-width digits', () => {
    expect(classes('key sk-\u200Bant-\u200Dabcdefghijklmnopqrstuvwxyz12')).toContain('anthropic_key');
    expect(classes('card ４１１１ １１１１ １１１１ １１１１')).toContain('card_number');
    expect(classes('mail ana\u2060@example.com')).toContain('email');
    expect(normaliseForScan('a\u200Bb\uFEFFc')).toBe('abc');
  });
});

describe('findPersonalData: near misses stay clean', () => {
  it.each([
    ['a card number failing Luhn', 'order 4111 1111 1111 1112 shipped'],
    ['an IBAN with a bad check digit', 'IBAN DE00 3704 0044 0532 0130 00'],
    ['prices and dates', 'BTC at 97,250.50 on 2026-03-02, up 3.2% since 2026-02-01'],
    ['an invalid SSN area', 'ticket 000-12-3456 and 666-12-3456'],
    ['eleven list words', RUN.split(' ').slice(0, 11).join(' ')],
    ['ordinary prose', 'The user prefers to buy ETH on dips and keep a small cash reserve for fees.'],
    ['a version string', 'upgraded to 4.5.4 then 10.2.1'],
  ])('%s', (_label, text) => {
    expect(classes(text)).toEqual([]);
  });
});

describe('the dreaming gate quarantines personal data', () => {
  async function workspaceWithLog(): Promise<string> {
    const dir = await tempDir();
    await writeFile(join(dir, 'MEMORY.md'), '# MEMORY.md\n');
    await mkdir(join(dir, 'memory'));
    await writeFile(join(dir, 'memory', '2026-03-01-s1.md'), 'talk\n');
    const t = Date.parse('2026-03-01T00:00:00Z') / 1000;
    await utimes(join(dir, 'memory', '2026-03-01-s1.md'), t, t);
    return dir;
  }

  it.each([
    ['email', '### Facts\n- Reach the user at ana@example.com'],
    ['card_number', '### Facts\n- Pays with 4111-1111-1111-1111'],
    ['seed_phrase', `### Facts\n- Wallet words: ${SEED}`],
    ['anthropic_key', '### Facts\n- Key sk-\u200Bant-abcdefghijklmnopqrstuvwxyz12'],
  ])('%s never reaches MEMORY.md', async (pattern, reply) => {
    const dir = await workspaceWithLog();
    const ws = createWorkspace({ dir, now: () => new Date('2026-03-02T12:00:00Z'), dreaming: { model: textModel(reply) } });
    expect(await ws.runDreamTick()).toMatchObject({ outcome: 'pii_detected_quarantine', pattern });
    expect(await readFile(join(dir, 'MEMORY.md'), 'utf8')).toBe('# MEMORY.md\n');
  });
});
