import type { AnyModel, Experimental, Host } from "@anywidget/types";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import createCompareWidget from "../src/compare/index";
import type { CompareState } from "../src/compare/protocol";
import { SummaryTable, meanSpread, sortRows } from "../src/compare/table";
import type { AgentEvent } from "../src/protocol";
import { MockModel, totBranches as branches } from "./fixtures";

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

const rows = [
  { strategy: "react", run: 1, status: "completed", steps: 3, cost_usd: 0.02, wall_s: 1.5 },
  { strategy: "cot", run: 1, status: "completed", steps: 1, cost_usd: null, wall_s: 0.5 },
  { strategy: "tot", run: 1, status: "error", steps: 5, cost_usd: 0.01, wall_s: 2.5 },
];

describe("summary table", () => {
  it("sorts numbers ascending and descending, missing values last", () => {
    expect(sortRows(rows, "steps", false).map((r) => r.strategy)).toEqual(["cot", "react", "tot"]);
    expect(sortRows(rows, "steps", true).map((r) => r.strategy)).toEqual(["tot", "react", "cot"]);
    expect(sortRows(rows, "cost_usd", false).map((r) => r.strategy)).toEqual(["tot", "react", "cot"]);
    expect(sortRows(rows, "cost_usd", true).map((r) => r.strategy)).toEqual(["react", "tot", "cot"]);
    expect(sortRows(rows, "strategy", false).map((r) => r.strategy)).toEqual(["cot", "react", "tot"]);
  });

  it("sorts when a header is clicked, reversing on a second click", () => {
    const table = new SummaryTable();
    table.update(rows, false);
    const names = () => [...table.el.querySelectorAll("tbody tr")].map((tr) => tr.getAttribute("data-strategy"));
    expect(names()).toEqual(["react", "cot", "tot"]);
    const header = () => table.el.querySelector('th[data-key="wall_s"]') as HTMLElement;
    header().click();
    expect(names()).toEqual(["cot", "react", "tot"]);
    expect(header().textContent).toBe("wall s ▲");
    header().click();
    expect(names()).toEqual(["tot", "react", "cot"]);
    expect(header().textContent).toBe("wall s ▼");
    expect(table.el.querySelector("tr.jb-row-error")?.getAttribute("data-strategy")).toBe("tot");
  });

  it("shows mean ± spread with several runs", () => {
    expect(meanSpread({ steps: 2.5, steps_sd: 0.7071 }, "steps")).toBe("2.5 ± 0.7");
    expect(meanSpread({ steps: 2, steps_sd: null }, "steps")).toBe("2");
    const table = new SummaryTable();
    table.update([{ strategy: "react", runs: 2, completed: 2, steps: 2.5, steps_sd: 0.7071, cost_usd: 0.015, cost_usd_sd: 0.00707 }], true);
    const cells = [...table.el.querySelectorAll("tbody td")].map((td) => td.textContent);
    expect(cells[0]).toBe("react");
    expect(cells[1]).toBe("2/2");
    expect(cells).toContain("2.5 ± 0.7");
    expect(cells).toContain("0.0150 ± 0.0071");
  });
});


function compareModel(state: Partial<CompareState>) {
  const model = new MockModel({ columns: [], epoch: 0, runs: 1, rows: [], summary: [], trees: {}, winner: "", comparison_id: "", prompt: "q", notes: [], ...state });
  const sent: unknown[] = [];
  (model as unknown as { send: (msg: unknown) => void }).send = (msg: unknown) => {
    sent.push(msg);
  };
  const widget = createCompareWidget();
  const m = model as unknown as AnyModel<CompareState>;
  const experimental = { invoke: vi.fn() } as unknown as Experimental;
  const signal = new AbortController().signal;
  widget.initialize({ model: m, signal, experimental });
  const el = document.createElement("div");
  widget.render({ model: m, el, signal, host: {} as Host, experimental });
  return { model, el, sent };
}

const turn = (text: string): AgentEvent[] => [
  { type: "turn_start", session_id: "s", user_message: "q" },
  { type: "step_start", step: 1 },
  { type: "text_delta", step: 1, text },
];

describe("compare widget", () => {
  const columns = [
    { key: "react#1", strategy: "react", run: 1, transcript: [], n: 0 },
    { key: "cot#1", strategy: "cot", run: 1, transcript: [], n: 0 },
  ];

  it("streams each column from one coalesced message and fills the table as runs finish", () => {
    const { model, el } = compareModel({ columns });
    expect(el.querySelectorAll(".jb-compare-column").length).toBe(2);
    const react = turn("ReAct answer");
    const cot = turn("CoT answer");
    model.custom({ kind: "compare", batches: {
      "react#1": { kind: "events", epoch: 0, start: 0, end: 3, events: react },
      "cot#1": { kind: "events", epoch: 0, start: 0, end: 3, events: cot },
    } });
    vi.advanceTimersByTime(100);
    const col = (key: string) => el.querySelector(`.jb-compare-column[data-key="${key}"]`) as HTMLElement;
    expect(col("react#1").textContent).toContain("ReAct answer");
    expect(col("cot#1").textContent).toContain("CoT answer");
    expect(col("react#1").textContent).not.toContain("CoT answer");
    expect(el.querySelectorAll("tbody tr").length).toBe(0);
    model.commit({ rows: [{ strategy: "cot", run: 1, status: "completed", steps: 1 }] });
    expect(el.querySelectorAll("tbody tr").length).toBe(1);
    expect(col("cot#1").querySelector(".jb-compare-status")?.textContent).toBe("completed");
    expect(col("react#1").querySelector(".jb-compare-status")?.textContent).toBe("running");
  });

  it("shows a failed run's error in its column and sends mark-best clicks to the kernel", () => {
    const { model, el, sent } = compareModel({ columns });
    model.commit({ rows: [
      { strategy: "react", run: 1, status: "error", steps: 0, error: "ProviderError: boom" },
      { strategy: "cot", run: 1, status: "completed", steps: 1, error: null },
    ] });
    const react = el.querySelector('.jb-compare-column[data-key="react#1"]') as HTMLElement;
    expect(react.classList.contains("jb-compare-failed")).toBe(true);
    expect(react.querySelector(".jb-error-message")?.textContent).toBe("ProviderError: boom");
    expect(el.querySelector('.jb-compare-column[data-key="cot#1"] .jb-error')).toBeNull();
    (el.querySelector('.jb-compare-column[data-key="cot#1"] .jb-mark-best') as HTMLElement).click();
    expect(sent).toEqual([{ kind: "mark_best", strategy: "cot", run: 1 }]);
    model.commit({ winner: "cot" });
    expect(el.querySelector(".jb-compare-best")?.getAttribute("data-key")).toBe("cot#1");
    expect(el.querySelector(".jb-compare-winner")?.textContent).toBe("Marked best: cot");
  });

  it("paints a Tree-of-Thoughts tree from the trees trait", () => {
    const { model, el } = compareModel({ columns: [{ key: "tot#1", strategy: "tot", run: 1, transcript: [], n: 0 }] });
    model.commit({ trees: { "tot#1": { threshold: 0.4, branches } } });
    expect(el.querySelectorAll(".jb-tot-point").length).toBe(2);
    expect(el.querySelectorAll(".jb-tot-selected").length).toBe(2);
  });
});

describe("compare layout", () => {
  const tot = (text: string): AgentEvent[] => [
    { type: "turn_start", session_id: "s", user_message: "q", strategy: "tot" },
    { type: "step_start", step: 1 },
    ...branches.map((b): AgentEvent => ({ type: "strategy_step", step: 1, strategy: "Tree-of-Thoughts", data: { kind: "branch", ...b } })),
    { type: "text_delta", step: 1, text: `Candidate 1: …\nFinal Answer: ${text}` },
    { type: "strategy_step", step: 1, strategy: "Tree-of-Thoughts", data: { kind: "final_answer", text } },
    { type: "tool_call_end", step: 1, call_id: "c1", name: "run_python", status: "ok", duration_ms: 3 },
    { type: "usage", step: 1, input_tokens: 1200, output_tokens: 80, cost_usd: 0.0123 },
    { type: "turn_end", session_id: "s", status: "completed", text: `Candidate 1: …\nFinal Answer: ${text}`, input_tokens: 1200, output_tokens: 80, cost_usd: 0.0123 },
  ];

  it("puts the table on top, then columns whose sections come in one order", () => {
    const { el } = compareModel({ columns: [
      { key: "tot#1", strategy: "tot", run: 1, transcript: tot("It is **42**."), n: 12 },
      { key: "react#1", strategy: "react", run: 1, transcript: turn("plain"), n: 3 },
    ] });
    const view = el.querySelector(".jb-compare-view") as HTMLElement;
    const order = [...view.children].map((c) => c.className);
    expect(order.indexOf("jb-compare-table-wrap")).toBeLessThan(order.indexOf("jb-compare-scroll"));
    for (const col of el.querySelectorAll(".jb-compare-column")) {
      expect([...col.children].map((c) => (c as HTMLElement).dataset.section)).toEqual([
        "head", "answer", "steps", "tree", "tools", "tokens", "cost",
      ]);
    }
    const column = el.querySelector('.jb-compare-column[data-key="tot#1"]') as HTMLElement;
    const answer = column.querySelector('[data-section="answer"] .jb-compare-answer-body') as HTMLElement;
    // The strategy's final answer, rendered, without the labelled text it was parsed from.
    expect(answer.querySelector("strong")?.textContent).toBe("42");
    expect(answer.textContent).not.toContain("Candidate");
    expect(column.querySelector('[data-section="tools"]')?.textContent).toContain("✓ run_python");
    expect(column.querySelector('[data-section="tokens"]')?.textContent).toContain("in 1,200 · out 80");
    expect(column.querySelector('[data-section="cost"]')?.textContent).toContain("$0.0123");
    // The tree, nested, from the column's own strategy steps.
    const tree = column.querySelector('[data-section="tree"] .jb-tot') as HTMLElement;
    expect(tree.querySelectorAll(".jb-tot-selected").length).toBe(2);
    expect(tree.querySelector(".jb-tot-branch-selected .jb-tot-point")).not.toBeNull();
    const react = el.querySelector('.jb-compare-column[data-key="react#1"]') as HTMLElement;
    expect(react.querySelector('[data-section="tree"]')?.classList.contains("jb-compare-empty")).toBe(true);
    expect(react.querySelector('[data-section="tools"]')?.textContent).toContain("none");
    expect(react.querySelector('[data-section="answer"]')?.textContent).toContain("running…");
  });

  it("uses the finished row's totals and highlights the winner's column and table row", () => {
    const { model, el } = compareModel({ columns: [
      { key: "react#1", strategy: "react", run: 1, transcript: turn("a"), n: 3 },
      { key: "cot#1", strategy: "cot", run: 1, transcript: turn("b"), n: 3 },
    ] });
    model.commit({ rows: [
      { strategy: "react", run: 1, status: "completed", steps: 1, input_tokens: 10, output_tokens: 2, cost_usd: null },
      { strategy: "cot", run: 1, status: "completed", steps: 1, input_tokens: 30, output_tokens: 4, cost_usd: 0.5 },
    ] });
    const cot = el.querySelector('.jb-compare-column[data-key="cot#1"]') as HTMLElement;
    expect(cot.querySelector('[data-section="tokens"]')?.textContent).toContain("in 30 · out 4");
    expect(cot.querySelector('[data-section="cost"]')?.textContent).toContain("$0.5000");
    expect(el.querySelector('.jb-compare-column[data-key="react#1"] [data-section="cost"]')?.textContent).toContain("—");
    expect(el.querySelector("tr.jb-row-best")).toBeNull();
    model.commit({ winner: "cot" });
    expect(cot.classList.contains("jb-compare-best")).toBe(true);
    expect([...el.querySelectorAll("tr.jb-row-best")].map((r) => r.getAttribute("data-strategy"))).toEqual(["cot"]);
    // Sorting keeps the highlight.
    (el.querySelector('th[data-key="strategy"]') as HTMLElement).click();
    expect([...el.querySelectorAll("tr.jb-row-best")].map((r) => r.getAttribute("data-strategy"))).toEqual(["cot"]);
  });
});

describe("compare widget errors", () => {
  it("does not repeat an error the run's stream already shows", () => {
    const { model, el } = compareModel({ columns: [{ key: "cot#1", strategy: "cot", run: 1, transcript: [], n: 0 }] });
    const events: AgentEvent[] = [
      { type: "turn_start", session_id: "s", user_message: "q" },
      { type: "error", step: 1, kind: "other", message: "overloaded", recoverable: false },
    ];
    model.custom({ kind: "compare", batches: { "cot#1": { kind: "events", epoch: 0, start: 0, end: 2, events } } });
    model.commit({ rows: [{ strategy: "cot", run: 1, status: "error", steps: 0, error: "overloaded" }] });
    expect(el.querySelectorAll(".jb-error").length).toBe(1);
  });

  it("shows an error once when the row arrives before the run's last batch", () => {
    const { model, el } = compareModel({ columns: [{ key: "cot#1", strategy: "cot", run: 1, transcript: [], n: 0 }] });
    model.commit({ rows: [{ strategy: "cot", run: 1, status: "error", steps: 0, error: "overloaded" }] });
    expect(el.querySelectorAll(".jb-error").length).toBe(1); // the stand-in, until the stream has its own
    const events: AgentEvent[] = [
      { type: "turn_start", session_id: "s", user_message: "q" },
      { type: "error", step: 1, kind: "other", message: "overloaded", recoverable: false },
    ];
    model.custom({ kind: "compare", batches: { "cot#1": { kind: "events", epoch: 0, start: 0, end: 2, events } } });
    vi.advanceTimersByTime(500);
    expect(el.querySelectorAll(".jb-error").length).toBe(1);
    expect(el.textContent?.match(/overloaded/g)?.length).toBe(1);
  });
});

describe("checks and runs (#27)", () => {
  const columns = ["react", "cot"].flatMap((strategy) =>
    [1, 2].map((run) => ({ key: `${strategy}#${run}`, strategy, run, transcript: [], n: 0 })));
  const verdict = (passed: boolean, reason = "") => ({ kind: "expect", label: "expect '42'", passed, reason, opinion: false });
  const rows = [
    { strategy: "react", run: 1, status: "completed", steps: 1, passed: true, reason: "", verdicts: [verdict(true)] },
    { strategy: "react", run: 2, status: "completed", steps: 1, passed: true, reason: "", verdicts: [verdict(true)] },
    { strategy: "cot", run: 1, status: "completed", steps: 1, passed: true, reason: "", verdicts: [verdict(true)] },
    { strategy: "cot", run: 2, status: "completed", steps: 1, passed: false, reason: "expect: expected '42'",
      verdicts: [verdict(false, "expected '42'")] },
  ];
  const summary = [
    { strategy: "react", runs: 2, completed: 2, passed: 2, checked: 2, rate: 1, low: 0.342, high: 1, reasons: [], steps: 1, steps_sd: 0 },
    { strategy: "cot", runs: 2, completed: 2, passed: 1, checked: 2, rate: 0.5, low: 0.0945, high: 0.9055,
      reasons: ["#2: expect: expected '42'"], steps: 2, steps_sd: 1.4142 },
  ];

  it("gives each strategy one column, its runs behind a picker with the failing run's tab red", () => {
    const { model, el } = compareModel({ columns, runs: 2 });
    model.commit({ rows, summary });
    const visible = [...el.querySelectorAll<HTMLElement>(".jb-compare-column")].filter((c) => !c.hidden);
    expect(visible.map((c) => c.dataset.key)).toEqual(["react#1", "cot#1"]);
    const cot = el.querySelector('.jb-compare-column[data-key="cot#1"]') as HTMLElement;
    const tabs = [...cot.querySelectorAll<HTMLElement>(".jb-run-tab")];
    expect(tabs.map((t) => t.textContent)).toEqual(["#1", "#2"]);
    expect(tabs.map((t) => t.classList.contains("jb-run-failed"))).toEqual([false, true]);
    tabs[1].click();
    const second = el.querySelector('.jb-compare-column[data-key="cot#2"]') as HTMLElement;
    expect(second.hidden).toBe(false);
    expect(cot.hidden).toBe(true);
    expect(second.querySelector(".jb-run-selected")?.textContent).toBe("#2");
    const badge = second.querySelector(".jb-compare-verdict") as HTMLElement;
    expect(badge.textContent).toBe("✗ fail");
    expect(badge.title).toBe("expect [expect '42'] FAILED: expected '42'");
    // A later state keeps the picked run.
    model.commit({ winner: "react" });
    expect(second.hidden).toBe(false);
  });

  it("puts success first in the summary with each failure's reason on hover, and no zero spread", () => {
    const { model, el } = compareModel({ columns, runs: 2 });
    model.commit({ rows, summary });
    const heads = [...el.querySelectorAll("thead th")].map((th) => th.textContent);
    expect(heads.slice(0, 3)).toEqual(["strategy", "success (95 % CI)", "completed"]);
    const cells = [...el.querySelectorAll<HTMLElement>("tbody td.jb-compare-success")];
    expect(cells.map((c) => c.textContent)).toEqual(["2/2 · 100 % (34–100 %)", "1/2 · 50 % (9–91 %)"]);
    expect(cells[1].title).toBe("#2: expect: expected '42'");
    expect(cells[1].classList.contains("jb-fail")).toBe(true);
    const steps = [...el.querySelectorAll('tbody td.jb-num')].map((td) => td.textContent);
    expect(steps).toContain("1");
    expect(steps).not.toContain("1 ± 0.0");
    expect(steps).toContain("2 ± 1.4");
    expect(el.querySelector('th[data-key="judge_tokens"]')).toBeNull();  // no judge, no judge columns
  });

  it("labels a judge's verdict as a model's opinion", () => {
    const { model, el } = compareModel({ columns: columns.slice(0, 1) });
    const judged = { kind: "judge", label: "judge", passed: true, reason: "says 42", opinion: true };
    model.commit({ rows: [{ strategy: "react", run: 1, status: "completed", steps: 1, passed: true, reason: "", verdicts: [judged] }] });
    expect(el.querySelector('th[data-key="passed"]')?.textContent).toBe("check · judge: a model's opinion");
    const badge = el.querySelector(".jb-compare-verdict") as HTMLElement;
    expect(badge.dataset.opinion).toBe("judge");
    expect(badge.title).toBe("judge (a model's opinion) passed: says 42");
  });

  it("says in the header that the budget stopped the comparison early", () => {
    const { model, el } = compareModel({ columns });
    model.commit({ notes: ["stopped early: the $0.01 cap (--max-cost) was reached; 2 run(s) stopped before the end"] });
    expect(el.querySelector(".jb-compare-notes")?.textContent).toContain("stopped early: the $0.01 cap");
  });
});
