// The summary table: one row per run (or, with several runs, mean ± spread per
// strategy), sortable by clicking a column header (again to reverse). With checks,
// success comes first: pass/fail per run, or passed/runs with the 95 % Wilson interval
// per strategy, each failure's reason in the cell's title. Numbers never wrap; a spread
// shows only where the runs differ ("2", not "2 ± 0.0").
import { h } from "../dom";
import type { RowValue } from "./protocol";

export type Cell = RowValue;
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
  // A --judge's own calls: shown only when there was a judge (a model's opinion).
  { key: "judge_tokens", label: "judge tok" },
  { key: "judge_cost_usd", label: "judge $", digits: 4 },
];
const OPTIONAL = new Set(["judge_tokens", "judge_cost_usd"]);

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

/** "mean ± sd" when the runs differ, else the mean alone ("2", never "2 ± 0.0"). */
export function meanSpread(row: Record_, key: string, digits = 0): string {
  const sd = row[`${key}_sd`];
  const mean = formatNumber(row[key], digits || (Number.isInteger(row[key]) ? 0 : 1));
  if (typeof sd !== "number") return mean;
  const spread = formatNumber(sd, digits || 1);
  return Number(spread) === 0 ? mean : `${mean} ± ${spread}`;
}

/** A strategy's success: "3/5 · 60 % (23–88 %)" (one run: "pass" / "fail"); "" without checks. */
export function successText(row: Record_): string {
  const passed = row.passed;
  const checked = row.checked;
  if (typeof passed !== "number" || typeof checked !== "number" || checked === 0) return "";
  if (checked === 1) return passed === 1 ? "✓ pass" : "✗ fail";
  const pct = (v: Cell) => Math.round(100 * Number(v));
  return `${passed}/${checked} · ${pct(passed / checked)} % (${pct(row.low)}–${pct(row.high)} %)`;
}

/** The reasons a strategy's (or a run's) checks failed, one per line, for a title. */
export function failureTitle(row: Record_): string {
  if (Array.isArray(row.reasons)) return row.reasons.length ? row.reasons.join("\n") : "every run passed";
  if (row.passed === false) return String(row.reason || "a check failed");
  return row.passed === true ? "passed every check" : "";
}

function checked(records: Record_[], aggregated: boolean): boolean {
  return records.some((r) => (aggregated ? typeof r.checked === "number" : typeof r.passed === "boolean"));
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
  update(records: Record_[], aggregated: boolean, judged = false): void {
    this.records = records;
    this.aggregated = aggregated;
    const success: ColumnSpec[] = checked(records, aggregated)
      ? [{
          key: aggregated ? "rate" : "passed",
          // A --judge's verdict is a model's opinion: the column says so.
          label: (aggregated ? "success (95 % CI)" : "check") + (judged ? " · judge: a model's opinion" : ""),
        }]
      : [];
    const lead: ColumnSpec[] = aggregated
      ? [{ key: "strategy", label: "strategy" }, ...success, { key: "completed", label: "completed" }]
      : [{ key: "strategy", label: "strategy" }, ...success, { key: "status", label: "status" }];
    const metrics = METRICS.filter((m) => !OPTIONAL.has(m.key) || records.some((r) => r[m.key] !== null && r[m.key] !== undefined));
    this.columns = [...lead, ...metrics];
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
          if (c.key === "rate" || c.key === "passed") return this.successCell(r);
          if (c.key === "status" || c.key === "completed") return h("td", "jb-nowrap", formatNumber(r[c.key]) + (c.key === "completed" ? `/${r.runs}` : ""));
          return h("td", "jb-num", this.aggregated ? meanSpread(r, c.key, c.digits) : formatNumber(r[c.key], c.digits));
        }),
      ),
    );
    this.el.replaceChildren(h("thead", {}, head), h("tbody", {}, ...body));
  }

  /** Pass/fail (a run) or the success rate (a strategy); why it failed on hover. */
  private successCell(r: Record_): HTMLElement {
    const run = typeof r.passed === "boolean";
    const text = run ? (r.passed ? "✓ pass" : "✗ fail") : successText(r);
    const failed = run ? r.passed === false : Number(r.passed) < Number(r.checked);
    if (!text) return h("td", "jb-nowrap", "–");
    return h("td", { class: `jb-nowrap jb-compare-success ${failed ? "jb-fail" : "jb-pass"}`, title: failureTitle(r) }, text);
  }
}
