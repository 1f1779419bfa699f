// The tool timeline of one step: a row per call, grouped by execution wave.
import { h, setText } from "../dom";
import { duration, TOOL_ICON } from "../format";
import type { EventOf } from "../protocol";
import { partialJsonString, renderArgs } from "./args";
import { resultView } from "./result";

class ToolRow {
  readonly el: HTMLDivElement;
  private readonly icon: HTMLSpanElement;
  private readonly meta: HTMLSpanElement;
  private args: HTMLElement;
  private streamedArgs = "";
  private hasArgs = false;
  private approvalCard: HTMLElement | null = null;
  private progressEl: HTMLDivElement | null = null;
  wave: number | null = null;

  constructor(
    readonly callId: string,
    private readonly name: string,
  ) {
    this.icon = h("span", "jb-tool-icon", TOOL_ICON.running);
    this.meta = h("span", "jb-tool-meta", "running…");
    this.args = h("pre", "jb-tool-args jb-args-streaming");
    this.el = h(
      "div",
      { class: "jb-tool jb-tool-running", "data-call-id": callId, "data-tool": name },
      h("div", "jb-tool-head", this.icon, h("span", "jb-tool-name", name), this.meta),
      this.args,
    );
  }

  /** A call the provider ran on its own servers (a server tool): marked, never run here. */
  markServer(): void {
    if (this.el.classList.contains("jb-tool-server")) return;
    this.el.classList.add("jb-tool-server");
    const badge = h("span", "jb-tool-by-server", "server");
    badge.title = "run by the provider's server, not in this kernel";
    this.meta.before(badge);
  }

  /** Streamed argument JSON: code is shown decoded as it arrives (no JSON, no escapes). */
  argsDelta(delta: string): void {
    if (this.hasArgs) return;
    this.streamedArgs += delta;
    const code = /python|exec|code/i.test(this.name) ? partialJsonString(this.streamedArgs, "code") : null;
    setText(this.args, code ?? this.streamedArgs);
  }

  setArgs(e: EventOf<"tool_call_args">): void {
    const shown = renderArgs(this.name, e.arguments);
    this.args.replaceWith(shown);
    this.args = shown;
    this.hasArgs = true;
    if (e.repaired) this.el.classList.add("jb-tool-repaired");
    this.el.title = e.repaired ? "arguments were repaired before the call" : "";
  }

  /** Hold the approval card under the call it asks about (it shows the arguments, so the
   *  row's own copy is hidden). */
  awaitApproval(card: HTMLElement, own = true): void {
    this.el.classList.add("jb-tool-awaiting");
    if (own) this.el.classList.add("jb-tool-has-approval"); // (another's card: a sampling request)
    setText(this.meta, "waiting for approval…");
    this.approvalCard = card;
    this.el.append(card);
  }

  /** The approval card, for the turn to keep in sight when the steps fold. */
  get approval(): HTMLElement | null {
    return this.approvalCard;
  }

  approvalDecided(approved: boolean): void {
    this.el.classList.remove("jb-tool-awaiting");
    if (this.el.classList.contains("jb-tool-running")) setText(this.meta, approved ? "running…" : "denied");
  }

  /** The latest progress notification of a running call: "3/5 · message" and a thin bar
   *  (no bar when the total is unknown). Server text goes into text nodes only. */
  progress(e: EventOf<"tool_progress">): void {
    if (!this.el.classList.contains("jb-tool-running")) return; // a late notification
    if (this.progressEl === null) {
      this.progressEl = h("div", "jb-tool-progress", h("div", "jb-progress-bar", h("div", "jb-progress-fill")),
        h("span", "jb-progress-text"));
      this.el.querySelector(".jb-tool-head")?.after(this.progressEl);
    }
    const [bar, text] = [this.progressEl.firstElementChild as HTMLElement, this.progressEl.lastElementChild as HTMLElement];
    setText(text, progressText(e));
    const total = e.total ?? 0;
    bar.hidden = !(total > 0);
    if (total > 0) {
      const share = Math.max(0, Math.min(1, e.progress / total));
      (bar.firstElementChild as HTMLElement).style.width = `${Math.round(share * 100)}%`;
    }
  }

  end(e: EventOf<"tool_call_end">): void {
    this.progressEl?.remove(); // the result says how it ended
    this.progressEl = null;
    this.el.classList.remove("jb-tool-running", "jb-tool-awaiting");
    this.el.classList.add(`jb-tool-${e.status}`);
    setText(this.icon, TOOL_ICON[e.status] ?? "•");
    this.icon.title = e.status;
    const dur = duration(e.duration_ms ?? 0);
    // A call the turn's end gave up (interrupted) has no measured duration: not "0 ms".
    setText(this.meta, e.status === "ok" ? dur : e.duration_ms ? `${e.status} · ${dur}` : e.status);
    if (!this.hasArgs && this.streamedArgs === "") this.args.remove();
    this.el.append(...resultView(e));
  }
}

/** "3/5 · message", "40% · message" when the total is 100, "3 · message" without a total. */
export function progressText(e: EventOf<"tool_progress">): string {
  const n = (x: number): string => (Number.isInteger(x) ? String(x) : x.toFixed(1));
  const total = e.total ?? 0;
  const count = total === 100 ? `${n(e.progress)}%` : total > 0 ? `${n(e.progress)}/${n(total)}` : n(e.progress);
  return e.message ? `${count} · ${e.message}` : count;
}

interface WaveGroup {
  el: HTMLDivElement;
  label: HTMLDivElement;
  rows: HTMLDivElement;
  count: number;
}

export class ToolTimeline {
  readonly el: HTMLDivElement;
  private readonly unassigned: HTMLDivElement;
  private readonly waves = new Map<number, WaveGroup>();
  private readonly rows = new Map<string, ToolRow>();

  constructor() {
    this.unassigned = h("div", "jb-wave-rows jb-wave-pending");
    this.el = h("div", "jb-tools", this.unassigned);
  }

  start(e: EventOf<"tool_call_start">): void {
    const row = this.row(e.call_id, e.name);
    if (e.by_server) row.markServer();
  }

  argsDelta(e: EventOf<"tool_call_args_delta">): void {
    this.rows.get(e.call_id)?.argsDelta(e.delta);
  }

  args(e: EventOf<"tool_call_args">): void {
    const row = this.row(e.call_id, e.name);
    row.setArgs(e);
    this.place(row, e.wave ?? 0);
  }

  end(e: EventOf<"tool_call_end">): void {
    const row = this.row(e.call_id, e.name);
    if (row.wave === null) this.place(row, e.wave ?? 0);
    row.end(e);
  }

  progress(e: EventOf<"tool_progress">): void {
    this.rows.get(e.call_id)?.progress(e);
  }

  /** Whether a row of this call is here (a sampling card goes under its tool's row). */
  has(callId: string): boolean {
    return this.rows.has(callId);
  }

  /** ``own`` false: the card asks about something the call waits for (an MCP server's
   *  sampling request), not the call itself, whose arguments stay shown. */
  awaitApproval(callId: string, name: string, card: HTMLElement, own = true): void {
    this.row(callId, name).awaitApproval(card, own);
  }

  approvalDecided(callId: string, approved: boolean): void {
    this.rows.get(callId)?.approvalDecided(approved);
  }

  /** The approval cards of this step's calls, in row order. */
  approvals(): HTMLElement[] {
    return [...this.rows.values()].map((r) => r.approval).filter((c): c is HTMLElement => c !== null);
  }

  private row(callId: string, name: string): ToolRow {
    let row = this.rows.get(callId);
    if (row === undefined) {
      row = new ToolRow(callId, name);
      this.rows.set(callId, row);
      this.unassigned.append(row.el);
    }
    return row;
  }

  /** Move a row into its wave's group, groups ordered by wave number. */
  private place(row: ToolRow, wave: number): void {
    if (row.wave === wave) return;
    if (row.wave !== null) {
      const old = this.waves.get(row.wave);
      if (old) old.count -= 1;
    }
    const group = this.wave(wave);
    group.rows.append(row.el);
    group.count += 1;
    row.wave = wave;
    for (const g of this.waves.values()) this.label(g);
  }

  private wave(n: number): WaveGroup {
    let group = this.waves.get(n);
    if (group !== undefined) return group;
    const label = h("div", "jb-wave-label");
    const rows = h("div", "jb-wave-rows");
    group = { el: h("div", { class: "jb-wave", "data-wave": String(n) }, label, rows), label, rows, count: 0 };
    this.waves.set(n, group);
    const after = [...this.waves.entries()].filter(([k]) => k > n).sort(([a], [b]) => a - b)[0];
    this.el.insertBefore(group.el, after ? after[1].el : this.unassigned);
    return group;
  }

  private label(g: WaveGroup): void {
    const n = Number(g.el.dataset.wave);
    const parallel = g.count > 1 ? ` · ${g.count} in parallel` : "";
    setText(g.label, this.waves.size > 1 || g.count > 1 ? `wave ${n}${parallel}` : "");
    g.label.hidden = g.label.textContent === "";
  }
}
