#!/usr/bin/env python3
"""
An independent reference backtester for @minara/agent/backtest (test/backtest/reference.test.ts runs it).
It shares no code with the engine: a plain per-bar loop over a pandas DataFrame.

Conventions (the engine's, stated in docs/backtest.md):
  * Orders decided on bar t fill at bar t+1's open. An order decided on the last bar never fills.
  * Costs: fee = max(fee_min, notional * fee_bps / 1e4), charged on the pre-slippage notional at the mark;
    slippage (fixed bps) then reduces what the order receives (the paper engine's order of operations).
  * Buy with notional N USD at mark m:  fee f = max(min, N*bps); value = (N - f) * (1 - s); qty = value / m;
    cash -= N; cost basis += N; realised += 0 (fees and slippage are part of the cost basis, the retail convention).
  * Buy q units: spend N so that the above gives q: X = q*m/(1-s); N = X/(1-bps) if that fee >= min, else X + min.
  * Sell q units at mark m: f = max(min, q*m*bps); cash += (q*m - f)*(1-s); cost removed = basis*q/held (average
    cost); realised += proceeds - cost removed. A sell by notional converts at the fill mark and is clamped to the
    position; a sell by quantity above the position (beyond a 1e-9 relative tolerance) is rejected.
  * A buy needing more cash than held (beyond 1e-9) is rejected. Positions below 1e-12 units are zero.
  * Equity at bar t = cash + sum(position * close at t), after the fills at t's open.
  * A trade is a round trip from flat to flat on one symbol; its P&L is the sum of its fills' realised P&L.
Input (stdin): {"cases": [{"symbols", "times", "open": {sym: [...]}, "close": {...}, "cash", "fee_bps", "fee_min",
"slip_bps", "orders": [{"index", "symbol", "side", "quantity"?, "notional"?}]}]}. Output (stdout): per case
{"fills": [...], "equity": [...], "rejected": [...], "trades": [...]}.
"""
import json
import sys

import pandas as pd


def run_case(c):
    symbols = c["symbols"]
    frame = pd.DataFrame({"time": c["times"]})
    for s in symbols:
        frame[f"{s}_open"] = c["open"][s]
        frame[f"{s}_close"] = c["close"][s]
    bps, fmin, slip = c["fee_bps"], c["fee_min"], c["slip_bps"] / 1e4
    cash = float(c["cash"])
    pos = {s: 0.0 for s in symbols}
    basis = {s: 0.0 for s in symbols}
    open_trade = {}
    fills, rejected, trades, equity = [], [], [], []
    by_index = {}
    for k, o in enumerate(c["orders"]):
        by_index.setdefault(o["index"], []).append((k, o))
    pending = []

    def fee_of(notional):
        return max(fmin, notional * bps / 1e4)

    for i, row in enumerate(frame.itertuples(index=False)):
        row = row._asdict()
        t = row["time"]
        for k, o in pending:
            s = o["symbol"]
            m = row[f"{s}_open"]
            side = o["side"]
            if side == "buy":
                if "notional" in o:
                    n_in = o["notional"]
                else:
                    x = o["quantity"] * m / (1 - slip)
                    prop = x / (1 - bps / 1e4)
                    n_in = prop if prop * bps / 1e4 >= fmin else x + fmin
                if n_in > cash + 1e-9:
                    rejected.append({"order": k, "rule": "insufficient_cash"})
                    continue
                n_in = min(n_in, cash)
                f = fee_of(n_in)
                value = max(0.0, (n_in - f) * (1 - slip))
                if not value > 0:
                    rejected.append({"order": k, "rule": "invalid_order"})
                    continue
                qty = value / m
                price = m / (1 - slip)
                cash_delta, basis_delta, realized = -n_in, n_in, 0.0
            else:
                held = pos[s]
                qty = o["quantity"] if "quantity" in o else o["notional"] / m
                if qty > held * (1 + 1e-9) + 1e-12:
                    if "quantity" in o or held <= 0:
                        rejected.append({"order": k, "rule": "insufficient_position"})
                        continue
                    qty = held
                qty = min(qty, held)
                f = fee_of(qty * m)
                proceeds = max(0.0, (qty * m - f) * (1 - slip))
                removed = basis[s] * qty / held if held > 0 else 0.0
                price = m * (1 - slip)
                cash_delta, basis_delta, realized = proceeds, -removed, proceeds - removed
            cash += cash_delta
            if abs(cash) < 1e-9:
                cash = 0.0
            new_pos = pos[s] + (qty if side == "buy" else -qty)
            pos[s] = 0.0 if abs(new_pos) < 1e-12 else new_pos
            basis[s] = 0.0 if pos[s] == 0 else basis[s] + basis_delta
            fills.append({"order": k, "time": t, "symbol": s, "side": side, "quantity": qty, "price": price, "fee": f, "realized": realized})
            tr = open_trade.setdefault(s, {"entry": t, "pnl": 0.0, "fees": 0.0})
            tr["pnl"] += realized
            tr["fees"] += f
            if pos[s] == 0:
                trades.append({"symbol": s, "entry": tr["entry"], "exit": t, "pnl": tr["pnl"], "fees": tr["fees"]})
                del open_trade[s]
        pending = by_index.get(i, [])
        equity.append(cash + sum(pos[s] * row[f"{s}_close"] for s in symbols))
    return {"fills": fills, "equity": equity, "rejected": rejected, "trades": trades}


def main():
    data = json.load(sys.stdin)
    json.dump({"results": [run_case(c) for c in data["cases"]]}, sys.stdout)


if __name__ == "__main__":
    main()
