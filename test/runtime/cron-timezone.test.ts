import { createBackgroundRunner, createScheduler, MinaraError, parseCron, parseSchedule, resolveTimeZone } from '@minara/agent';
import { createInMemoryStorage } from '@minara/agent/testing';
import { describe, expect, it } from 'vitest';

const iso = (d: Date) => d.toISOString();

describe('cron in a time zone (croner)', () => {
  it('keeps 09:00 New York on weekdays across the March and November daylight-saving changes', () => {
    const open = parseCron('0 9 * * 1-5', { timezone: 'New York' });
    expect(open.timezone).toBe('America/New_York');
    // Friday 6 March 2026 is still EST (UTC−5); Monday 9 March is EDT (UTC−4): the clocks moved on Sunday the 8th.
    const fri = open.next(new Date('2026-03-06T00:00:00Z'));
    expect(iso(fri)).toBe('2026-03-06T14:00:00.000Z');
    expect(iso(open.next(fri))).toBe('2026-03-09T13:00:00.000Z');
    // Back to EST on Sunday 1 November 2026: Friday 30 October is 13:00Z, Monday 2 November 14:00Z.
    const oct = open.next(new Date('2026-10-30T00:00:00Z'));
    expect(iso(oct)).toBe('2026-10-30T13:00:00.000Z');
    expect(iso(open.next(oct))).toBe('2026-11-02T14:00:00.000Z');
    expect(open.matches(new Date('2026-03-09T13:00:20Z'))).toBe(true);
    expect(open.matches(new Date('2026-03-09T14:00:00Z'))).toBe(false);
  });

  it('a wall-clock time the spring change skips runs at the first minute after it, once', () => {
    const nightly = parseCron('30 2 * * *', { timezone: 'America/New_York' });
    const runs: string[] = [];
    let t = new Date('2026-03-07T00:00:00Z');
    for (let i = 0; i < 3; i++) runs.push(iso((t = nightly.next(t))));
    expect(runs).toEqual(['2026-03-07T07:30:00.000Z', '2026-03-08T07:00:00.000Z', '2026-03-09T06:30:00.000Z']);
  });

  it('reads UTC without a zone, and the old syntax as before', () => {
    expect(parseCron('0 9 * * 1-5').timezone).toBe('UTC');
    expect(iso(parseCron('5/15 * * * *').next(new Date('2026-01-01T00:06:00Z')))).toBe('2026-01-01T00:20:00.000Z');
    expect(iso(parseCron('0 9 * * 7').next(new Date('2026-01-01T00:00:00Z')))).toBe('2026-01-04T09:00:00.000Z'); // 7 is Sunday
    expect(() => parseCron('0 25 * * *')).toThrow(/hour "25"/);
  });

  it('names the zone it cannot resolve; resolveTimeZone takes IANA names and their cities', () => {
    expect(resolveTimeZone('new york')).toBe('America/New_York');
    expect(resolveTimeZone('Los_Angeles')).toBe('America/Los_Angeles');
    expect(resolveTimeZone('Europe/London')).toBe('Europe/London');
    expect(resolveTimeZone('utc')).toBe('UTC');
    expect(resolveTimeZone('Atlantis')).toBeUndefined();
    expect(() => parseCron('0 9 * * *', { timezone: 'Atlantis' })).toThrow(MinaraError);
    expect(() => parseCron('0 9 * * *', { timezone: 'Atlantis' })).toThrow(/time zone "Atlantis"/);
  });

  it('## Schedule lines name a zone: weekdays, daily and cron', () => {
    const parsed = parseSchedule(
      [
        '- weekdays 9:00 New York: market open brief',
        '- daily 18:30 Europe/London: workflow close-check',
        '- cron 0 8 * * 1 Asia/Tokyo: weekly plan',
        '- daily 07:00: morning brief',
        '- daily 07:00 check funding',
        '- daily 07:00 Mars/Olympus: brief',
      ].join('\n'),
    );
    expect(parsed.entries.map((e) => ({ cron: e.cron, timezone: e.timezone, instruction: e.instruction }))).toEqual([
      { cron: '0 9 * * 1-5', timezone: 'America/New_York', instruction: 'market open brief' },
      { cron: '30 18 * * *', timezone: 'Europe/London', instruction: 'workflow close-check' },
      { cron: '0 8 * * 1', timezone: 'Asia/Tokyo', instruction: 'weekly plan' },
      { cron: '0 7 * * *', timezone: undefined, instruction: 'morning brief' },
      { cron: '0 7 * * *', timezone: undefined, instruction: 'check funding' },
    ]);
    expect(parsed.entries[1]!.workflow).toBe('close-check');
    expect(parsed.problems).toEqual([{ line: 'daily 07:00 Mars/Olympus: brief', reason: expect.stringMatching(/unknown time zone "Mars\/Olympus"/) }]);
  });

  it('the background runner and the scheduler schedule a zoned job in its zone', () => {
    const now = () => new Date('2026-03-06T15:00:00Z'); // Friday, after 09:00 EST
    const runner = createBackgroundRunner({ storage: createInMemoryStorage(), now, jobs: [{ id: 'brief', description: 'Brief', cron: '0 9 * * 1-5', timezone: 'New York', run: () => undefined }] });
    const [status] = runner.status();
    expect(status!.nextRunAt).toBe('2026-03-09T13:00:00.000Z'); // Monday 09:00 EDT
    expect(status!.schedule).toBe('cron 0 9 * * 1-5 America/New_York');
    const scheduler = createScheduler({ now });
    scheduler.add({ id: 'brief', cron: '0 9 * * 1-5', timezone: 'America/New_York', run: () => undefined });
    expect(scheduler.jobs()[0]!.nextRunAt).toBe('2026-03-09T13:00:00.000Z');
  });
});
