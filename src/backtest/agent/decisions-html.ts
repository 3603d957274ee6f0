import type { ContaminationReport } from './contamination';
import type { AgentDecision } from './decision-log';
import type { DisabledTool } from './tool-policy';

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
const json = (v: unknown, max = 600) => {
  const t = JSON.stringify(v) ?? '';
  return esc(t.length > max ? `${t.slice(0, max)}…` : t);
};

/**
 * `agent_decisions.html`: a self-contained page (no script, no network) of the agent's decisions bar by bar — what it
 * was told and saw, what it said and did, what the gate decided and the orders handed to the engine — under the
 * contamination statement and the tools that were off.
 */
export function renderAgentDecisionsHtml(input: { readonly decisions: readonly AgentDecision[]; readonly contamination: ContaminationReport; readonly disabled: readonly DisabledTool[]; readonly costUsd: number | string }): string {
  const { decisions, contamination: c, disabled } = input;
  const rows = decisions
    .map((d) => {
      const gate = d.gate.map((g) => `<li class="${g.decision}">${esc(g.tool)}: ${esc(g.decision)} (${esc(g.rule)}) — ${esc(g.reason)}</li>`).join('');
      const saw = d.saw.map((s) => `<li>${esc(s.tool)} ${s.ok ? '' : '<b>failed</b> '}<code>${json(s.output, 300)}</code></li>`).join('');
      const did = d.did.map((x) => `<li>${esc(x.tool)} <code>${json(x.input, 300)}</code></li>`).join('');
      const intents = d.intents.map((i) => `<li>${esc(i.side)} ${esc(i.symbol)} ${i.notionalUsd !== undefined ? `$${i.notionalUsd.toFixed(2)}` : `${String(i.quantity)} units`}</li>`).join('');
      return `<tr><td>${d.decision}<br><small>${esc(d.time.replace('T', ' ').slice(0, 16))}</small></td><td><pre>${esc(d.message)}</pre><ul>${saw}</ul></td><td>${esc(d.said)}<ul>${did}</ul></td><td><ul>${gate || '<li>—</li>'}</ul></td><td><ul>${intents || '<li>none</li>'}</ul></td><td>${esc(String(d.costUsd))}</td></tr>`;
    })
    .join('\n');
  const off = disabled.map((d) => `<li><b>${esc(d.name)}</b>: ${esc(d.reason)}</li>`).join('');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Agent decisions</title>
<style>body{font:14px system-ui,sans-serif;margin:2em}table{border-collapse:collapse;width:100%}td,th{border:1px solid #ccc;padding:6px;vertical-align:top}pre{white-space:pre-wrap;margin:0}code{font-size:12px}.blocked,.denied{color:#a00}.approved{color:#070}.warn{background:#fff3cd;padding:8px}</style>
</head><body>
<h1>Agent decisions</h1>
<p class="${c.overlap ? 'warn' : ''}">Model <b>${esc(c.modelId)}</b>: training cutoff <b>${esc(c.trainingCutoff)}</b>; test window ${esc(c.windowStart)} → ${esc(c.windowEnd)}${c.overlap ? ' — <b>overlap</b>' : ''}. ${esc(c.note)}</p>
<p>${decisions.length} decisions; model cost ${esc(String(input.costUsd))} USD.</p>
<details><summary>Disabled for the run (${disabled.length})</summary><ul>${off}</ul></details>
<table><thead><tr><th>#</th><th>told and saw</th><th>said and did</th><th>gate</th><th>orders (fill at the next bar)</th><th>USD</th></tr></thead>
<tbody>
${rows}
</tbody></table>
</body></html>
`;
}
