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
export type Row = Record<string, string | number | null> & { strategy: string; run: number; status: string };


export interface TreeData {
  threshold: number;
  branches: BranchData[];
}

export interface CompareState {
  columns: Column[];
  epoch: number;
  runs: number;
  rows: Row[];
  summary: Record<string, string | number | null>[];
  trees: Record<string, TreeData>;
  winner: string;
  comparison_id: string;
  prompt: string;
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
