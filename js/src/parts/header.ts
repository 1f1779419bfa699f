// Header (model, levels, session, step counter, elapsed time, status) and footer
// (token usage and cost) of the latest turn.
import { h, setText } from "../dom";
import { cost, duration, ESTIMATED_MARK, STATUS_ICON, STATUS_LABEL, tokens } from "../format";
import type { AgentEvent, EventOf } from "../protocol";

export class Header {
  readonly el: HTMLDivElement;
  private readonly turn = h("span", "jb-h-turn");
  private readonly model = h("span", "jb-h-model");
  private readonly replayed = h("span", { class: "jb-chip jb-h-replayed", title: "answered from the notebook's recording: no model call, no cost" }, "replayed");
  private readonly think = h("span", "jb-chip jb-h-think");
  private readonly strategy = h("span", "jb-chip jb-h-strategy");
  private readonly session = h("span", "jb-h-session");
  private readonly step = h("span", "jb-h-step");
  private readonly elapsed = h("span", "jb-h-elapsed");
  private readonly badge = h("span", "jb-badge jb-status-idle", "idle");
  private maxSteps = 0;
  private startTs: number | null = null;
  private lastTs: number | null = null;
  private lastLocal = 0;
  private running = false;
  private ticker: ReturnType<typeof setInterval> | null = null;

  constructor(private readonly now: () => number = Date.now) {
    this.el = h(
      "div",
      "jb-header",
      this.turn,
      this.model,
      this.replayed,
      this.think,
      this.strategy,
      this.session,
      h("span", "jb-spacer"),
      this.step,
      this.elapsed,
      this.badge,
    );
    this.think.hidden = this.strategy.hidden = this.replayed.hidden = true;
  }

  update(e: AgentEvent): void {
    if (e.ts !== undefined) {
      this.lastTs = this.lastTs === null ? e.ts : Math.max(this.lastTs, e.ts);
      this.lastLocal = this.now();
    }
    switch (e.type) {
      case "turn_start":
        this.start(e);
        break;
      case "step_start":
        setText(this.step, this.maxSteps ? `step ${e.step} / ${this.maxSteps}` : `step ${e.step}`);
        break;
      case "provider_fallback": // a chain moved on: name the member that answers from now on
        setText(this.model, providerLabel(e.next));
        this.model.title = `${e.failed} failed (${e.kind}); ${e.next} answered`;
        if (e.failed === "replayed" || e.failed.startsWith("replayed:")) {
          // A replay that stopped matching: say so where the eye lands, and why on hover.
          setText(this.replayed, `live from step ${e.step || 1}`);
          this.replayed.title = e.message || e.kind || "the recording no longer matches";
          this.replayed.hidden = false;
        }
        break;
      case "turn_end":
        this.running = false;
        this.stopTicker();
        this.setStatus(e.status);
        setText(this.elapsed, duration(e.duration_ms ?? 0));
        return;
    }
    if (this.running) this.tick();
  }

  private start(e: EventOf<"turn_start">): void {
    // A replayed turn names the model that made the recording, and says it was replayed.
    const replayed = e.provider === "replayed";
    setText(this.turn, e.turn_number ? `Turn ${e.turn_number}` : "");
    setText(this.model, (replayed ? e.model : [e.provider, e.model].filter(Boolean).join(" / ")) || "agent");
    this.model.title = "";
    setText(this.replayed, "replayed");
    this.replayed.title = "answered from the notebook's recording: no model call, no cost";
    this.replayed.hidden = !replayed;
    const think = e.think_level ?? "off";
    setText(this.think, `think ${think}`);
    this.think.hidden = think === "off" || think === "";
    setText(this.strategy, e.strategy ?? "");
    this.strategy.hidden = !e.strategy;
    setText(this.session, e.session_id ? `session ${e.session_id}` : "");
    this.maxSteps = e.max_steps ?? 0;
    setText(this.step, "");
    this.startTs = e.ts ?? null;
    this.running = true;
    this.setStatus("running");
    if (this.ticker === null) this.ticker = setInterval(() => this.tick(), 1000);
  }

  /** Elapsed = kernel time between events + local time since the last one (no clock skew). */
  private tick(): void {
    if (!this.running || this.startTs === null || this.lastTs === null) return;
    const ms = (this.lastTs - this.startTs) * 1000 + (this.now() - this.lastLocal);
    setText(this.elapsed, duration(Math.max(0, ms)));
  }

  private setStatus(status: string): void {
    this.badge.className = `jb-badge jb-status-${status}`;
    setText(this.badge, `${STATUS_ICON[status] ?? ""} ${STATUS_LABEL[status] ?? status}`.trim());
  }

  private stopTicker(): void {
    if (this.ticker !== null) clearInterval(this.ticker);
    this.ticker = null;
  }

  dispose(): void {
    this.stopTicker();
  }
}

type Recorded = NonNullable<EventOf<"turn_end">["recorded"]>;

/** A replayed turn spent nothing now: its footer shows what it cost when recorded, after
 *  this mark (as the Markdown transcript, widgets/_lines.py RECORDED_MARK). */
export const RECORDED_MARK = "replayed · recorded:";

export class Footer {
  readonly el: HTMLDivElement;
  private usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, cost: null as number | null, estimated: false };
  private recorded: Recorded | null = null;

  constructor() {
    this.el = h("div", "jb-footer");
    this.el.hidden = true;
  }

  update(e: AgentEvent): void {
    const u = this.usage;
    if (e.type === "turn_start") {
      this.usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, cost: null, estimated: false };
      this.recorded = null;
    } else if (e.type === "usage") {
      u.input += e.input_tokens ?? 0;
      u.output += e.output_tokens ?? 0;
      u.cacheRead += e.cache_read_tokens ?? 0;
      u.cacheWrite += e.cache_creation_tokens ?? 0;
      if (e.cost_usd !== null && e.cost_usd !== undefined) u.cost = (u.cost ?? 0) + e.cost_usd;
      u.estimated = u.estimated || Boolean(e.usage_estimated);
    } else if (e.type === "turn_end") {
      // The turn's totals are authoritative (they include reflection calls).
      u.input = e.input_tokens || u.input;
      u.output = e.output_tokens || u.output;
      u.cacheRead = e.cache_read_tokens || u.cacheRead;
      u.cacheWrite = e.cache_creation_tokens || u.cacheWrite;
      if (e.cost_usd !== null && e.cost_usd !== undefined) u.cost = e.cost_usd;
      u.estimated = u.estimated || Boolean(e.usage_estimated);
      this.recorded = e.recorded ?? null;
    } else {
      return;
    }
    this.paint();
  }

  private paint(): void {
    const u = this.usage;
    const r = this.recorded;
    const item = (label: string, value: string) =>
      h("span", "jb-f-item", h("span", "jb-f-label", label), h("span", "jb-f-value", value));
    const figures = (x: { input: number; output: number; cacheRead: number; cacheWrite: number }, costText: string) => [
      item("in", tokens(x.input)),
      item("out", tokens(x.output)),
      item("cache read", tokens(x.cacheRead)),
      item("cache write", tokens(x.cacheWrite)),
      item("cost", costText),
    ];
    const spent = u.input || u.output || u.cacheRead || u.cacheWrite || u.cost;
    const rec = r === null ? null : {
      input: r.input_tokens ?? 0, output: r.output_tokens ?? 0, cacheRead: r.cache_read_tokens ?? 0,
      cacheWrite: r.cache_creation_tokens ?? 0, cost: r.cost_usd ?? null,
    };
    const mark = (text: string) => h("span", {
      class: "jb-f-item jb-f-recorded",
      title: "answered from the notebook's recording: nothing was spent now; these are the figures of the run that recorded it",
    }, text);
    let items: HTMLElement[];
    const recCost = rec === null || rec.cost === null ? "price unknown" : cost(rec.cost);
    if (rec !== null && !spent) {
      items = [mark(RECORDED_MARK), ...figures(rec, recCost)]; // a replayed turn: what it cost when recorded
    } else {
      items = figures(u, cost(u.cost));
      if (rec !== null) items.push(mark("replayed part, recorded:"), ...figures(rec, recCost));
    }
    if (u.estimated) {
      items.push(h("span", { class: "jb-f-item jb-f-estimated", title: "the server reported no usage: counted locally" }, ESTIMATED_MARK));
    }
    this.el.replaceChildren(...items);
    this.el.hidden = false;
  }
}

/** A chain member's `name:model` label (models may hold colons: `ollama:qwen3:4b`) as the
 * header shows a provider and model: `ollama / qwen3:4b` (as providers/chain.split_provider_label). */
export function providerLabel(label: string): string {
  const at = label.indexOf(":");
  return at < 0 ? label : `${label.slice(0, at)} / ${label.slice(at + 1)}`;
}
