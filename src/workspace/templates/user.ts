/** Shipped USER.md template (no frontmatter). */
export const USER_TEMPLATE = `# USER.md - About Your Operator

- **Name:**
- **What to call them:**
- **Timezone:**
- **Focus:** _(e.g. BTC/ETH swing trading, DeFi yield, long-term allocation)_
- **Risk tolerance:** _(conservative / moderate / aggressive; max loss per trade or per day)_
- **Default venue:** _(exchange, chain or broker used unless told otherwise)_
- **Watchlist:** _(tickers or tokens to keep an eye on)_
- **Notes:**

## Context

_(What they care about, what annoys them, what they are working towards. Build this over time.)_
`;
