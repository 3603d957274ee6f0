/** Events collected from a turn, with helpers for assertions. */
export interface RecordedEvents<E extends { readonly type: string }> {
  /** Every event, in order. */
  readonly events: readonly E[];
  /** The `type` of every event, in order. */
  readonly types: readonly string[];
  /** Events of one type. */
  ofType<T extends E['type']>(type: T): Array<Extract<E, { type: T }>>;
  /** All `text-delta` text joined. */
  readonly text: string;
}

/**
 * Drain an event stream (e.g. `runtime.run(...)`) into an array, for assertions.
 *
 * @example
 * ```ts
 * const { types, text, ofType } = await recordEvents(runtime.run({ sessionId: 's1', message: 'BTC?' }));
 * expect(types.at(-1)).toBe('turn-end');
 * ```
 */
export async function recordEvents<E extends { readonly type: string }>(iterable: AsyncIterable<E>): Promise<RecordedEvents<E>> {
  const events: E[] = [];
  for await (const event of iterable) events.push(event);
  return {
    events,
    types: events.map((e) => e.type),
    ofType: <T extends E['type']>(type: T) => events.filter((e): e is Extract<E, { type: T }> => e.type === type),
    text: events
      .filter((e) => e.type === 'text-delta')
      .map((e) => String((e as unknown as { delta?: string; text?: string }).delta ?? (e as unknown as { text?: string }).text ?? ''))
      .join(''),
  };
}
