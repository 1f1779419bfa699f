// Paints a comparison: the summary table on top, then equal-width columns (one per
// strategy) side by side, wrapping onto another row below their minimum width, so none
// is ever cut off; each column is as tall as its own content — answer, steps, tree,
// tools, tokens, cost, always in that order (the table compares the figures line by line). With several runs a strategy's column shows one run at a time, picked by
// the tabs in its head (a failing run's tab is red); each run is its own column element,
// the others hidden, so the grid still holds one column per strategy. The steps section
// is an AgentRenderer following that run's event store.
import { h, setText } from "../dom";
import { renderMarkdown } from "../markdown";
import { AgentRenderer, type RendererOptions } from "../renderer";
import type { AgentEvent } from "../protocol";
import type { EventStore } from "../store";
import { ColumnFactsView, SECTIONS } from "./column";
import type { Column, CompareState, Row, TreeData, Verdict } from "./protocol";
import { SummaryTable } from "./table";

export interface CompareOptions extends RendererOptions {
  onMarkBest?: (strategy: string, run: number) => void;
  /** Runs per strategy (from the first state): more than one gets a run picker. */
  runs?: number;
}

/** A strategy's runs: which one its column shows, and the picker tabs in every run's head. */
class StrategyRuns {
  readonly views = new Map<number, ColumnView>();
  selected = 1;

  add(run: number, view: ColumnView): void {
    this.views.set(run, view);
    this.paint(new Map());
  }

  select(run: number, failing: Map<number, boolean>): void {
    this.selected = run;
    this.paint(failing);
  }

  /** Show the selected run, hide the others; every head's tabs mark it and the failures. */
  paint(failing: Map<number, boolean>): void {
    const runs = [...this.views.keys()].sort((a, b) => a - b);
    for (const [run, view] of this.views) {
      view.el.hidden = run !== this.selected;
      if (runs.length < 2) {
        view.picker.replaceChildren();
        continue;
      }
      view.picker.replaceChildren(
        ...runs.map((r) => {
          const failed = failing.get(r) === true;
          const tab = h("button", {
            type: "button",
            role: "tab",
            class: `jb-run-tab${r === this.selected ? " jb-run-selected" : ""}${failed ? " jb-run-failed" : ""}`,
            "aria-selected": String(r === this.selected),
            "data-run": String(r),
            title: `run ${r}${failed ? " (failed)" : ""}`,
          }, `#${r}`);
          tab.addEventListener("click", () => this.select(r, failing));
          return tab;
        }),
      );
    }
  }
}

/** Pass/fail of one run: its badge text and the hover text naming every check (a judge's
 *  verdict is labelled a model's opinion). */
export function verdictTitle(row: Row | undefined): string {
  const verdicts = (row?.verdicts ?? []) as Verdict[];
  return verdicts
    .map((v) => `${v.opinion ? "judge (a model's opinion)" : v.kind} ${v.label === v.kind ? "" : `[${v.label}] `}` +
      `${v.passed ? "passed" : "FAILED"}${v.reason ? `: ${v.reason}` : ""}`)
    .join("\n");
}

class ColumnView {
  readonly el: HTMLElement;
  readonly status: HTMLElement;
  readonly button: HTMLButtonElement;
  readonly picker = h("span", { class: "jb-compare-runs", role: "tablist", "aria-label": "runs" });
  readonly verdict = h("span", "jb-compare-verdict");
  private readonly errorSlot: HTMLElement;
  private readonly facts: ColumnFactsView;
  private readonly renderer: AgentRenderer;
  private readonly unsubscribe: () => void;

  constructor(col: Column, private readonly store: EventStore, opts: CompareOptions) {
    const body = h("div", "jb-compare-body");
    this.status = h("span", "jb-compare-status", "running");
    this.button = h("button", { class: "jb-mark-best", type: "button", title: "record this answer as the best" }, "Mark best");
    this.button.addEventListener("click", () => opts.onMarkBest?.(col.strategy, col.run));
    this.button.hidden = opts.onMarkBest === undefined; // a saved comparison with no kernel to record it
    this.errorSlot = h("div", "jb-compare-error-slot");
    this.facts = new ColumnFactsView(opts.markdown ?? renderMarkdown);
    const head = h(
      "div",
      { class: "jb-compare-section jb-compare-head", "data-section": "head" },
      h("span", "jb-compare-name", opts.runs && opts.runs > 1 ? col.strategy : `${col.strategy} #${col.run}`),
      this.picker,
      this.verdict,
      h("span", { class: "jb-compare-best-badge", "aria-hidden": "true" }, "★ best"),
      this.status,
      this.button,
    );
    const steps = h("div", { class: "jb-compare-section jb-compare-steps", "data-section": "steps" }, this.errorSlot, body);
    const byName: Record<string, HTMLElement> = {
      head,
      steps,
      answer: this.facts.answer,
      tree: this.facts.tree,
      tools: this.facts.tools,
      tokens: this.facts.tokens,
      cost: this.facts.cost,
    };
    this.el = h(
      "div",
      { class: "jb-compare-column", "data-key": col.key, "data-strategy": col.strategy, role: "group", "aria-label": `${col.strategy} #${col.run}` },
      ...SECTIONS.map((name) => byName[name]),
    );
    this.renderer = new AgentRenderer(body, opts);
    const events = store.events.slice();
    this.renderer.reset(events);
    this.facts.reset(events);
    const unRenderer = store.subscribe(this.renderer);
    const unFacts = store.subscribe(this.facts);
    // The run's own error card, once its event is in the store, replaces the stand-in
    // `finished` may have shown first (the row can arrive before the events' last batch).
    const dropStandIn = (evs: AgentEvent[]) => {
      if (evs.some((e) => e.type === "error")) this.errorSlot.replaceChildren();
    };
    const unError = store.subscribe({ append: dropStandIn, reset: dropStandIn });
    this.unsubscribe = () => {
      unRenderer();
      unFacts();
      unError();
    };
  }

  finished(row: Row | undefined, tree: TreeData | undefined): void {
    setText(this.status, row ? String(row.status) : "running");
    const passed = row?.passed;
    setText(this.verdict, passed === true ? "✓ pass" : passed === false ? "✗ fail" : "");
    this.verdict.className = `jb-compare-verdict${passed === true ? " jb-pass" : passed === false ? " jb-fail" : ""}`;
    this.verdict.title = verdictTitle(row);
    if ((row?.verdicts ?? []).some((v) => (v as Verdict).opinion)) this.verdict.dataset.opinion = "judge";
    this.el.classList.toggle("jb-compare-failed", row?.status === "error");
    this.facts.setTree(tree);
    this.facts.finished(row);
    // A run that raised before any event has no error card in its stream: show it here.
    // Decided from the events, not the page: the steps may not be painted yet on a busy machine.
    const shown = this.errorSlot.firstChild !== null || this.store.events.some((e) => e.type === "error");
    if (row?.error && row.status === "error" && !shown) {
      this.errorSlot.append(
        h("div", { class: "jb-card jb-error jb-fatal", role: "alert" }, h("div", "jb-card-title", "⚠ Error"), h("div", "jb-error-message", String(row.error))),
      );
    }
  }

  dispose(): void {
    this.unsubscribe();
    this.renderer.dispose();
  }
}

export class CompareRenderer {
  readonly root: HTMLDivElement;
  readonly table = new SummaryTable();
  private readonly columnsEl = h("div", "jb-compare-columns");
  private readonly title = h("div", "jb-compare-title");
  private readonly winnerEl = h("div", "jb-compare-winner");
  private readonly notesEl = h("div", { class: "jb-compare-notes", role: "status" });
  private readonly messageEl = h("div", { class: "jb-compare-message", role: "status" });
  private shownTitle: string | null = null;
  private columns = new Map<string, ColumnView>();
  private strategies = new Map<string, StrategyRuns>();

  constructor(
    host: HTMLElement,
    private readonly stores: (key: string) => EventStore,
    private readonly opts: CompareOptions = {},
  ) {
    this.root = h(
      "div",
      "jb-compare-view",
      this.title,
      this.notesEl,
      h("div", "jb-compare-table-wrap", this.table.el),
      this.winnerEl,
      this.messageEl,
      h("div", { class: "jb-compare-scroll", "aria-label": "the runs side by side" }, this.columnsEl),
    );
    host.append(this.root);
  }

  update(state: CompareState): void {
    if (state.prompt !== this.shownTitle) { // the prompt as the user wrote it: inline Markdown
      this.shownTitle = state.prompt;
      const markdown = this.opts.markdown ?? renderMarkdown;
      this.title.innerHTML = markdown(state.prompt ? `**Strategy comparison** — ${state.prompt}` : "**Strategy comparison**");
    }
    this.notesEl.replaceChildren(...state.notes.map((n) => h("div", "jb-compare-note", `⚠ ${n}`)));
    for (const col of state.columns) {
      if (!this.columns.has(col.key)) {
        const view = new ColumnView(col, this.stores(col.key), { ...this.opts, runs: state.runs });
        this.columns.set(col.key, view);
        this.columnsEl.append(view.el);
        let group = this.strategies.get(col.strategy);
        if (group === undefined) {
          group = new StrategyRuns();
          this.strategies.set(col.strategy, group);
        }
        group.add(col.run, view);
      }
    }
    this.columnsEl.dataset.count = String(this.strategies.size); // compare.css balances the rows by it
    for (const [key, view] of this.columns) {
      view.finished(state.rows.find((r) => `${r.strategy}#${r.run}` === key), state.trees[key]);
      view.el.classList.toggle("jb-compare-best", state.winner !== "" && view.el.dataset.strategy === state.winner);
    }
    for (const [strategy, group] of this.strategies) {
      const failing = new Map(state.rows.filter((r) => r.strategy === strategy)
        .map((r) => [r.run, r.passed === false || (r.status !== "completed" && r.passed !== true)] as [number, boolean]));
      group.paint(failing);
    }
    const aggregated = state.runs > 1;
    const judged = state.rows.some((r) => ((r.verdicts ?? []) as Verdict[]).some((v) => v.opinion));
    this.table.update(aggregated ? state.summary.filter((s) => Number(s.runs) > 0) : state.rows, aggregated, judged);
    this.table.markBest(state.winner);
    setText(this.winnerEl, state.winner ? `Marked best: ${state.winner}` : "");
  }

  /** One line under the table (a "Mark best" the kernel could not record). */
  say(text: string): void {
    setText(this.messageEl, text);
  }

  dispose(): void {
    for (const c of this.columns.values()) c.dispose();
    this.root.remove();
  }
}
