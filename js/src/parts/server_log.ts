// An MCP server's log lines (`server_log` events), folded under one line per step, so
// they are in the view for whoever looks and never crowd the answer. Everything shown
// comes from the server: text nodes only.
import { h, setText } from "../dom";
import type { EventOf } from "../protocol";

const LOUD = new Set(["warning", "error", "critical", "alert", "emergency"]);

export class ServerLogBox {
  readonly el: HTMLDetailsElement;
  private readonly summary: HTMLElement;
  private readonly lines: HTMLDivElement;
  private count = 0;
  private loud = 0;
  private readonly servers: string[] = [];

  constructor() {
    this.summary = h("summary", "jb-server-log-summary");
    this.lines = h("div", "jb-server-log-lines");
    this.el = h("details", "jb-server-log", this.summary, this.lines);
  }

  add(e: EventOf<"server_log">): void {
    this.count += 1;
    const level = LOUD.has(e.level) ? (e.level === "warning" ? "warning" : "error") : "info";
    if (level !== "info") this.loud += 1;
    const logger = e.logger ? ` (${e.logger})` : "";
    this.lines.append(h("div", `jb-log-line jb-log-${level}`, `${e.server}${logger} ${e.level}: ${e.message}`));
    if (!this.servers.includes(e.server)) this.servers.push(e.server);
    const warn = this.loud ? ` · ${this.loud} warning${this.loud > 1 ? "s" : ""} or worse` : "";
    // the servers named: two folds of one turn (a step's, the turn's) never read as a duplicate
    const lines = `${this.count} line${this.count > 1 ? "s" : ""}`;
    setText(this.summary, `MCP server log (${this.servers.join(", ")}) · ${lines}${warn}`);
  }
}
