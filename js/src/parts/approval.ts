// The approval card: a tool call that writes or executes waits for the user's decision.
// Everything shown comes from the model (arguments, the diff of a file write): it is
// put in text nodes only, never parsed as HTML.
import { h, setText } from "../dom";
import type { EventOf } from "../protocol";
import { diffView, renderArgs } from "./args";
import type { ElicitationMessage } from "./elicitation";

/** What the view sends to the kernel when a button is clicked. */
export interface ApprovalMessage {
  kind: "approval";
  call_id: string;
  approved: boolean;
}

export type SendFn = (msg: ApprovalMessage | ElicitationMessage | { kind: "ready" }) => void;

const BY_TEXT: Record<string, string> = {
  user: "by you",
  timeout: "no answer before the approval timeout",
  no_frontend: "no way to ask here",
  policy: "by the permission settings",
  error: "the approval prompt failed",
};

function approvalArgs(name: string, args: unknown): HTMLElement {
  const el = renderArgs(name, args);
  el.classList.add("jb-approval-args");
  return el;
}

export class ApprovalCard {
  readonly el: HTMLElement;
  private readonly actions: HTMLDivElement;
  private readonly status: HTMLDivElement;
  private readonly title: HTMLSpanElement;
  private decided = false;

  constructor(
    private readonly e: EventOf<"approval_request">,
    private readonly send: SendFn | null,
  ) {
    const preview = (e.preview ?? {}) as Record<string, unknown>;
    const diff = typeof preview.diff === "string" ? preview.diff : "";
    const path = typeof preview.path === "string" ? preview.path : "";
    const summary = typeof preview.summary === "string" ? preview.summary : "";
    const previewError = typeof preview.error === "string" ? preview.error : "";
    const approve = h("button", { class: "jb-btn jb-approve", type: "button" }, "Approve");
    const deny = h("button", { class: "jb-btn jb-deny", type: "button" }, "Deny");
    approve.addEventListener("click", () => this.click(true));
    deny.addEventListener("click", () => this.click(false));
    this.actions = h("div", "jb-approval-actions", approve, deny);
    const wait = e.timeout_s ? ` It counts as denied after ${Math.round(e.timeout_s)} s.` : "";
    this.status = h("div", "jb-card-note jb-approval-status", `Waiting for your decision.${wait}`);
    if (send === null) {
      this.actions.hidden = true;
      setText(this.status, "Waiting for a decision in the kernel.");
    }
    this.el = h(
      "div",
      { class: "jb-card jb-approval jb-pending", "data-call-id": e.call_id, role: "group", "aria-label": `Approve ${e.name}?` },
      h(
        "div",
        "jb-card-head",
        (this.title = h("span", "jb-card-title", "Approval needed")),
        h("code", "jb-approval-tool", e.name),
        h("span", `jb-chip jb-effect-${(e.effect ?? "execute").replace(/[^a-z]/g, "")}`, e.effect ?? "execute"),
        path ? h("span", "jb-approval-path", `${path}${summary ? ` (${summary})` : ""}`) : null,
      ),
      diff
        ? diffView(diff)
        : approvalArgs(e.name, e.arguments),
      previewError ? h("div", "jb-card-note", previewError) : null,
      this.actions,
      this.status,
    );
  }

  private click(approved: boolean): void {
    if (this.decided || this.send === null) return;
    for (const b of this.actions.querySelectorAll("button")) (b as HTMLButtonElement).disabled = true;
    setText(this.status, approved ? "Approving…" : "Denying…");
    this.send({ kind: "approval", call_id: this.e.call_id, approved });
  }

  decide(d: EventOf<"approval_decision">): void {
    this.decided = true;
    this.actions.remove();
    this.el.classList.remove("jb-pending");
    this.el.classList.add(d.approved ? "jb-approved" : "jb-denied");
    setText(this.title, d.approved ? "Approved" : "Denied");
    const by = BY_TEXT[d.by ?? "user"] ?? d.by ?? "";
    const channel = d.channel && (d.by ?? "user") === "user" ? ` in the ${d.channel}` : "";
    setText(this.status, `${d.approved ? "✓ Approved" : "✗ Denied"}${channel} (${by})`);
  }
}

/** A budget cap mostly used (80 %): its message, e.g. "80% of this turn's cost cap used: $0.08 of $0.10". */
export function budgetMarker(e: EventOf<"budget_warning">): HTMLElement {
  const text = e.message || `${e.spent} of ${e.cap} used`;
  return h("div", { class: "jb-budget-warning", role: "status" }, h("span", "", `⚠ Budget: ${text}`));
}

export function contextMarker(e: EventOf<"context_warning">): HTMLElement {
  const share = e.window ? ` (${Math.round((100 * e.tokens) / e.window)}% of ${e.window.toLocaleString("en-US")})` : "";
  const text =
    e.level === "ok"
      ? `Context back under the warning level: ${e.tokens.toLocaleString("en-US")} tokens${share}`
      : `Context ${e.level}: ${e.tokens.toLocaleString("en-US")} tokens${share}`;
  return h("div", { class: `jb-context jb-context-${e.level}` }, h("span", "", text));
}
