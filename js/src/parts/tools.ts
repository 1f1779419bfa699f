// The tool timeline of one step: a row per call, grouped by execution wave.
import { h, setText } from "../dom";
import { bytes, duration, prettyJson, safeImageUrl, TOOL_ICON } from "../format";
import type { EventOf } from "../protocol";

class ToolRow {
  readonly el: HTMLDivElement;
  private readonly icon: HTMLSpanElement;
  private readonly meta: HTMLSpanElement;
  private readonly args: HTMLPreElement;
  private streamedArgs = "";
  wave: number | null = null;

  constructor(
    readonly callId: string,
    name: string,
  ) {
    this.icon = h("span", "jb-tool-icon", TOOL_ICON.running);
    this.meta = h("span", "jb-tool-meta", "running…");
    this.args = h("pre", "jb-tool-args");
    this.el = h(
      "div",
      { class: "jb-tool jb-tool-running", "data-call-id": callId },
      h("div", "jb-tool-head", this.icon, h("span", "jb-tool-name", name), this.meta),
      this.args,
    );
  }

  argsDelta(delta: string): void {
    this.streamedArgs += delta;
    setText(this.args, this.streamedArgs);
  }

  setArgs(e: EventOf<"tool_call_args">): void {
    setText(this.args, prettyJson(e.arguments));
    if (e.repaired) this.el.classList.add("jb-tool-repaired");
    this.el.title = e.repaired ? "arguments were repaired before the call" : "";
  }

  /** Hold the approval card under the call it asks about. */
  awaitApproval(card: HTMLElement): void {
    this.el.classList.add("jb-tool-awaiting");
    setText(this.meta, "waiting for approval…");
    this.el.append(card);
  }

  approvalDecided(approved: boolean): void {
    this.el.classList.remove("jb-tool-awaiting");
    if (this.el.classList.contains("jb-tool-running")) setText(this.meta, approved ? "running…" : "denied");
  }

  end(e: EventOf<"tool_call_end">): void {
    this.el.classList.remove("jb-tool-running", "jb-tool-awaiting");
    this.el.classList.add(`jb-tool-${e.status}`);
    setText(this.icon, TOOL_ICON[e.status] ?? "•");
    this.icon.title = e.status;
    const dur = duration(e.duration_ms ?? 0);
    setText(this.meta, e.status === "ok" ? dur : `${e.status} · ${dur}`);
    if (this.args.textContent === "" && this.streamedArgs === "") this.args.remove();
    if (e.error) this.el.append(h("pre", "jb-tool-error", e.error));
    const preview = e.result_preview ?? "";
    if (preview) {
      this.el.append(
        h(
          "details",
          "jb-tool-result",
          h("summary", "", `Result · ${bytes(preview.length)}`),
          h("pre", "jb-tool-result-text", preview),
        ),
      );
    }
    if (e.artifact) {
      this.el.append(h("div", "jb-tool-artifact", "full output stored as ", h("code", "", e.artifact)));
    }
    const images = (e.images ?? []).map(safeImageUrl).filter((u): u is string => u !== null);
    if (images.length > 0) {
      const figures = h("div", "jb-tool-images");
      for (const [i, src] of images.entries()) {
        figures.append(h("img", { class: "jb-tool-image", src, alt: `figure ${i + 1} from ${e.name}`, loading: "lazy" }));
      }
      this.el.append(figures);
    }
  }
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
    this.row(e.call_id, e.name);
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

  awaitApproval(callId: string, name: string, card: HTMLElement): void {
    this.row(callId, name).awaitApproval(card);
  }

  approvalDecided(callId: string, approved: boolean): void {
    this.rows.get(callId)?.approvalDecided(approved);
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
