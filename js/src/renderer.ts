// Paints events into one view's DOM, incrementally: every event appends to or updates
// the block it belongs to; nothing already shown is rebuilt (except the Markdown of the
// answer block still streaming, throttled).
import { h } from "./dom";
import { renderMarkdown } from "./markdown";
import { ApprovalCard, contextMarker, type SendFn } from "./parts/approval";
import {
  compactionMarker,
  errorCard,
  reflectionCard,
  refusalCard,
  retryMarker,
  strategyRow,
  thinkingPhaseCard,
  turnEndBanner,
} from "./parts/cards";
import { Footer, Header } from "./parts/header";
import { type MarkdownFn, TextBlock } from "./parts/text";
import { ThinkingBlock } from "./parts/thinking";
import { ToolTimeline } from "./parts/tools";
import type { AgentEvent, EventOf } from "./protocol";
import type { StoreListener } from "./store";

export interface RendererOptions {
  markdown?: MarkdownFn;
  /** Minimum time between two Markdown renders of the streaming block. */
  throttleMs?: number;
  now?: () => number;
  /** Sends the approval buttons' clicks to the kernel; null where no kernel listens. */
  send?: SendFn | null;
}

type FlowBlock = TextBlock | ThinkingBlock | HTMLElement;

/** One step's section: blocks in arrival order, one tool timeline. */
class StepView {
  readonly el: HTMLElement;
  private readonly flow: HTMLDivElement;
  private last: FlowBlock | null = null;
  private thinking: ThinkingBlock | null = null;
  tools: ToolTimeline | null = null;
  private strategyList: HTMLDivElement | null = null;

  constructor(
    readonly step: number,
    private readonly opts: Required<RendererOptions>,
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
  }

  text(delta: string): void {
    if (!(this.last instanceof TextBlock) || this.last.closed) {
      this.add(new TextBlock(this.opts.markdown, this.opts.throttleMs));
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

  strategy(e: EventOf<"strategy_step">): void {
    if (this.strategyList === null || this.last !== this.strategyList) {
      this.strategyList = h("div", "jb-strategy");
      this.add(this.strategyList);
    }
    this.strategyList.append(strategyRow(e));
  }

  card(el: HTMLElement): void {
    this.add(el);
  }

  /** A retry: everything the failed attempt showed stays, struck through as discarded;
   *  the next attempt starts fresh blocks below it. */
  discard(): void {
    this.closeText();
    for (const child of Array.from(this.flow.children)) {
      if (!child.classList.contains("jb-retry")) child.classList.add("jb-discarded");
    }
    this.last = null;
    this.thinking = null;
    this.tools = null;
    this.strategyList = null;
  }

  hasText(): boolean {
    return this.flow.querySelector(".jb-text:not(.jb-discarded)") !== null;
  }

  dispose(): void {
    if (this.last instanceof TextBlock) this.last.dispose();
  }
}

/** One turn: the user's message, its steps and turn-level cards, the end banner. */
class TurnView {
  readonly el: HTMLElement;
  private readonly steps = new Map<number, StepView>();
  private readonly flow: HTMLDivElement;
  private readonly approvals = new Map<string, ApprovalCard>();
  private sawText = false;

  constructor(
    e: EventOf<"turn_start">,
    private readonly opts: Required<RendererOptions>,
  ) {
    this.flow = h("div", "jb-turn-flow");
    this.el = h(
      "div",
      "jb-turn",
      e.user_message ? h("div", "jb-user", h("span", "jb-user-label", "You"), h("div", "jb-user-text", e.user_message)) : null,
      this.flow,
    );
  }

  private step(n: number): StepView {
    let step = this.steps.get(n);
    if (step === undefined) {
      step = new StepView(n, this.opts);
      this.steps.set(n, step);
      this.flow.append(step.el);
    }
    return step;
  }

  /** Cards with step 0 (before any model call) sit at turn level. */
  private card(step: number, el: HTMLElement): void {
    if (step > 0) this.step(step).card(el);
    else this.flow.append(el);
  }

  apply(e: AgentEvent): void {
    switch (e.type) {
      case "step_start":
        this.step(e.step);
        break;
      case "text_delta":
        this.sawText = true;
        this.step(e.step).text(e.text);
        break;
      case "thinking_delta":
        this.step(e.step).think(e.text);
        break;
      case "thinking_end":
        this.step(e.step).thinkingEnd();
        break;
      case "tool_call_start":
        this.step(e.step).timeline().start(e);
        break;
      case "tool_call_args_delta":
        this.step(e.step).timeline().argsDelta(e);
        break;
      case "tool_call_args":
        this.step(e.step).timeline().args(e);
        break;
      case "tool_call_end":
        this.step(e.step).timeline().end(e);
        break;
      case "reflection":
        this.card(e.step, reflectionCard(e, this.opts.markdown));
        break;
      case "strategy_step":
        this.step(e.step).strategy(e);
        break;
      case "error":
        this.card(e.step ?? 0, errorCard(e));
        break;
      case "retry": {
        this.sawText = false; // the failed attempt's text is discarded
        const step = this.step(e.step);
        step.discard();
        step.card(retryMarker(e));
        break;
      }
      case "compaction":
        this.card(e.step ?? 0, compactionMarker(e));
        break;
      case "thinking_phase":
        this.card(e.step ?? 0, thinkingPhaseCard(e));
        break;
      case "context_warning":
        this.card(e.step ?? 0, contextMarker(e));
        break;
      case "approval_request": {
        // The card sits in the row of the call it asks about.
        const card = new ApprovalCard(e, this.opts.send);
        this.approvals.set(e.call_id, card);
        this.step(e.step ?? 0).timeline().awaitApproval(e.call_id, e.name, card.el);
        break;
      }
      case "approval_decision":
        this.approvals.get(e.call_id)?.decide(e);
        this.steps.get(e.step ?? 0)?.tools?.approvalDecided(e.call_id, e.approved);
        break;
      case "step_end":
        this.steps.get(e.step)?.closeText();
        break;
      case "turn_end":
        this.end(e);
        break;
      default:
        break;
    }
  }

  private end(e: EventOf<"turn_end">): void {
    for (const s of this.steps.values()) s.closeText();
    if (e.status === "refused") {
      this.flow.append(refusalCard(e));
    } else if (!this.sawText && e.text) {
      // A non-streaming provider: the answer only arrives with the turn's end.
      const answer = h("div", "jb-text jb-md jb-final");
      answer.innerHTML = this.opts.markdown(e.text);
      this.flow.append(answer);
    }
    this.el.append(turnEndBanner(e));
    this.el.classList.add("jb-ended", `jb-status-${e.status}`);
  }

  dispose(): void {
    for (const s of this.steps.values()) s.dispose();
  }
}

export class AgentRenderer implements StoreListener {
  readonly root: HTMLDivElement;
  private readonly body: HTMLDivElement;
  private header: Header;
  private footer: Footer;
  private turns: TurnView[] = [];
  private readonly opts: Required<RendererOptions>;

  constructor(host: HTMLElement, options: RendererOptions = {}) {
    this.opts = {
      markdown: options.markdown ?? renderMarkdown,
      throttleMs: options.throttleMs ?? 50,
      now: options.now ?? Date.now,
      send: options.send ?? null,
    };
    this.header = new Header(this.opts.now);
    this.footer = new Footer();
    this.body = h("div", "jb-body");
    this.root = h("div", "jb-agent-view", this.header.el, this.body, this.footer.el);
    host.append(this.root);
  }

  reset(events: AgentEvent[]): void {
    this.disposeParts();
    this.header = new Header(this.opts.now);
    this.footer = new Footer();
    this.body.replaceChildren();
    this.root.replaceChildren(this.header.el, this.body, this.footer.el);
    this.turns = [];
    this.append(events);
  }

  append(events: AgentEvent[]): void {
    for (const e of events) this.apply(e);
  }

  private apply(e: AgentEvent): void {
    this.header.update(e);
    this.footer.update(e);
    if (e.type === "turn_start") {
      const turn = new TurnView(e, this.opts);
      this.turns.push(turn);
      this.body.append(turn.el);
      return;
    }
    let turn = this.turns[this.turns.length - 1];
    if (turn === undefined) {
      // A stream that starts mid-turn (it should not): give it an anonymous turn.
      turn = new TurnView({ type: "turn_start", user_message: "" }, this.opts);
      this.turns.push(turn);
      this.body.append(turn.el);
    }
    turn.apply(e);
  }

  private disposeParts(): void {
    this.header.dispose();
    for (const t of this.turns) t.dispose();
  }

  dispose(): void {
    this.disposeParts();
    this.root.remove();
  }
}
