// The Tree-of-Thoughts tree, shared by the AgentView and the CompareView: each decision
// point lists the candidates the model proposed with their scores; the next decision point
// hangs under the candidate selected at the one before, so the selected path reads top to
// bottom through the nesting, and candidates under the pruning threshold are greyed.
import { h } from "../dom";
import "./tot_tree.css";

/** TreeOfThoughtsStrategy's default pruning threshold (the events do not carry it). */
export const DEFAULT_THRESHOLD = 0.4;

/** A parsed Branch step (jupyter_brain/agent/strategies/steps.py) as it travels. */
export interface BranchData {
  branch_id: number;
  thought: string;
  score: number;
  decision_point: number;
  selected: boolean;
}

/** selected: the path taken; tried: selected earlier, then left (backtracking). */
export type CandidateState = "selected" | "tried" | "pruned" | "open";

export interface Candidate {
  id: number;
  thought: string;
  score: number;
  state: CandidateState;
  /** The decision points reached from this candidate (only the selected one has any). */
  children: DecisionPoint[];
}

export interface DecisionPoint {
  /** 1, 2, … in the order the turn reached them (the parser restarts its count per step). */
  point: number;
  candidates: Candidate[];
}

interface RawPoint {
  cands: Map<number, { thought: string; score: number }>;
  picks: number[]; // selected ids, in order (the last one is the path taken)
  source: number; // the parser's decision_point
}

/** Whether ``data`` (a strategy step's dict) is a Tree-of-Thoughts branch. */
export function asBranch(data: Record<string, unknown>): BranchData | null {
  if (data.kind !== "branch") return null;
  const id = Number(data.branch_id);
  if (!Number.isFinite(id)) return null;
  const score = Number(data.score);
  return {
    branch_id: id,
    thought: typeof data.thought === "string" ? data.thought : "",
    score: Number.isFinite(score) ? score : 0,
    decision_point: Number(data.decision_point ?? 1) || 1,
    selected: data.selected === true,
  };
}

/** Split the branch steps into decision points, in order. A new point starts when the
 *  parser's number changes, or when a candidate is proposed again after a selection (the
 *  parser counts points per model call, so two calls both say "decision point 1"). */
function segment(branches: BranchData[]): RawPoint[] {
  const points: RawPoint[] = [];
  let cur: RawPoint | null = null;
  for (const b of branches) {
    const fresh =
      cur === null ||
      b.decision_point !== cur.source ||
      (!b.selected && (cur.picks.length > 0 || cur.cands.has(b.branch_id)));
    if (fresh) {
      cur = { cands: new Map(), picks: [], source: b.decision_point };
      points.push(cur);
    }
    const p = cur as RawPoint;
    const prev = p.cands.get(b.branch_id);
    if (b.selected) {
      p.picks.push(b.branch_id);
      if (prev === undefined) p.cands.set(b.branch_id, { thought: b.thought, score: b.score });
    } else {
      p.cands.set(b.branch_id, { thought: b.thought || prev?.thought || "", score: b.score });
    }
  }
  return points;
}

/** The tree: the top-level decision points (the later ones nested under selections). */
export function buildTree(branches: BranchData[], threshold = DEFAULT_THRESHOLD): DecisionPoint[] {
  const top: DecisionPoint[] = [];
  let level = top; // where the next decision point goes
  segment(branches).forEach((raw, i) => {
    const last = raw.picks[raw.picks.length - 1];
    const candidates = [...raw.cands.entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([id, c]): Candidate => {
        const state: CandidateState =
          id === last ? "selected" : raw.picks.includes(id) ? "tried" : c.score < threshold ? "pruned" : "open";
        return { id, thought: c.thought, score: c.score, state, children: [] };
      });
    level.push({ point: i + 1, candidates });
    const chosen = candidates.find((c) => c.state === "selected");
    if (chosen) level = chosen.children;
  });
  return top;
}

export type InlineMarkdown = (src: string) => string;

const BADGE: Record<CandidateState, string> = { selected: "selected", tried: "tried", pruned: "pruned", open: "" };

function candidateItem(c: Candidate, md: InlineMarkdown | null): HTMLElement {
  const thought = h("div", "jb-tot-thought jb-md");
  if (md) thought.innerHTML = md(c.thought || "(no text)");
  else thought.textContent = c.thought || "(no text)";
  const node = h(
    "div",
    {
      class: `jb-tot-candidate jb-tot-${c.state}`,
      "data-branch": String(c.id),
      "data-state": c.state,
    },
    h("span", "jb-tot-label", `Candidate ${c.id}`),
    h("span", { class: "jb-tot-score", title: "the model's own score, 0 to 1" }, c.score.toFixed(2)),
    BADGE[c.state] ? h("span", "jb-tot-badge", BADGE[c.state]) : null,
    thought,
  );
  const li = h(
    "li",
    { class: `jb-tot-branch jb-tot-branch-${c.state}`, role: "treeitem", "aria-selected": String(c.state === "selected") },
    node,
  );
  if (c.children.length) li.append(pointList(c.children, md));
  return li;
}

function pointList(points: DecisionPoint[], md: InlineMarkdown | null): HTMLElement {
  return h(
    "ul",
    { class: "jb-tot-points", role: "group" },
    ...points.map((p) =>
      h(
        "li",
        { class: "jb-tot-point", "data-point": String(p.point), role: "treeitem", "aria-expanded": "true" },
        h("div", "jb-tot-point-label", `Decision ${p.point}`),
        h("ul", { class: "jb-tot-candidates", role: "group" }, ...p.candidates.map((c) => candidateItem(c, md))),
      ),
    ),
  );
}

/** The tree of ``branches`` as an element (``title`` above it when given). */
export function renderTree(
  branches: BranchData[],
  opts: { threshold?: number; title?: string; markdown?: InlineMarkdown | null } = {},
): HTMLElement {
  const threshold = opts.threshold ?? DEFAULT_THRESHOLD;
  const tree = buildTree(branches, threshold);
  const heading = `${opts.title ? `${opts.title} — ` : ""}Tree of Thoughts · pruned below ${threshold.toFixed(2)}`;
  const root = h("div", { class: "jb-tot", role: "tree", "aria-label": heading }, h("div", "jb-tot-title", heading));
  root.append(pointList(tree, opts.markdown ?? null));
  return root;
}

/** A tree that grows as branch steps stream in (one per turn in the AgentView). */
export class TotTree {
  readonly el: HTMLElement;
  private readonly branches: BranchData[] = [];

  constructor(private readonly opts: { threshold?: number; title?: string; markdown?: InlineMarkdown | null } = {}) {
    this.el = h("div", "jb-tot-host");
  }

  /** Add one strategy step's data; false (and nothing added) unless it is a branch. */
  add(data: Record<string, unknown>): boolean {
    const branch = asBranch(data);
    if (branch === null) return false;
    this.branches.push(branch);
    this.el.replaceChildren(renderTree(this.branches, this.opts));
    return true;
  }

  get size(): number {
    return this.branches.length;
  }
}
