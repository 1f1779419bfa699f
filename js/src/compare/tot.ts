// The Tree-of-Thoughts view: per decision point, the candidates the model proposed with
// their scores; the selected one highlighted, those under the pruning threshold pruned.
import { h } from "../dom";
import type { BranchData, TreeData } from "./protocol";

export type CandidateState = "selected" | "pruned" | "open";

export interface Candidate {
  id: number;
  thought: string;
  score: number;
  state: CandidateState;
}

export interface DecisionPoint {
  point: number;
  candidates: Candidate[];
}

/** Group parsed Branch steps by decision point; a `selected` step marks its candidate. */
export function buildTree(branches: BranchData[], threshold: number): DecisionPoint[] {
  const points = new Map<number, Map<number, Candidate>>();
  const chosen = new Set<string>();
  for (const b of branches) {
    const cands = points.get(b.decision_point) ?? new Map<number, Candidate>();
    points.set(b.decision_point, cands);
    if (b.selected) chosen.add(`${b.decision_point}:${b.branch_id}`);
    if (!cands.has(b.branch_id) || !b.selected) {
      const prev = cands.get(b.branch_id);
      cands.set(b.branch_id, { id: b.branch_id, thought: b.thought || prev?.thought || "", score: b.score, state: "open" });
    }
  }
  return [...points.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([point, cands]) => ({
      point,
      candidates: [...cands.values()]
        .sort((a, b) => a.id - b.id)
        .map((c) => ({
          ...c,
          state: chosen.has(`${point}:${c.id}`) ? "selected" : c.score < threshold ? "pruned" : "open",
        })),
    }));
}

export function renderTree(title: string, tree: TreeData): HTMLElement {
  const points = buildTree(tree.branches, tree.threshold);
  return h(
    "div",
    "jb-tot",
    h("div", "jb-tot-title", `${title} — Tree of Thoughts (pruned below ${tree.threshold.toFixed(2)})`),
    ...points.map((p) =>
      h(
        "div",
        { class: "jb-tot-point", "data-point": String(p.point) },
        h("div", "jb-tot-point-label", `Decision ${p.point}`),
        h(
          "ul",
          "jb-tot-candidates",
          ...p.candidates.map((c) =>
            h(
              "li",
              { class: `jb-tot-candidate jb-tot-${c.state}`, "data-branch": String(c.id) },
              h("span", "jb-tot-score", c.score.toFixed(2)),
              h("span", "jb-tot-thought", `Candidate ${c.id}: ${c.thought}`),
              c.state === "open" ? null : h("span", "jb-tot-badge", c.state),
            ),
          ),
        ),
      ),
    ),
  );
}
