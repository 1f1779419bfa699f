// The summary table: one row per run (or, with several runs, mean ± spread per
// strategy), sortable by clicking a column header (again to reverse).
import { h } from "../dom";

export type Cell = string | number | null | undefined;
export type Record_ = Record<string, Cell>;

export interface ColumnSpec {
  key: string;
  label: string;
  digits?: number;
}

export const METRICS: ColumnSpec[] = [
  { key: "steps", label: "steps" },
  { key: "tool_calls", label: "tools" },
  { key: "reflections", label: "reflections" },
  { key: "input_tokens", label: "in tok" },
  { key: "output_tokens", label: "out tok" },
  { key: "cache_read_tokens", label: "cache read" },
  { key: "cache_creation_tokens", label: "cache write" },
  { key: "cost_usd", label: "cost $", digits: 4 },
  { key: "wall_s", label: "wall s", digits: 2 },
];

/** Sorted copy; missing values (null) always last; strings compare as text. */
export function sortRows(rows: Record_[], key: string, descending: boolean): Record_[] {
  const sign = descending ? -1 : 1;
  return rows
    .map((row, i) => ({ row, i }))
    .sort((a, b) => {
      const x = a.row[key];
      const y = b.row[key];
      const xm = x === null || x === undefined;
      const ym = y === null || y === undefined;
      if (xm || ym) return xm === ym ? a.i - b.i : xm ? 1 : -1;
      const c = typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y));
      return c !== 0 ? sign * c : a.i - b.i;
    })
    .map((e) => e.row);
}

export function formatNumber(v: Cell, digits = 0): string {
  if (v === null || v === undefined) return "–";
  if (typeof v !== "number") return String(v);
  return digits ? v.toFixed(digits) : Number.isInteger(v) ? v.toLocaleString("en-US") : v.toFixed(1);
}

/** "mean ± sd" when a spread is known, else the mean alone. */
export function meanSpread(row: Record_, key: string, digits = 0): string {
  const sd = row[`${key}_sd`];
  const mean = formatNumber(row[key], digits || (Number.isInteger(row[key]) ? 0 : 1));
  return sd === null || sd === undefined ? mean : `${mean} ± ${formatNumber(sd, digits || 1)}`;
}

export class SummaryTable {
  readonly el: HTMLTableElement;
  sortKey = "";
  descending = false;
  private records: Record_[] = [];
  private columns: ColumnSpec[] = [];
  private aggregated = false;
  private winner = "";

  constructor() {
    this.el = h("table", "jb-compare-table");
  }

  /** Per-run rows (runs = 1) or per-strategy summaries (runs > 1). */
  update(records: Record_[], aggregated: boolean): void {
    this.records = records;
    this.aggregated = aggregated;
    const lead: ColumnSpec[] = aggregated
      ? [{ key: "strategy", label: "strategy" }, { key: "completed", label: "completed" }]
      : [{ key: "strategy", label: "strategy" }, { key: "status", label: "status" }];
    this.columns = [...lead, ...METRICS];
    this.paint();
  }

  /** Highlight the marked winner's row(s). */
  markBest(strategy: string): void {
    if (strategy === this.winner) return;
    this.winner = strategy;
    this.paint();
  }

  sortBy(key: string): void {
    this.descending = this.sortKey === key ? !this.descending : false;
    this.sortKey = key;
    this.paint();
  }

  private paint(): void {
    const head = h(
      "tr",
      {},
      ...this.columns.map((c) => {
        const mark = c.key === this.sortKey ? (this.descending ? " ▼" : " ▲") : "";
        const th = h("th", { "data-key": c.key, title: "sort by this column" }, c.label + mark);
        th.addEventListener("click", () => this.sortBy(c.key));
        return th;
      }),
    );
    const rows = this.sortKey ? sortRows(this.records, this.sortKey, this.descending) : this.records;
    const body = rows.map((r) =>
      h(
        "tr",
        {
          "data-strategy": String(r.strategy),
          class: [
            r.status === "error" ? "jb-row-error" : r.status === "refused" ? "jb-row-refused" : "",
            this.winner !== "" && r.strategy === this.winner ? "jb-row-best" : "",
          ].filter(Boolean).join(" "),
        },
        ...this.columns.map((c) => {
          if (c.key === "strategy") return h("td", {}, this.aggregated ? String(r.strategy) : `${r.strategy} #${r.run}`);
          if (c.key === "status" || c.key === "completed") return h("td", {}, formatNumber(r[c.key]) + (c.key === "completed" ? `/${r.runs}` : ""));
          return h("td", "jb-num", this.aggregated ? meanSpread(r, c.key, c.digits) : formatNumber(r[c.key], c.digits));
        }),
      ),
    );
    this.el.replaceChildren(h("thead", {}, head), h("tbody", {}, ...body));
  }
}
