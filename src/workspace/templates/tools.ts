/** Shipped TOOLS.md template (no frontmatter). */
export const TOOLS_TEMPLATE = `# TOOLS.md - Local Notes

Skills define how tools work. This file is for the specifics of this setup.

## What Goes Here

- Venues and accounts in use (by nickname, never with credentials)
- Preferred data sources and their quirks (rate limits, delays, symbol formats)
- Default order settings (slippage tolerance, order type, gas preferences)
- Anything environment-specific the agent should know before calling a tool

## Examples

### Venues

- main-cex: spot + perps, USDT-margined
- hot-wallet: EVM, Base and Arbitrum only

### Data

- Prices: prefer the exchange feed over aggregators for execution-grade quotes

## Why Separate?

Skills are shared; your setup is yours. Keeping them apart means you can update skills without losing your notes.
`;
