// Paints events into one view's DOM, incrementally: every event appends to or updates
// the block it belongs to; nothing already shown is rebuilt (except the Markdown of the
// text block still streaming, throttled).
//
// A turn reads answer first: the user's message, the answer (Markdown) and its sources,
// errors and approval cards, then the process — its steps stream open in a native
// <details> while the turn runs, and fold into one summary line when it ends
// (`fold: "never"` keeps them open). Each thing is shown once: the answer is moved out of
// the last step, strategy rows replace the text they were parsed from, and a failed
// turn's stop message is not repeated under its error card.
import { h, setText } from "./dom";
import { cost, duration, plural, STATUS_ICON, STATUS_LABEL } from "./format";
import { renderMarkdown } from "./markdown";
import { ApprovalCard, budgetMarker, contextMarker, type SendFn } from "./parts/approval";
import { ElicitationCard } from "./parts/elicitation";
import { AnswerFigures } from "./parts/answer_figures";
import { ServerLogBox } from "./parts/server_log";
import { compactionMarker, errorCard, reflectionCard, refusalCard, retryMarker, thinkingPhaseCard } from "./parts/cards";
import { contextPackCard, fallbackLine, memoryCard, sourcesList } from "./parts/context";
import { Footer, Header } from "./parts/header";
import { StepView } from "./parts/step";
import type { StrategyContext } from "./parts/strategy";
import type { MarkdownFn } from "./parts/text";
import { TotTree } from "./parts/tot_tree";
import type { AgentEvent, EventOf } from "./protocol";
import type { StoreListener } from "./store";

export type FoldMode = "auto" | "never";

export interface RendererOptions {
  markdown?: MarkdownFn;
  /** Minimum time between two Markdown renders of the streaming block. */
  throttleMs?: number;
  now?: () => number;
  /** Sends the approval buttons' clicks to the kernel; null where no kernel listens. */
  send?: SendFn | null;
  /** "auto": a finished turn's steps fold under its summary line; "never": stay open. */
  fold?: FoldMode;
  /** Draw Tree-of-Thoughts branches as the shared tree in the steps (false: the host
   *  shows the tree elsewhere, so the steps leave them out). */
  totTree?: boolean;
}

/** Statuses whose turn has an answer to put first (the process can fold under it). */
const ANSWERED = new Set(["completed", "refused"]);
const SOURCES_MD = "\n\n**Sources**\n\n";

/** "3 steps · 2 tools · 1 reflection · 12.4 s · $0.0123". */
export function summaryText(e: EventOf<"turn_end">): string {
  const parts = [plural(e.steps ?? 0, "step")];
  if (e.tool_calls) parts.push(plural(e.tool_calls, "tool"));
  if (e.reflections) parts.push(plural(e.reflections, "reflection"));
  parts.push(duration(e.duration_ms ?? 0));
  if (e.cost_usd !== null && e.cost_usd !== undefined) parts.push(cost(e.cost_usd));
  return parts.join(" · ");
}

/** The user's message as the Markdown it was written in (`sales` as code, as the cell
 *  showed it), through the same sanitizing renderer as the answer. */
function userText(message: string, markdown: (src: string) => string): HTMLElement {
  const div = h("div", "jb-user-text jb-md");
  div.innerHTML = markdown(message);
  return div;
}

/** One turn: the user's message, the answer slot, pinned cards, the folding process. */
class TurnView {
  readonly el: HTMLElement;
  private readonly steps = new Map<number, StepView>();
  private readonly answer = h("div", { class: "jb-answer", hidden: "" });
  private readonly sources = h("div", { class: "jb-answer-sources", hidden: "" });
  private readonly pinned = h("div", "jb-pinned");
  private readonly process: HTMLDetailsElement;
  private readonly summary: HTMLElement;
  private readonly flow: HTMLDivElement;
  private readonly approvals = new Map<string, ApprovalCard | ElicitationCard>();
  /** A sampling request's card id -> the tool call it is asked for (its card sits there). */
  private readonly cardRow = new Map<string, string>();
  private readonly logs = new Map<number, ServerLogBox>();
  private readonly strategy: StrategyContext;
  private tree: TotTree | null = null;
  private readonly figures = new AnswerFigures();
  private readonly prompt: string;
  private fatalShown = false;
  private cited = false;
  private toolsDone = 0;
  private current = 0;

  /** ``ending``: the turn's own end, when it is already known (a new view of a finished
   *  turn): its answer shows and its process folds before the steps are painted, so a
   *  repaint in slices never shows the steps first and the answer last. */
  constructor(
    e: EventOf<"turn_start">,
    private readonly opts: Required<RendererOptions>,
    private readonly ending: EventOf<"turn_end"> | null = null,
  ) {
    this.prompt = e.user_message ?? "";
    this.flow = h("div", "jb-turn-flow");
    this.summary = h("summary", "jb-process-summary", h("span", "jb-process-live", "Working…"));
    this.process = h("details", { class: "jb-process", open: "" }, this.summary, this.flow);
    this.strategy = {
      markdown: opts.markdown,
      tot: () => (opts.totTree ? (this.tree ??= new TotTree({ markdown: opts.markdown })) : null),
    };
    this.el = h(
      "div",
      "jb-turn jb-running",
      e.user_message ? h("div", "jb-user", h("span", "jb-user-label", "You"), userText(e.user_message, opts.markdown)) : null,
      this.answer,
      this.sources,
      this.pinned,
      this.process,
    );
    if (ending !== null && this.folds(ending)) {
      this.process.open = false;
      this.summarize(ending);
      // Cited sources come later, as their own list: none in the answer meanwhile.
      if (ending.status === "completed" && ending.text) this.markdownAnswer(ending.text, "jb-final", true);
    }
  }

  private folds(e: EventOf<"turn_end">): boolean {
    return this.opts.fold === "auto" && ANSWERED.has(e.status);
  }

  private step(n: number): StepView {
    let step = this.steps.get(n);
    if (step === undefined) {
      step = new StepView(n, { markdown: this.opts.markdown, throttleMs: this.opts.throttleMs, strategy: this.strategy });
      this.steps.set(n, step);
      this.flow.append(step.el);
    }
    return step;
  }

  /** Cards with step 0 (before any model call) sit at turn level. */
  private card(step: number, el: HTMLElement | null): void {
    if (el === null) return;
    if (step > 0) this.step(step).card(el);
    else this.flow.append(el);
  }

  private live(): void {
    if (this.ending !== null) return; // a finished turn: its summary is already final
    const tools = this.toolsDone ? ` · ${plural(this.toolsDone, "tool")}` : "";
    setText(this.summary, `Working… step ${this.current}${tools}`);
  }

  apply(e: AgentEvent): void {
    switch (e.type) {
      case "step_start":
        this.step(e.step);
        this.current = e.step;
        this.live();
        break;
      case "text_delta":
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
        this.figures.add(e);
        this.toolsDone += 1;
        this.live();
        break;
      case "reflection":
        this.card(e.step, reflectionCard(e, this.opts.markdown));
        break;
      case "strategy_step":
        this.step(e.step).strategy(e);
        break;
      case "error":
        // Errors never fold away: they sit above the process.
        this.fatalShown ||= e.recoverable === false;
        this.pinned.append(errorCard(e));
        break;
      case "retry": {
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
      case "budget_warning":
        // Like an error, it stays in sight when the steps fold.
        this.pinned.append(budgetMarker(e));
        break;
      case "memory_recall":
        this.card(e.step ?? 0, memoryCard(e));
        break;
      case "context_pack":
        this.card(e.step ?? 0, contextPackCard(e));
        break;
      case "provider_fallback":
        this.card(e.step ?? 0, fallbackLine(e));
        break;
      case "citations": {
        const list = sourcesList(e);
        this.cited = true;
        if (list !== null) {
          this.sources.replaceChildren(list);
          this.sources.hidden = false;
        }
        break;
      }
      case "approval_request": {
        // The card sits in the row of the call it asks about (an MCP server's sampling
        // request: in the row of the tool call waiting for that server).
        const card = e.effect === "elicitation" ? new ElicitationCard(e, this.opts.send) : new ApprovalCard(e, this.opts.send);
        this.approvals.set(e.call_id, card);
        const timeline = this.step(e.step ?? 0).timeline();
        const parent = (e.preview as Record<string, unknown> | null | undefined)?.parent_call_id;
        const row = typeof parent === "string" && timeline.has(parent) ? parent : e.call_id;
        if (row !== e.call_id) this.cardRow.set(e.call_id, row);
        timeline.awaitApproval(row, e.name, card.el, row === e.call_id);
        break;
      }
      case "approval_decision":
        this.approvals.get(e.call_id)?.decide(e);
        // A sampling request's denial does not stop its tool call: that row runs on.
        this.steps.get(e.step ?? 0)?.tools?.approvalDecided(this.cardRow.get(e.call_id) ?? e.call_id,
          e.approved || this.cardRow.has(e.call_id));
        break;
      case "tool_progress":
        this.steps.get(e.step ?? 0)?.tools?.progress(e);
        break;
      case "server_log": {
        const step = e.step ?? 0;
        let box = this.logs.get(step);
        if (box === undefined) {
          box = new ServerLogBox();
          this.logs.set(step, box);
          this.card(step, box.el);
        }
        box.add(e);
        break;
      }
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

  private showAnswer(el: HTMLElement, cls: string): void {
    el.classList.add(...cls.split(" "));
    this.answer.replaceChildren(el);
    this.answer.hidden = false;
  }

  private markdownAnswer(src: string, cls: string, cited = this.cited): void {
    let text = src;
    const at = cited ? text.lastIndexOf(SOURCES_MD) : -1;
    if (at >= 0) text = text.slice(0, at); // the Sources list shows them
    if (!text.trim()) return;
    const div = h("div", "jb-text jb-md");
    div.innerHTML = this.opts.markdown(text);
    this.showAnswer(div, cls);
  }

  private end(e: EventOf<"turn_end">): void {
    for (const s of this.steps.values()) s.closeText();
    if (e.status === "refused") {
      this.showAnswer(refusalCard(e), "jb-answer-refusal");
    } else if (e.status === "completed") {
      const last = [...this.steps.values()].pop();
      const taken = last?.takeAnswer() ?? { el: null, source: "" };
      if (taken.el !== null) this.showAnswer(taken.el, "jb-final");
      else if (e.text) this.markdownAnswer(e.text, "jb-final");
      // The figures the prompt asked for or the answer refers to: with the answer, above the fold.
      const figures = this.answer.hidden ? null : this.figures.block(this.prompt, taken.source || e.text || "");
      if (figures !== null) this.answer.append(figures);
    } else if (e.text && !(e.status === "error" && this.fatalShown)) {
      // Why the turn stopped (the error card says it already for a failed turn).
      this.markdownAnswer(e.text, "jb-stopped");
    }
    this.summarize(e);
    if (this.folds(e)) {
      this.process.open = false;
      // Approval cards stay in sight, above the folded steps.
      for (const s of this.steps.values()) for (const card of s.tools?.approvals() ?? []) this.pinned.append(card);
    }
    this.el.classList.remove("jb-running");
    this.el.classList.add("jb-ended", `jb-status-${e.status}`);
  }

  private summarize(e: EventOf<"turn_end">): void {
    const label = e.status === "completed" ? "" : STATUS_LABEL[e.status] ?? e.status;
    this.summary.replaceChildren(
      h(
        "span",
        { class: `jb-turn-end jb-status-${e.status}`, role: e.status === "completed" ? "status" : "alert" },
        h("span", "jb-turn-end-icon", STATUS_ICON[e.status] ?? "■"),
        label ? h("span", "jb-turn-end-label", label) : null,
        h("span", "jb-turn-end-detail", summaryText(e)),
      ),
    );
  }

  dispose(): void {
    for (const s of this.steps.values()) s.dispose();
  }
}

/** A reset with more events than this paints in slices of SLICE_MS, so a long turn
 *  (a new view of it, a reopened output) never blocks the page in one long task. Live
 *  batches paint in such slices too: a fast stream can bring several whole steps in one
 *  batch (each a Markdown render and a highlighted tool call), too much for one task. */
export const SYNC_EVENTS = 500;
const SLICE_MS = 12;

export class AgentRenderer implements StoreListener {
  readonly root: HTMLDivElement;
  private readonly body: HTMLDivElement;
  private header: Header;
  private footer: Footer;
  private turns: TurnView[] = [];
  private readonly opts: Required<RendererOptions>;
  /** Events still to paint (a sliced reset); later appends wait behind them. */
  private backlog: AgentEvent[] = [];
  private next = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(host: HTMLElement, options: RendererOptions = {}) {
    this.opts = {
      markdown: options.markdown ?? renderMarkdown,
      throttleMs: options.throttleMs ?? 50,
      now: options.now ?? Date.now,
      send: options.send ?? null,
      fold: options.fold === "never" ? "never" : "auto",
      totTree: options.totTree ?? true,
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
    this.backlog = [];
    this.next = 0;
    if (events.length > SYNC_EVENTS) {
      this.backlog = events.slice();
      this.pump();
    } else {
      this.append(events);
    }
  }

  append(events: AgentEvent[]): void {
    if (this.next < this.backlog.length) {
      for (const e of events) this.backlog.push(e);
      return;
    }
    // What one slice can paint shows now; the rest follows after the page had a turn.
    this.backlog = events.slice();
    this.next = 0;
    this.pump();
  }

  /** Paint backlog events for one slice, then yield to the page. */
  private pump(): void {
    this.timer = null;
    const until = performance.now() + SLICE_MS;
    while (this.next < this.backlog.length) {
      this.apply(this.backlog[this.next++]);
      if (performance.now() > until) break;
    }
    if (this.next < this.backlog.length) {
      // Still painting: say so (assistive tech, and tests that measure a finished view).
      this.root.setAttribute("aria-busy", "true");
      this.timer = setTimeout(() => this.pump(), 0);
    } else {
      this.root.removeAttribute("aria-busy");
      this.backlog = [];
      this.next = 0;
    }
  }

  private apply(e: AgentEvent): void {
    this.header.update(e);
    this.footer.update(e);
    if (e.type === "turn_start") {
      const turn = new TurnView(e, this.opts, this.endAhead());
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

  /** The end of the turn whose start was just taken from the backlog, if the backlog
   *  already holds it (a new view of a finished turn). */
  private endAhead(): EventOf<"turn_end"> | null {
    for (let i = this.next; i < this.backlog.length; i++) {
      const e = this.backlog[i];
      if (e.type === "turn_end") return e;
      if (e.type === "turn_start") return null;
    }
    return null;
  }

  private disposeParts(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.header.dispose();
    for (const t of this.turns) t.dispose();
  }

  dispose(): void {
    this.disposeParts();
    this.root.remove();
  }
}
