// Paints a comparison: the summary table on top, then one row of equal-width columns
// (one per run, scrolling sideways past what fits) whose sections — answer, steps, tree,
// tools, tokens, cost — share the grid's row tracks (subgrid), so a reader compares line
// by line. The steps section is an AgentRenderer following that run's event store.
import { h, setText } from "../dom";
import { renderMarkdown } from "../markdown";
import { AgentRenderer, type RendererOptions } from "../renderer";
import type { AgentEvent } from "../protocol";
import type { EventStore } from "../store";
import { ColumnFactsView, SECTIONS } from "./column";
import type { Column, CompareState, Row, TreeData } from "./protocol";
import { SummaryTable } from "./table";

export interface CompareOptions extends RendererOptions {
  onMarkBest?: (strategy: string, run: number) => void;
}

class ColumnView {
  readonly el: HTMLElement;
  readonly status: HTMLElement;
  readonly button: HTMLButtonElement;
  private readonly errorSlot: HTMLElement;
  private readonly facts: ColumnFactsView;
  private readonly renderer: AgentRenderer;
  private readonly unsubscribe: () => void;

  constructor(col: Column, private readonly store: EventStore, opts: CompareOptions) {
    const body = h("div", "jb-compare-body");
    this.status = h("span", "jb-compare-status", "running");
    this.button = h("button", { class: "jb-mark-best", type: "button", title: "record this answer as the best" }, "Mark best");
    this.button.addEventListener("click", () => opts.onMarkBest?.(col.strategy, col.run));
    this.errorSlot = h("div", "jb-compare-error-slot");
    this.facts = new ColumnFactsView(opts.markdown ?? renderMarkdown);
    const head = h(
      "div",
      { class: "jb-compare-section jb-compare-head", "data-section": "head" },
      h("span", "jb-compare-name", `${col.strategy} #${col.run}`),
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
  private columns = new Map<string, ColumnView>();

  constructor(
    host: HTMLElement,
    private readonly stores: (key: string) => EventStore,
    private readonly opts: CompareOptions = {},
  ) {
    this.columnsEl.style.setProperty("--jb-compare-rows", String(SECTIONS.length));
    this.root = h(
      "div",
      "jb-compare-view",
      this.title,
      h("div", "jb-compare-table-wrap", this.table.el),
      this.winnerEl,
      h("div", { class: "jb-compare-scroll", tabindex: "0", "aria-label": "the runs side by side" }, this.columnsEl),
    );
    host.append(this.root);
  }

  update(state: CompareState): void {
    setText(this.title, state.prompt ? `Strategy comparison — ${state.prompt}` : "Strategy comparison");
    for (const col of state.columns) {
      if (!this.columns.has(col.key)) {
        const view = new ColumnView(col, this.stores(col.key), this.opts);
        this.columns.set(col.key, view);
        this.columnsEl.append(view.el);
      }
    }
    this.columnsEl.style.setProperty("--jb-compare-count", String(this.columns.size));
    for (const [key, view] of this.columns) {
      view.finished(state.rows.find((r) => `${r.strategy}#${r.run}` === key), state.trees[key]);
      view.el.classList.toggle("jb-compare-best", state.winner !== "" && view.el.dataset.strategy === state.winner);
    }
    const aggregated = state.runs > 1;
    this.table.update(aggregated ? state.summary.filter((s) => Number(s.runs) > 0) : state.rows, aggregated);
    this.table.markBest(state.winner);
    setText(this.winnerEl, state.winner ? `Marked best: ${state.winner}` : "");
  }

  dispose(): void {
    for (const c of this.columns.values()) c.dispose();
    this.root.remove();
  }
}
