"""Plain-text stand-in for ``CompareView`` (terminals, plain IPython, no JS bundle).

Concurrent runs would interleave their streams into nonsense, so it prints one line per
finished run and the summary table at the end instead of the live text.
"""

from __future__ import annotations

from typing import Any, TextIO

from jupyter_brain.agent.harness import TurnResult


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
        print(f"{row['strategy']} #{row['run']}: {row['status']} in {row['steps']} steps{detail}",
              file=self.out, flush=True)

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
