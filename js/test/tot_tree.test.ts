import { describe, expect, it } from "vitest";
import { renderMarkdown } from "../src/markdown";
import { asBranch, type BranchData, buildTree, renderTree, TotTree } from "../src/parts/tot_tree";
import { totBranches as branches } from "./fixtures";

describe("tree of thoughts: the model", () => {
  it("nests each decision point under the candidate selected before it", () => {
    const tree = buildTree(branches, 0.4);
    expect(tree.map((p) => p.point)).toEqual([1]);
    expect(tree[0].candidates.map((c) => [c.id, c.state])).toEqual([[1, "selected"], [2, "pruned"], [3, "open"]]);
    const [first, second, third] = tree[0].candidates;
    expect(second.children).toEqual([]);
    expect(third.children).toEqual([]);
    expect(first.children.map((p) => p.point)).toEqual([2]);
    expect(first.children[0].candidates.map((c) => [c.id, c.state, c.thought])).toEqual([
      [1, "pruned", "plot bars"],
      [2, "selected", "plot line"],
    ]);
  });

  it("tells decision points of separate model calls apart (the parser restarts at 1)", () => {
    const call = (thought: string, selected: number): BranchData[] => [
      { branch_id: 1, thought: `${thought} a`, score: 0.9, decision_point: 1, selected: false },
      { branch_id: 2, thought: `${thought} b`, score: 0.2, decision_point: 1, selected: false },
      { branch_id: selected, thought: "", score: 0.9, decision_point: 1, selected: true },
    ];
    const tree = buildTree([...call("first", 1), ...call("second", 1)]);
    expect(tree.length).toBe(1);
    const nested = tree[0].candidates[0].children;
    expect(nested.map((p) => p.point)).toEqual([2]);
    expect(nested[0].candidates.map((c) => c.thought)).toEqual(["second a", "second b"]);
  });

  it("keeps points without a selection side by side, and marks a left selection as tried", () => {
    const tree = buildTree([
      { branch_id: 1, thought: "x", score: 0.5, decision_point: 1, selected: false },
      { branch_id: 1, thought: "y", score: 0.6, decision_point: 1, selected: false },
      { branch_id: 1, thought: "", score: 0.6, decision_point: 1, selected: true },
      { branch_id: 2, thought: "z", score: 0.5, decision_point: 1, selected: false },
    ]);
    // "1: x" alone, then a new point (1 proposed again); its selection, then backtracking
    // is a new point too (a candidate after the selection).
    expect(tree.map((p) => p.point)).toEqual([1, 2]);
    expect(tree[1].candidates[0].state).toBe("selected");
    expect(tree[1].candidates[0].children[0].candidates.map((c) => c.thought)).toEqual(["z"]);

    const back = buildTree([
      { branch_id: 1, thought: "a", score: 0.9, decision_point: 1, selected: false },
      { branch_id: 2, thought: "b", score: 0.7, decision_point: 1, selected: false },
      { branch_id: 1, thought: "", score: 0.9, decision_point: 1, selected: true },
      { branch_id: 2, thought: "", score: 0.7, decision_point: 1, selected: true },
    ]);
    expect(back[0].candidates.map((c) => c.state)).toEqual(["tried", "selected"]);
  });

  it("reads branch steps from strategy_step data and ignores other kinds", () => {
    expect(asBranch({ kind: "thought", text: "x" })).toBeNull();
    expect(asBranch({ kind: "branch", branch_id: "nope" })).toBeNull();
    expect(asBranch({ kind: "branch", branch_id: 2, thought: "t", score: 0.5, decision_point: 1, selected: true })).toEqual({
      branch_id: 2, thought: "t", score: 0.5, decision_point: 1, selected: true,
    });
  });
});

describe("tree of thoughts: the element", () => {
  it("renders nested lists with the selected path highlighted and pruned candidates marked", () => {
    const el = renderTree(branches, { threshold: 0.4, title: "tot#1" });
    expect(el.getAttribute("role")).toBe("tree");
    expect(el.querySelector(".jb-tot-title")?.textContent).toBe("tot#1 — Tree of Thoughts · pruned below 0.40");
    expect([...el.querySelectorAll(".jb-tot-selected .jb-tot-thought")].map((e) => e.textContent)).toEqual([
      "groupby",
      "plot line",
    ]);
    expect(el.querySelectorAll(".jb-tot-pruned").length).toBe(2);
    // Decision 2 sits inside the list item of the selected candidate of decision 1.
    const selected = el.querySelector('.jb-tot-point[data-point="1"] > .jb-tot-candidates > .jb-tot-branch-selected') as HTMLElement;
    expect(selected.querySelector(':scope > .jb-tot-candidate')?.getAttribute("data-branch")).toBe("1");
    expect(selected.querySelector('.jb-tot-point[data-point="2"]')).not.toBeNull();
    const pruned = el.querySelector('.jb-tot-point[data-point="1"] > .jb-tot-candidates > .jb-tot-branch-pruned') as HTMLElement;
    expect(pruned.querySelector(".jb-tot-score")?.textContent).toBe("0.30");
    expect(pruned.querySelector(".jb-tot-badge")?.textContent).toBe("pruned");
    expect(pruned.querySelector(".jb-tot-point")).toBeNull();
    expect(el.querySelectorAll('[aria-selected="true"]').length).toBe(2);
  });

  it("renders thoughts as sanitized Markdown when given a renderer", () => {
    const el = renderTree(
      [{ branch_id: 1, thought: "use **groupby** <img src=x onerror=alert(1)>", score: 0.9, decision_point: 1, selected: false }],
      { markdown: renderMarkdown },
    );
    const thought = el.querySelector(".jb-tot-thought") as HTMLElement;
    expect(thought.querySelector("strong")?.textContent).toBe("groupby");
    expect(thought.innerHTML).not.toContain("onerror");
    // Without one, the text stays text.
    const plain = renderTree([{ branch_id: 1, thought: "**x**", score: 0.9, decision_point: 1, selected: false }]);
    expect(plain.querySelector(".jb-tot-thought")?.textContent).toBe("**x**");
    expect(plain.querySelector("strong")).toBeNull();
  });

  it("grows as branch steps stream in", () => {
    const tree = new TotTree();
    expect(tree.add({ kind: "thought", text: "not a branch" })).toBe(false);
    expect(tree.el.querySelector(".jb-tot")).toBeNull();
    for (const b of branches.slice(0, 3)) tree.add({ kind: "branch", ...b });
    expect(tree.el.querySelectorAll(".jb-tot-candidate").length).toBe(3);
    expect(tree.el.querySelector(".jb-tot-selected")).toBeNull();
    tree.add({ kind: "branch", ...branches[3] });
    expect(tree.el.querySelector(".jb-tot-selected")?.getAttribute("data-branch")).toBe("1");
    expect(tree.size).toBe(4);
  });
});
