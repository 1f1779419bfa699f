// What one comparison column shows besides the agent's own view, each in its own section
// so the sections line up across columns: the answer, the Tree-of-Thoughts tree, the tools
// called, the tokens and the cost — all folded from the column's events as they stream.
import { h, setText } from "../dom";
import { cost, STATUS_LABEL, tokens, TOOL_ICON } from "../format";
import { asBranch, type BranchData, DEFAULT_THRESHOLD, renderTree } from "../parts/tot_tree";
import type { AgentEvent } from "../protocol";
import type { StoreListener } from "../store";
import type { Row, TreeData } from "./protocol";

/** The names of the comparable sections, in order (each a row of the shared grid). */
export const SECTIONS = ["head", "answer", "steps", "tree", "tools", "tokens", "cost"] as const;
export type Section = (typeof SECTIONS)[number];

export interface ColumnFacts {
  answer: string;
  ended: boolean;
  /** Why a turn that did not complete stopped ("failed: provider error"). */
  stopped: string;
  tools: { name: string; status: string }[];
  inputTokens: number;
  outputTokens: number;
  costUsd: number | null;
  branches: BranchData[];
}

const empty = (): ColumnFacts => ({ answer: "", ended: false, stopped: "", tools: [], inputTokens: 0, outputTokens: 0, costUsd: null, branches: [] });

/** Fold events into the facts a column compares (the answer: the strategy's final
 *  answer when it parsed one, else the turn's text). */
export function foldFacts(facts: ColumnFacts, events: AgentEvent[]): ColumnFacts {
  for (const e of events) {
    if (e.type === "turn_start") Object.assign(facts, empty());
    else if (e.type === "tool_call_end") facts.tools.push({ name: e.name, status: e.status });
    else if (e.type === "usage") {
      facts.inputTokens += e.input_tokens ?? 0;
      facts.outputTokens += e.output_tokens ?? 0;
      if (e.cost_usd !== null && e.cost_usd !== undefined) facts.costUsd = (facts.costUsd ?? 0) + e.cost_usd;
    } else if (e.type === "strategy_step") {
      if (e.data.kind === "final_answer" && typeof e.data.text === "string") facts.answer = e.data.text;
      const b = asBranch(e.data);
      if (b) facts.branches.push(b);
    } else if (e.type === "turn_end") {
      facts.ended = true;
      // Only a completed turn has an answer; the others say why they stopped (their
      // error card is in the steps section, shown once).
      if (e.status === "completed") facts.answer ||= e.text ?? "";
      else facts.stopped = STATUS_LABEL[e.status] ?? e.status;
      facts.inputTokens = e.input_tokens ?? facts.inputTokens;
      facts.outputTokens = e.output_tokens ?? facts.outputTokens;
      if (e.cost_usd !== null && e.cost_usd !== undefined) facts.costUsd = e.cost_usd;
    }
  }
  return facts;
}

function section(name: Section, ...children: (Node | null)[]): HTMLElement {
  return h(
    "div",
    { class: `jb-compare-section jb-compare-${name}`, "data-section": name },
    name === "head" || name === "steps" ? null : h("div", "jb-compare-section-label", name),
    ...children,
  );
}

/** The answer / tree / tools / tokens / cost sections of one column. */
export class ColumnFactsView implements StoreListener {
  readonly answer: HTMLElement;
  readonly tree: HTMLElement;
  readonly tools: HTMLElement;
  readonly tokens: HTMLElement;
  readonly cost: HTMLElement;
  private facts = empty();
  private threshold = DEFAULT_THRESHOLD;
  private readonly answerBody = h("div", "jb-md jb-compare-answer-body");
  private readonly treeBody = h("div", "jb-compare-tree-body");
  private readonly toolsBody = h("ul", "jb-compare-tools-list");
  private readonly tokensBody = h("div", "jb-compare-value");
  private readonly costBody = h("div", "jb-compare-value");
  private shownAnswer: string | null = null;
  private shownBranches = -1;
  private kernelBranches: BranchData[] = [];

  constructor(private readonly markdown: (src: string) => string) {
    this.answer = section("answer", this.answerBody);
    this.tree = section("tree", this.treeBody);
    this.tools = section("tools", this.toolsBody);
    this.tokens = section("tokens", this.tokensBody);
    this.cost = section("cost", this.costBody);
  }

  get elements(): HTMLElement[] {
    return [this.answer, this.tree, this.tools, this.tokens, this.cost];
  }

  append(events: AgentEvent[]): void {
    foldFacts(this.facts, events);
    this.paint();
  }

  reset(events: AgentEvent[]): void {
    this.facts = foldFacts(empty(), events);
    this.paint();
  }

  /** The kernel's tree of a finished run: its threshold, and its branches when the
   *  column's events hold none (a transcript without strategy steps). */
  setTree(tree: TreeData | undefined): void {
    if (tree === undefined || (tree.threshold === this.threshold && tree.branches === this.kernelBranches)) return;
    this.threshold = tree.threshold;
    this.kernelBranches = tree.branches;
    this.shownBranches = -1;
    this.paint();
  }

  /** The run's table row is authoritative once it has finished. */
  finished(row: Row | undefined): void {
    if (row === undefined) return;
    const num = (v: unknown) => (typeof v === "number" ? v : null);
    this.facts.inputTokens = num(row.input_tokens) ?? this.facts.inputTokens;
    this.facts.outputTokens = num(row.output_tokens) ?? this.facts.outputTokens;
    this.facts.costUsd = num(row.cost_usd) ?? this.facts.costUsd;
    this.facts.ended = true;
    if (!this.facts.answer && !this.facts.stopped && row.status !== "completed") {
      this.facts.stopped = STATUS_LABEL[row.status] ?? row.status;
    }
    this.paint();
  }

  private paint(): void {
    const f = this.facts;
    const key = f.answer ? `a:${f.answer}` : f.ended ? `s:${f.stopped}` : "running";
    if (key !== this.shownAnswer) {
      this.shownAnswer = key;
      if (f.answer) this.answerBody.innerHTML = this.markdown(f.answer);
      else this.answerBody.replaceChildren(h("span", "jb-compare-none", f.ended ? f.stopped || "no answer" : "running…"));
    }
    const branches = f.branches.length ? f.branches : this.kernelBranches;
    if (branches.length !== this.shownBranches) {
      this.shownBranches = branches.length;
      this.treeBody.replaceChildren(
        branches.length ? renderTree(branches, { threshold: this.threshold, markdown: this.markdown }) : "",
      );
      this.tree.classList.toggle("jb-compare-empty", branches.length === 0);
    }
    this.toolsBody.replaceChildren(
      ...(f.tools.length
        ? f.tools.map((t) => h("li", { class: `jb-compare-tool jb-tool-${t.status}` }, `${TOOL_ICON[t.status] ?? "•"} ${t.name}`))
        : [h("li", "jb-compare-none", "none")]),
    );
    setText(this.tokensBody, `in ${tokens(f.inputTokens)} · out ${tokens(f.outputTokens)}`);
    setText(this.costBody, cost(f.costUsd));
  }
}
