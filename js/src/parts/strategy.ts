// Strategy steps (ReAct, Reflexion, CoT, ToT) as structured rows: a label chip and the
// step's text as rendered Markdown. They replace the labelled model text they were parsed
// from (see StepView), so each thing shows once. Tree-of-Thoughts branches go to the
// shared tree component (parts/tot_tree.ts), one tree per turn.
import { h } from "../dom";
import { STRATEGY_LABEL } from "../format";
import type { EventOf } from "../protocol";
import type { MarkdownFn } from "./text";
import { TotTree } from "./tot_tree";

export interface StrategyContext {
  markdown: MarkdownFn;
  /** The turn's Tree-of-Thoughts tree (made on first use); null where the host shows
   *  the tree itself (the CompareView's tree section). */
  tot: () => TotTree | null;
}

const safeKind = (kind: string) => kind.replace(/[^a-z_]/gi, "");
const str = (v: unknown) => (v === undefined || v === null ? "" : String(v));

function md(markdown: MarkdownFn, src: string, cls = "jb-sstep-text"): HTMLElement {
  const div = h("div", `jb-md ${cls}`);
  div.innerHTML = markdown(src);
  return div;
}

/** The chip's label and the Markdown body of one step's dict (a StrategyStep dumped). */
export function stepLabel(data: Record<string, unknown>): string {
  const kind = str(data.kind) || "step";
  if (kind === "branch") return `Candidate ${str(data.branch_id ?? "?")}`;
  return typeof data.label === "string" && data.label ? data.label : STRATEGY_LABEL[kind] ?? kind;
}

export function strategyRow(data: Record<string, unknown>, markdown: MarkdownFn): HTMLElement {
  const kind = str(data.kind) || "step";
  const row = h(
    "div",
    { class: `jb-sstep jb-kind-${safeKind(kind)}`, "data-kind": kind },
    h("span", `jb-chip jb-chip-${safeKind(kind)}`, stepLabel(data)),
  );
  if (kind === "action") {
    // The call itself (arguments, result) is the tool row below: only its name here.
    row.append(h("div", "jb-sstep-text", h("code", "jb-sstep-tool", str(data.tool) || "?")));
  } else if (kind === "reflection") {
    const body = h("div", "jb-sstep-body", md(markdown, str(data.critique)));
    if (data.revised_plan) body.append(h("div", "jb-sstep-plan-label", "Revised plan"), md(markdown, str(data.revised_plan), "jb-sstep-plan"));
    row.append(body);
  } else if (kind === "branch") {
    row.append(h("span", "jb-tot-score", Number(data.score ?? 0).toFixed(2)), md(markdown, str(data.thought)));
    if (data.selected) row.classList.add("jb-selected");
  } else {
    row.append(md(markdown, str(data.text ?? data.thought)));
  }
  return row;
}

/** The one place strategy steps are painted: ToT branches into the turn's tree (moved to
 *  the latest step that added to it), every other step as a row of `list`. */
export function renderStrategySteps(list: HTMLElement, e: EventOf<"strategy_step">, ctx: StrategyContext): void {
  if (e.data.kind === "branch") {
    const tree = ctx.tot();
    if (tree === null) return;
    if (tree.add(e.data)) {
      if (tree.el.parentElement !== list) list.append(tree.el);
      return;
    }
  }
  list.append(strategyRow(e.data, ctx.markdown));
}

// A label line ("Thought:", "**Final Answer:**", "- Action:", "### Plan:", "Candidate 2:").
const LABEL_LINE = /^\s*(?:[-*>]\s+)?(?:#+\s*)?(?:\*\*|__)?\s*[A-Za-z][A-Za-z ]{0,24}\d*\s*(?:\*\*|__)?\s*:/m;

/** The model's text before its first labelled step (the parser keeps no step for it). */
export function preamble(text: string): string {
  const m = LABEL_LINE.exec(text);
  const head = m === null ? "" : text.slice(0, m.index);
  return head.replace(/^\s*=+[^\n]*=+\s*$/gm, "").trim(); // ToT's "=== Decision point ===" lines
}

// A "Final Answer:" label line, decorated as models write it ("**Final Answer:**", "### Final answer:").
const FINAL_LINE = /^\s*(?:[-*>]\s+)?(?:#+\s*)?(?:(?:\*\*|__)\s*final\s+answer\s*(?:\*\*|__)?\s*:\s*(?:\*\*|__)?|final\s+answer\s*:)[ \t]*/gim;

/** Text written without a strategy that still labels its answer ("Final Answer: …", as
 *  agent/strategies/parser.py final_answer reads it): the text before the last such line,
 *  and the answer after it without the label; null when there is no such line. */
export function splitFinalAnswer(text: string): { before: string; answer: string } | null {
  let last: RegExpExecArray | null = null;
  for (const m of text.matchAll(FINAL_LINE)) last = m as RegExpExecArray;
  if (last === null) return null;
  const answer = text.slice(last.index + last[0].length).trim();
  return answer ? { before: text.slice(0, last.index).trim(), answer } : null;
}
