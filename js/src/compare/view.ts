// Paints a comparison: a column per run (each an AgentRenderer following that run's
// event store), the summary table, Tree-of-Thoughts trees and "mark best" buttons.
import { h, setText } from "../dom";
import { AgentRenderer, type RendererOptions } from "../renderer";
import type { EventStore } from "../store";
import type { Column, CompareState, Row } from "./protocol";
import { SummaryTable } from "./table";
import { renderTree } from "./tot";

export interface CompareOptions extends RendererOptions {
  onMarkBest?: (strategy: string, run: number) => void;
}

class ColumnView {
  readonly el: HTMLElement;
  readonly status: HTMLElement;
  readonly button: HTMLButtonElement;
  private readonly errorSlot: HTMLElement;
  private readonly body: HTMLElement;
  private readonly renderer: AgentRenderer;
  private readonly unsubscribe: () => void;

  constructor(col: Column, store: EventStore, opts: CompareOptions) {
    const body = h("div", "jb-compare-body");
    this.body = body;
    this.status = h("span", "jb-compare-status", "running");
    this.button = h("button", { class: "jb-mark-best", type: "button", title: "record this answer as the best" }, "Mark best");
    this.button.addEventListener("click", () => opts.onMarkBest?.(col.strategy, col.run));
    this.errorSlot = h("div", "jb-compare-error-slot");
    this.el = h(
      "div",
      { class: "jb-compare-column", "data-key": col.key, "data-strategy": col.strategy },
      h("div", "jb-compare-head", h("span", "jb-compare-name", `${col.strategy} #${col.run}`), this.status, this.button),
      this.errorSlot,
      body,
    );
    this.renderer = new AgentRenderer(body, opts);
    this.renderer.reset(store.events.slice());
    this.unsubscribe = store.subscribe(this.renderer);
  }

  finished(row: Row | undefined): void {
    setText(this.status, row ? String(row.status) : "running");
    this.el.classList.toggle("jb-compare-failed", row?.status === "error");
    // A run that raised before any event has no error card in its stream: show it here.
    const shown = this.errorSlot.firstChild !== null || this.body.querySelector(".jb-error") !== null;
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
  private readonly treesEl = h("div", "jb-compare-trees");
  private readonly title = h("div", "jb-compare-title");
  private readonly winnerEl = h("div", "jb-compare-winner");
  private columns = new Map<string, ColumnView>();

  constructor(
    host: HTMLElement,
    private readonly stores: (key: string) => EventStore,
    private readonly opts: CompareOptions = {},
  ) {
    this.root = h("div", "jb-compare-view", this.title, this.columnsEl, h("div", "jb-compare-table-wrap", this.table.el), this.treesEl, this.winnerEl);
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
    for (const [key, view] of this.columns) {
      view.finished(state.rows.find((r) => `${r.strategy}#${r.run}` === key));
      view.el.classList.toggle("jb-compare-best", state.winner !== "" && view.el.dataset.strategy === state.winner);
    }
    const aggregated = state.runs > 1;
    this.table.update(aggregated ? state.summary.filter((s) => Number(s.runs) > 0) : state.rows, aggregated);
    this.treesEl.replaceChildren(...Object.entries(state.trees).map(([key, tree]) => renderTree(key, tree)));
    setText(this.winnerEl, state.winner ? `Marked best: ${state.winner}` : "");
  }

  dispose(): void {
    for (const c of this.columns.values()) c.dispose();
    this.root.remove();
  }
}
