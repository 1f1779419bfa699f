// What travels between jupyter_brain/widgets/compare_view.py and the compare view.
import type { AgentEvent, Batch } from "../protocol";
import type { BranchData } from "../parts/tot_tree";
import { isBatch } from "../protocol";

export type { BranchData };

/** One run's column: its durable compact transcript (`n` raw events folded in). */
export interface Column {
  key: string;
  strategy: string;
  run: number;
  transcript: AgentEvent[];
  n: number;
}

/** A finished run's table row (jupyter_brain.compare.row_of). */
/** A table value: a figure, a status, a failure list (``reasons``), a run's verdicts. */
export type RowValue = string | number | boolean | null | undefined | string[] | Verdict[];

export type Row = Record<string, RowValue> & {
  strategy: string;
  run: number;
  status: string;
  /** With checks: whether every check passed, why not, and each check's verdict. */
  passed?: boolean | null;
  reason?: string | null;
  verdicts?: Verdict[] | null;
};

/** One check's verdict (jupyter_brain.evals.CheckResult); ``opinion``: a judge's, a model's opinion. */
export interface Verdict {
  kind: string;
  label: string;
  passed: boolean;
  reason: string;
  opinion: boolean;
}


export interface TreeData {
  threshold: number;
  branches: BranchData[];
}

export interface CompareState {
  columns: Column[];
  epoch: number;
  runs: number;
  rows: Row[];
  summary: Record<string, RowValue>[];
  trees: Record<string, TreeData>;
  winner: string;
  comparison_id: string;
  prompt: string;
  /** The header's notes: a budget cap that stopped the comparison early, a changed namespace. */
  notes: string[];
}

/** One live message: every column's pending batch (AgentView's batch format). */
export interface CompareMessage {
  kind: "compare";
  batches: Record<string, Batch>;
}

export function isCompareMessage(msg: unknown): msg is CompareMessage {
  if (typeof msg !== "object" || msg === null) return false;
  const m = msg as Partial<CompareMessage>;
  return m.kind === "compare" && typeof m.batches === "object" && m.batches !== null && Object.values(m.batches).every(isBatch);
}
