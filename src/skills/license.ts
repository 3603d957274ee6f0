/**
 * Licence detection for vendored skill packages. Permissive licences are allowed, the GPL family is
 * allowed but flagged copyleft, and anything proprietary, non-commercial or unrecognised is refused.
 */

/** How a licence is treated. */
export type LicenseCategory = 'permissive' | 'copyleft' | 'refused';

/** What was detected, and from where. */
export interface LicenseDetection {
  /** SPDX id (`MIT`, `Apache-2.0`, …), `Proprietary`, or `UNKNOWN`. */
  readonly spdx: string;
  readonly category: LicenseCategory;
  /** The file it came from (`LICENSE`, `SKILL.md#license`), or undefined when none was found. */
  readonly file?: string | undefined;
  /** A short quote of what was found, for messages. */
  readonly evidence: string;
}

const PERMISSIVE = new Set(['MIT', 'MIT-0', 'Apache-2.0', 'BSD-2-Clause', 'BSD-3-Clause', '0BSD', 'ISC', 'Unlicense', 'CC0-1.0', 'Zlib', 'CC-BY-4.0']);
const COPYLEFT = new Set(['MPL-2.0', 'GPL-2.0', 'GPL-3.0', 'LGPL-2.1', 'LGPL-3.0', 'AGPL-3.0', 'EPL-2.0']);

/** Licence file names looked for, in order. */
export const LICENSE_FILE_NAMES = ['LICENSE', 'LICENSE.md', 'LICENSE.txt', 'LICENCE', 'LICENCE.md', 'LICENCE.txt', 'COPYING', 'COPYING.md', 'COPYING.txt', 'UNLICENSE'];

const RULES: ReadonlyArray<readonly [string, (t: string) => boolean]> = [
  ['AGPL-3.0', (t) => /gnu affero general public license/.test(t)],
  ['LGPL-3.0', (t) => /gnu lesser general public license/.test(t) && /version 3/.test(t)],
  ['LGPL-2.1', (t) => /gnu (lesser|library) general public license/.test(t)],
  ['GPL-3.0', (t) => /gnu general public license/.test(t) && /version 3/.test(t)],
  ['GPL-2.0', (t) => /gnu general public license/.test(t)],
  ['MPL-2.0', (t) => /mozilla public license,? (version|v\.?) ?2\.0/.test(t)],
  ['EPL-2.0', (t) => /eclipse public license - v 2\.0/.test(t)],
  ['Apache-2.0', (t) => /apache license/.test(t) && /version 2\.0/.test(t)],
  ['MIT-0', (t) => /permission is hereby granted, free of charge/.test(t) && !/the above copyright notice and this permission notice shall be included/.test(t)],
  ['MIT', (t) => /permission is hereby granted, free of charge/.test(t)],
  ['BSD-3-Clause', (t) => /redistribution and use in source and binary forms/.test(t) && /neither the name/.test(t)],
  ['BSD-2-Clause', (t) => /redistribution and use in source and binary forms/.test(t)],
  ['0BSD', (t) => /permission to use, copy, modify, and\/or distribute this software for any purpose with or without fee is hereby granted\.\s+the software is provided "as is"/.test(t) && !/copyright notice and this permission notice appear/.test(t)],
  ['ISC', (t) => /permission to use, copy, modify, and\/or distribute this software for any purpose/.test(t)],
  ['Unlicense', (t) => /this is free and unencumbered software released into the public domain/.test(t)],
  ['CC0-1.0', (t) => /cc0 1\.0 universal/.test(t) || /creative commons legal code\s+cc0/.test(t)],
  ['Zlib', (t) => /this software is provided 'as-is', without any express or implied\s+warranty/.test(t) && /altered source versions must be plainly marked/.test(t)],
];

const RESTRICTIVE = [
  /all rights reserved/,
  /proprietary/,
  /confidential/,
  /may not (be )?(copied|redistributed|distributed|reproduced|modified)/,
  /non-?commercial/,
  /without (the )?(prior )?written permission/,
  /commercial license/,
];

/** Classify an SPDX id or SPDX expression (`MIT OR Apache-2.0`). */
export function classifySpdx(spdx: string): LicenseDetection {
  const id = spdx.trim();
  const parts = id.split(/\s+(?:OR|AND)\s+|[()]/).map((p) => normalizeSpdx(p)).filter(Boolean);
  if (parts.length === 0) return { spdx: 'UNKNOWN', category: 'refused', evidence: id };
  const orOnly = !/\sAND\s/.test(id);
  const cats = parts.map(categoryOf);
  // `A OR B`: the most permissive option applies; `A AND B`: the most restrictive.
  const pick = orOnly ? best(cats) : worst(cats);
  const canonical = parts.length === 1 ? (parts[0] as string) : id;
  return { spdx: pick === 'refused' && parts.some((p) => /proprietary/i.test(p)) ? 'Proprietary' : canonical, category: pick, evidence: id };
}

/**
 * Detect a licence from a licence file's text. SPDX-License-Identifier lines win; known licence texts
 * next; a restrictive phrase ("All rights reserved" without a grant, "proprietary") means refused;
 * anything else is `UNKNOWN` and refused.
 */
export function detectLicense(text: string, file?: string): LicenseDetection {
  const withFile = (d: LicenseDetection): LicenseDetection => (file === undefined ? d : { ...d, file });
  const spdxLine = /SPDX-License-Identifier:\s*([^\n*]+)/i.exec(text);
  if (spdxLine?.[1]) return withFile(classifySpdx(spdxLine[1]));
  const t = text.toLowerCase().replace(/[ \t]+/g, ' ').replace(/\s*\n\s*/g, '\n').replace(/\n(?!\n)/g, ' ');
  for (const [spdx, test] of RULES) {
    if (test(t)) return withFile({ spdx, category: categoryOf(spdx), evidence: firstLine(text) });
  }
  const short = text.trim();
  if (short.length > 0 && short.length < 80 && !/\n/.test(short)) {
    const d = classifySpdx(short);
    if (d.spdx !== 'UNKNOWN' && categoryOf(d.spdx) !== 'refused') return withFile(d);
  }
  for (const re of RESTRICTIVE) {
    const m = re.exec(t);
    if (m) return withFile({ spdx: 'Proprietary', category: 'refused', evidence: quote(text, m[0]) });
  }
  return withFile({ spdx: 'UNKNOWN', category: 'refused', evidence: firstLine(text) || '(empty file)' });
}

function categoryOf(spdx: string): LicenseCategory {
  if (PERMISSIVE.has(spdx)) return 'permissive';
  if (COPYLEFT.has(spdx)) return 'copyleft';
  return 'refused';
}

function normalizeSpdx(raw: string): string {
  const v = raw.trim().replace(/\+$/, '').replace(/-(only|or-later)$/i, '');
  if (!v) return '';
  const map: Record<string, string> = {
    mit: 'MIT', 'mit-0': 'MIT-0', 'apache-2.0': 'Apache-2.0', apache2: 'Apache-2.0', 'apache 2.0': 'Apache-2.0',
    'bsd-2-clause': 'BSD-2-Clause', 'bsd-3-clause': 'BSD-3-Clause', '0bsd': '0BSD', isc: 'ISC', unlicense: 'Unlicense',
    'cc0-1.0': 'CC0-1.0', cc0: 'CC0-1.0', zlib: 'Zlib', 'cc-by-4.0': 'CC-BY-4.0', 'mpl-2.0': 'MPL-2.0', 'gpl-2.0': 'GPL-2.0',
    'gpl-3.0': 'GPL-3.0', gpl: 'GPL-3.0', 'lgpl-2.1': 'LGPL-2.1', 'lgpl-3.0': 'LGPL-3.0', 'agpl-3.0': 'AGPL-3.0', 'epl-2.0': 'EPL-2.0',
  };
  return map[v.toLowerCase()] ?? v;
}

function best(cats: LicenseCategory[]): LicenseCategory {
  return cats.includes('permissive') ? 'permissive' : cats.includes('copyleft') ? 'copyleft' : 'refused';
}
function worst(cats: LicenseCategory[]): LicenseCategory {
  return cats.includes('refused') ? 'refused' : cats.includes('copyleft') ? 'copyleft' : 'permissive';
}
function firstLine(text: string): string {
  return (text.trim().split('\n')[0] ?? '').trim().slice(0, 120);
}
function quote(text: string, phrase: string): string {
  const i = text.toLowerCase().indexOf(phrase.split(' ')[0] ?? phrase);
  const line = i >= 0 ? text.slice(text.lastIndexOf('\n', i) + 1, text.indexOf('\n', i) >= 0 ? text.indexOf('\n', i) : undefined) : phrase;
  return line.trim().slice(0, 160);
}
