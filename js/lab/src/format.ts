/** Short figures for the status bar. */
import type { IStatusMessage } from './protocol';

export function compactNumber(n: number): string {
  if (n >= 1_000_000) {
    return `${(n / 1_000_000).toFixed(1)}M`;
  }
  if (n >= 10_000) {
    return `${Math.round(n / 1000)}k`;
  }
  if (n >= 1000) {
    return `${(n / 1000).toFixed(1)}k`;
  }
  return String(n);
}

export function formatCost(cost: number | null, estimated = false): string {
  if (cost === null || cost === undefined) {
    return 'cost n/a';
  }
  const text = cost < 0.01 ? `$${cost.toFixed(4)}` : `$${cost.toFixed(2)}`;
  return estimated ? `≈${text}` : text;
}

export function statusText(s: IStatusMessage): string {
  const tokens = compactNumber((s.input_tokens || 0) + (s.output_tokens || 0));
  const pct = Math.round((s.context_ratio || 0) * 100);
  return `agent ${s.session} · ${tokens} tokens · ${formatCost(s.cost_usd, s.estimated)} · context ${s.context_level} ${pct}%`;
}

export function statusTitle(s: IStatusMessage): string {
  return (
    `jupyter-brain session ${s.session}: ${s.turns} turn(s), ${s.input_tokens.toLocaleString()} in / ` +
    `${s.output_tokens.toLocaleString()} out tokens; last request ${s.context_tokens.toLocaleString()} of ` +
    `${s.context_budget.toLocaleString()} tokens (${s.context_level}). Click for %agent status.`
  );
}
