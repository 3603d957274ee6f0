/**
 * Personal data and secrets that reached MEMORY.md through dreaming (issue 33, item 7): each form below must be
 * found by `findPersonalData` and quarantine the dream; the near misses stay clean; and on the LoCoMo
 * development turns (read from `../shared/data/locomo-dev`, never copied) at most 1 % of turns would be quarantined.
 */
import { mkdir, readFile, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createWorkspace, findPersonalData, findSecrets, redactSecrets } from '@minara/agent';
import { LOCOMO_DEV_PATH, loadLocomo, turnContent } from '../../bench/memory/locomo-eval';
import { realComponent } from '../support/real-component';
import { cleanupTempDirs, tempDir, textModel } from '../workspace/helpers';

afterEach(cleanupTempDirs);

const classes = (text: string) => findPersonalData(text).map((h) => h.pattern);
const HEX_KEY = '0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318';
// The Bitcoin wiki's WIF example (uncompressed and compressed forms of one key) and BIP-32 test vector 1's master key.
const WIF = '5HueCGU8rMjxEXxiPuD5BDku4MkFqeZyd4dZ1jvhTVqvbTLvyTJ';
const WIF_COMPRESSED = 'KwdMAjGmerYanjeui5SHS7JkmpZvVipYvB2LJGU1ZxJwYvP98617';
const XPRV = 'xprv9s21ZrQH143K3QTDL4LXw2F7HEK3wJUD2nW2nRk4stbPy6cq3jPPqjiChkVvvNKmPGJxWUtg6LnF5kejMRNNU3TGtRBeJgk33yuGBxrMPHi';
const ANTHROPIC = 'sk-ant-api03-abcdefghijklmnopqrstuvwxyz123456';
const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');

/** The attack set: text a dream may hold, and the class it must be quarantined as. */
const LEAKS: ReadonlyArray<readonly [label: string, text: string, expected: string]> = [
  ['a raw 64-hex private key with 0x', `Imported wallet key ${HEX_KEY}`, 'hex_private_key'],
  ['a 64-hex key labelled as a private key, no 0x', `private key: ${HEX_KEY.slice(2)}`, 'hex_private_key'],
  ['a lower-case IBAN with spaces', 'Rent goes to de89 3704 0044 0532 0130 00 each month', 'iban'],
  ['a lower-case IBAN, compact, followed by prose', 'iban gb29nwbk60161331926819 for the landlord', 'iban'],
  ['a bare 10-digit phone number', 'Call the user on 4155550132 after lunch', 'phone'],
  ['a phone number with dots', 'Her number is 415.555.0132', 'phone'],
  ['an e-mail written (at) … (dot)', 'Reach Ana at ana.lopez (at) example (dot) com for tax questions', 'email'],
  ['an e-mail written [at] … [dot] … [dot]', 'contact: ana [at] example [dot] co [dot] uk', 'email'],
  ['an e-mail written " at " … " dot "', 'write to ana.lopez at example dot com', 'email'],
  ['an API key with spaces', 'Key: sk-ant-api03- abcd efgh ijkl mnop qrst uvwx yz12', 'anthropic_key'],
  ['an API key with every character spaced', `token ${'ghp_abcdefghijklmnopqrstuvwxyz0123'.split('').join(' ')}`, 'github_pat'],
  ['an API key in base64', `The config blob was ${b64(`{"apiKey":"${ANTHROPIC}"}`)}`, 'anthropic_key'],
  ['an API key in base64url without padding', `env=${Buffer.from(`OPENAI_API_KEY=sk-proj-${'Ab1'.repeat(12)}`).toString('base64url')}`, 'openai_key'],
  ['a WIF private key', `paper wallet ${WIF}`, 'wif_private_key'],
  ['a compressed WIF private key', `import ${WIF_COMPRESSED} into the node`, 'wif_private_key'],
  ['an xprv extended private key', `backup ${XPRV}`, 'extended_private_key'],
];

describe('findPersonalData: the forms that reached MEMORY.md', () => {
  it.each(LEAKS)('%s', (_label, text, expected) => {
    expect(classes(text)).toContain(expected);
  });

  it('WIF and xprv keys are secrets everywhere (the audit redactor and the input scanner too)', () => {
    expect(findSecrets(`k ${WIF}`).map((h) => h.pattern)).toEqual(['wif_private_key']);
    expect(redactSecrets(`k ${XPRV} end`)).toBe('k [REDACTED:extended_private_key] end');
  });
});

describe('findPersonalData: near misses of the new detectors stay clean', () => {
  it.each([
    ['a WIF-shaped string with a bad checksum', `paper wallet ${WIF.slice(0, -1)}K`],
    ['an xprv-shaped string with a bad checksum', `backup ${XPRV.slice(0, -1)}j`],
    ['an xpub (public, not a secret)', 'watch xpub661MyMwAqRbcFtXgS5sYJABqqG9YLmC4Q1Rdap9gSE8NqtwybGhePY2gZ29ESFjqJoCu1Rupje8YtGqsefD265TMg7usUDFdp6W1EGMcet8'],
    ['a 10-digit unix timestamp', 'snapshot at 1700000000 ms'],
    ['a 10-digit order id that is no phone number', 'order 1234567890 filled'],
    ['a 64-hex sha256 without 0x or a key label', 'sha256 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08'],
    ['base64 of ordinary text', `note ${b64('The user prefers to buy ETH on dips and keep a cash reserve.')}`],
    ['base64 of random bytes', 'blob 3q2+7wAAAAAAAAAAq83vASNFZ4mrze8BI0VniavN7wEjRWeJ'],
    ['the words at and dot in prose', 'We met at the cafe and she wore a polka dot dress'],
    ['a lower-case word that looks like a country code', 'de12 items were on the list'],
    ['a spaced word after a key prefix mention', 'anthropic keys start with sk-ant and must stay secret'],
  ])('%s', (_label, text) => {
    expect(classes(text)).toEqual([]);
  });
});

describe('the dreaming gate quarantines each form', () => {
  it.each(LEAKS)('%s never reaches MEMORY.md', async (_label, text, expected) => {
    const dir = await tempDir();
    await writeFile(join(dir, 'MEMORY.md'), '# MEMORY.md\n');
    await mkdir(join(dir, 'memory'));
    await writeFile(join(dir, 'memory', '2026-03-01-s1.md'), 'talk\n');
    const t = Date.parse('2026-03-01T00:00:00Z') / 1000;
    await utimes(join(dir, 'memory', '2026-03-01-s1.md'), t, t);
    const ws = createWorkspace({ dir, now: () => new Date('2026-03-02T12:00:00Z'), dreaming: { model: textModel(`### Facts\n- ${text}`) } });
    expect(await ws.runDreamTick()).toMatchObject({ outcome: 'pii_detected_quarantine', pattern: expected });
    expect(await readFile(join(dir, 'MEMORY.md'), 'utf8')).toBe('# MEMORY.md\n');
  });
});

const locomo = loadLocomo();
const available = realComponent('The LoCoMo development split', locomo !== undefined, `expected at ${LOCOMO_DEV_PATH} (see ../shared/data/locomo-dev/README.md)`);

describe.skipIf(!available)('false positives on the LoCoMo development turns', () => {
  it('at most 1 % of turns would be quarantined', () => {
    let turns = 0;
    const flagged: string[] = [];
    for (const conversation of locomo ?? []) {
      for (const session of conversation.sessions) {
        for (const turn of session.turns) {
          turns++;
          const hits = findPersonalData(turnContent(turn, session.date_time));
          if (hits.length > 0) flagged.push(`${conversation.conversation_id}/${turn.dia_id}: ${hits.map((h) => h.pattern).join(',')}`);
        }
      }
    }
    expect(turns).toBe(2760);
    // The figure docs/workspace.md quotes; printed so a change shows in the log.
    console.info(`personal-data false positives on LoCoMo dev: ${flagged.length} of ${turns} turns (${((100 * flagged.length) / turns).toFixed(2)} %)${flagged.length ? `: ${flagged.join('; ')}` : ''}`);
    expect(flagged.length / turns).toBeLessThanOrEqual(0.01);
  });
});
