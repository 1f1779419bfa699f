// A finished comparison's output bundle (jupyter_brain/widgets/compare_bundle.py), drawn with
// no widget behind it: each column from its saved transcript, the title as inline Markdown,
// "Mark best" through the host (hidden without one), the winner kept.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { type CompareBundle, isCompareBundle, renderCompare } from "../src/compare_bundle";
import type { AgentEvent } from "../src/protocol";
import { totBranches } from "./fixtures";

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

function run(answer: string): AgentEvent[] {
  return [
    { type: "turn_start", session_id: "s", user_message: "q", provider: "scripted", model: "m", think_level: "off", strategy: "react", max_steps: 6 },
    { type: "step_start", step: 1 },
    { type: "text_delta", step: 1, text: answer },
    { type: "step_end", step: 1 },
    { type: "turn_end", status: "completed", text: answer, steps: 1, tool_calls: 0, reflections: 0, duration_ms: 10, cost_usd: 0 },
  ];
}

function bundle(): CompareBundle {
  return {
    version: 1,
    columns: [
      { key: "react#1", strategy: "react", run: 1, transcript: run("**July** dropped."), n: 5 },
      { key: "tot#1", strategy: "tot", run: 1, transcript: run("July."), n: 5 },
    ],
    runs: 1,
    rows: [
      { strategy: "react", run: 1, status: "completed", steps: 1, cost_usd: 0, wall_s: 1 },
      { strategy: "tot", run: 1, status: "completed", steps: 1, cost_usd: 0, wall_s: 1 },
    ],
    summary: [],
    trees: { "tot#1": { threshold: 0.4, branches: totBranches } },
    winner: "",
    comparison_id: "cmp-1",
    prompt: "Which month dropped in `sales`?",
    notes: [],
  };
}

describe("finished comparison bundle", () => {
  it("tells a bundle from anything else", () => {
    expect(isCompareBundle(bundle())).toBe(true);
    expect(isCompareBundle({ version: 1 })).toBe(false);
    expect(isCompareBundle(null)).toBe(false);
  });

  it("draws the columns, the table, the tree and the title's Markdown; no Mark best without a kernel", () => {
    const host = document.createElement("div");
    const view = renderCompare(host, bundle());
    vi.runAllTimers();
    expect(host.querySelector(".jb-compare-title code")?.textContent).toBe("sales"); // not raw backticks
    expect(host.querySelector(".jb-compare-title")?.textContent).not.toContain("`");
    expect(host.querySelectorAll(".jb-compare-column")).toHaveLength(2);
    expect(host.querySelectorAll(".jb-compare-table tbody tr")).toHaveLength(2);
    expect(host.querySelector('[data-key="react#1"] [data-section="answer"] strong')?.textContent).toBe("July");
    expect(host.querySelector('[data-key="tot#1"] [data-section="tree"] .jb-tot')).not.toBeNull();
    expect([...host.querySelectorAll<HTMLButtonElement>(".jb-mark-best")].every((b) => b.hidden)).toBe(true);
    view.dispose();
  });

  it("marks the best through the host and keeps the winner, or says why it could not", async () => {
    vi.useRealTimers();
    const host = document.createElement("div");
    const asked: unknown[] = [];
    const winners: string[] = [];
    let answer: string | null = "This comparison ran in an earlier session";
    renderCompare(host, bundle(), {
      onMarkBest: async (id, strategy, run) => {
        asked.push([id, strategy, run]);
        return answer;
      },
      onWinner: (s) => winners.push(s),
    });
    const button = host.querySelector<HTMLButtonElement>('[data-key="tot#1"] .jb-mark-best')!;
    expect(button.hidden).toBe(false);
    button.click();
    await vi.waitFor(() => expect(host.querySelector(".jb-compare-message")?.textContent).toContain("earlier session"));
    expect(winners).toEqual([]);
    answer = null;
    button.click();
    await vi.waitFor(() => expect(winners).toEqual(["tot"]));
    expect(asked).toEqual([["cmp-1", "tot", 1], ["cmp-1", "tot", 1]]);
    expect(host.querySelector(".jb-compare-column.jb-compare-best")?.getAttribute("data-key")).toBe("tot#1");
  });
});
