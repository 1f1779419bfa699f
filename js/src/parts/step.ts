// One step (model call) of a turn: its blocks in arrival order — thinking, text, strategy
// rows, one tool timeline, cards. Strategy rows replace the labelled text they were parsed
// from once that text is complete; the turn's answer is taken out of its last step.
import { h } from "../dom";
import type { EventOf } from "../protocol";
import { renderStrategySteps, preamble, splitFinalAnswer, type StrategyContext } from "./strategy";
import { type MarkdownFn, TextBlock } from "./text";
import { ThinkingBlock } from "./thinking";
import { ToolTimeline } from "./tools";

export interface StepOptions {
  markdown: MarkdownFn;
  throttleMs: number;
  strategy: StrategyContext;
}

type FlowBlock = TextBlock | ThinkingBlock | HTMLElement;

export class StepView {
  readonly el: HTMLElement;
  private readonly flow: HTMLDivElement;
  private last: FlowBlock | null = null;
  private thinking: ThinkingBlock | null = null;
  tools: ToolTimeline | null = null;
  /** This attempt's text blocks, shown until strategy rows replace them. */
  private texts: TextBlock[] = [];
  /** Text blocks replaced by strategy rows (their source, should the answer need it). */
  private parsed: TextBlock[] = [];
  private rows: HTMLDivElement | null = null;
  private finalAnswer: { el: Element; text: string } | null = null;

  constructor(
    readonly step: number,
    private readonly opts: StepOptions,
  ) {
    this.flow = h("div", "jb-step-flow");
    this.el = h("section", { class: "jb-step", "data-step": String(step) }, h("div", "jb-step-label", `Step ${step}`), this.flow);
  }

  /** Add a block after the others; the text block streaming so far is final. */
  private add(block: FlowBlock): void {
    this.closeText();
    this.flow.append(block instanceof HTMLElement ? block : block.el);
    this.last = block;
  }

  closeText(): void {
    if (this.last instanceof TextBlock && !this.last.closed) this.last.close();
    this.replaceParsedText();
  }

  text(delta: string): void {
    if (!(this.last instanceof TextBlock) || this.last.closed) {
      const block = new TextBlock(this.opts.markdown, this.opts.throttleMs);
      this.texts.push(block);
      this.add(block);
    }
    (this.last as TextBlock).append(delta);
  }

  think(delta: string): void {
    if (this.thinking === null || this.thinking.ended || this.last !== this.thinking) {
      this.thinking = new ThinkingBlock();
      this.add(this.thinking);
    }
    this.thinking.append(delta);
  }

  thinkingEnd(): void {
    this.thinking?.end();
  }

  timeline(): ToolTimeline {
    if (this.tools === null) {
      this.tools = new ToolTimeline();
      this.add(this.tools.el);
    }
    return this.tools;
  }

  /** A parsed strategy step: a row where the text it came from is (that text goes once
   *  it is complete; it may still stream when its first steps arrive). */
  strategy(e: EventOf<"strategy_step">): void {
    if (this.rows === null) {
      this.rows = h("div", "jb-strategy");
      const first = this.texts[0];
      if (first !== undefined) this.flow.insertBefore(this.rows, first.el);
      else this.flow.append(this.rows);
    }
    renderStrategySteps(this.rows, e, this.opts.strategy);
    if (e.data.kind === "final_answer" && this.rows.lastElementChild !== null) {
      this.finalAnswer = { el: this.rows.lastElementChild, text: String(e.data.text ?? "") };
    }
    this.replaceParsedText();
  }

  /** Once the step's text is complete and rows were parsed from it, the rows stand in
   *  for it; text before the first label (which no step holds) stays, as a row. */
  private replaceParsedText(): void {
    if (this.rows === null || this.rows.childElementCount === 0 || this.texts.some((t) => !t.closed)) return;
    if (this.texts.length === 0) return;
    const head = preamble(this.texts.map((t) => t.source).join(""));
    if (head) {
      const row = h("div", "jb-sstep jb-kind-preamble jb-md");
      row.innerHTML = this.opts.markdown(head);
      this.rows.prepend(row);
    }
    for (const t of this.texts) {
      t.el.remove();
      this.parsed.push(t);
    }
    this.texts = [];
  }

  card(el: HTMLElement): void {
    this.add(el);
  }

  /** The turn's answer, taken out of this (last) step: the Final Answer row's text, else
   *  the step's text blocks. The step is hidden when nothing else is left in it. */
  takeAnswer(): { el: HTMLElement | null; source: string } {
    this.closeText();
    let answer: HTMLElement | null = null;
    let source = "";
    if (this.finalAnswer !== null) {
      source = this.finalAnswer.text;
      answer = h("div", "jb-md");
      answer.innerHTML = this.opts.markdown(source);
      this.finalAnswer.el.remove();
    } else if (this.texts.length > 0) {
      source = this.texts.map((t) => t.source).join("");
      const labelled = splitFinalAnswer(source);
      if (labelled !== null) {
        // "Final Answer:" written without a strategy: the answer without its label; the
        // text before it stays in the step.
        source = labelled.answer;
        answer = h("div", "jb-md");
        answer.innerHTML = this.opts.markdown(source);
        const before = h("div", "jb-text jb-md");
        before.innerHTML = labelled.before ? this.opts.markdown(labelled.before) : "";
        this.texts[0].el.replaceWith(before);
        for (const t of this.texts.slice(1)) t.el.remove();
        if (!labelled.before) before.remove();
      } else {
        answer = h("div", "jb-answer-text");
        for (const t of this.texts) answer.append(t.el);
      }
      this.texts = [];
    } else if (this.parsed.length > 0) {
      // Labelled text without a Final Answer: the text is the answer; its rows go.
      source = this.parsed.map((t) => t.source).join("");
      answer = h("div", "jb-md");
      answer.innerHTML = this.opts.markdown(source);
      this.rows?.remove();
    }
    if (this.rows !== null && this.rows.childElementCount === 0) this.rows.remove();
    this.el.hidden = this.flow.childElementCount === 0;
    return { el: answer, source };
  }

  /** A retry: everything the failed attempt showed stays, struck through as discarded;
   *  the next attempt starts fresh blocks below it. */
  discard(): void {
    if (this.last instanceof TextBlock && !this.last.closed) this.last.close();
    for (const child of Array.from(this.flow.children)) {
      if (!child.classList.contains("jb-retry")) child.classList.add("jb-discarded");
    }
    this.last = null;
    this.thinking = null;
    this.tools = null;
    this.texts = [];
    this.parsed = [];
    this.rows = null;
    this.finalAnswer = null;
  }

  dispose(): void {
    if (this.last instanceof TextBlock) this.last.dispose();
  }
}
