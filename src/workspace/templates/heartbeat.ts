/**
 * HEARTBEAT.md template. NOT seeded: the agent writes a fresh one at the end of its first turn. Shipped
 * only as a restore template for editors and as the schema reference of {@link renderHeartbeat}.
 */
export const HEARTBEAT_TEMPLATE = `# HEARTBEAT.md - Between-Session Memo

<!-- Rewritten by the agent at every turn end. Only the ## Schedule section is yours: it is kept byte for byte. -->

## State

- last_seen: 1970-01-01T00:00:00.000Z
- session_id: (none)
- surface: (none)
- turn_count: 0

## Open Loops

- (none)

## Schedule

<!-- Recurring checks, one per line, e.g.:
- daily 08:00 Europe/Berlin: summarise overnight moves on the watchlist
- weekly Mon: review open positions against the risk limits in USER.md
-->
`;
