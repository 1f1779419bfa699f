"""Plain-text stand-in for ``CompareView`` (terminals, plain IPython, no JS bundle).

Concurrent runs would interleave their streams into nonsense, so it prints one line per
finished run and the summary table at the end instead of the live text.
"""

from __future__ import annotations

from typing import Any, TextIO

from jupyter_brain.agent.harness import TurnResult
from jupyter_brain.compare import summarize

from .compare_notes import header_notes, rate_text, spread_text, verdict_text


class CompareTextView:
    def __init__(self, out: TextIO, strategies: list[str] | None = None) -> None:
        self.out = out
        self.strategies = list(strategies or [])
        self.rows: list[dict[str, Any]] = []

    def handle(self, strategy: str, run: int, event: Any) -> None:
        """Live events are not printed (see the module docstring)."""

    def run_finished(self, row: dict[str, Any], result: TurnResult) -> None:
        self.rows.append(row)
        detail = f" — {row['error']}" if row.get("error") else ""
        verdict = f" — {verdict_text(row)}" if row.get("passed") is not None else ""
        print(f"{row['strategy']} #{row['run']}: {row['status']} in {row['steps']} steps{detail}{verdict}",
              file=self.out, flush=True)

    def finish(self, result: Any) -> None:
        """The header's notes (a budget stop, a changed namespace) and, with checks or runs,
        each strategy's success rate and mean figures."""
        for note in header_notes(result):
            print(f"note: {note}", file=self.out)
        checked = any(r.get("passed") is not None for r in self.rows)
        if not checked and getattr(result, "runs", 1) <= 1:
            return
        print(f"{'strategy':<10} {'success':<24} {'tokens':>14} {'cost $':>16} {'time s':>12}", file=self.out)
        for entry in summarize(self.rows, self.strategies, getattr(result, "runs", 1)):
            tokens = None if entry["input_tokens"] is None else entry["input_tokens"] + (entry["output_tokens"] or 0)
            print(f"{entry['strategy']:<10} {rate_text(entry) or '–':<24} {spread_text(tokens, None, 0):>14} "
                  f"{spread_text(entry['cost_usd'], entry.get('cost_usd_sd'), 4):>16} "
                  f"{spread_text(entry['wall_s'], entry.get('wall_s_sd'), 2):>12}", file=self.out)
            for reason in entry.get("reasons", []):
                print(f"  {reason}", file=self.out)

    def bind(self, comparison_id: str, event_log: Any) -> None:
        print(f"comparison {comparison_id}: %agent compare-history lists it", file=self.out)

    def close_stream(self) -> None:
        if not self.rows:
            return
        print(f"{'strategy':<10} {'run':>3} {'status':<10} {'steps':>5} {'tools':>5} "
              f"{'in':>7} {'out':>6} {'cost $':>8}", file=self.out)
        order = {s: i for i, s in enumerate(self.strategies)}
        for r in sorted(self.rows, key=lambda r: (order.get(r["strategy"], len(order)), r["run"])):
            cost = "?" if r["cost_usd"] is None else f"{r['cost_usd']:.4f}"
            print(f"{r['strategy']:<10} {r['run']:>3} {r['status']:<10} {r['steps']:>5} {r['tool_calls']:>5} "
                  f"{r['input_tokens']:>7} {r['output_tokens']:>6} {cost:>8}", file=self.out)
