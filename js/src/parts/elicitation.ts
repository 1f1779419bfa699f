// An MCP server asks the user for something during a tool call (elicitation): a form of
// the schema's fields with Accept / Decline / Cancel, or a link to open (naming the server,
// as the specification requires). Everything shown comes from the server: text nodes only.
import { h, setText } from "../dom";
import type { EventOf } from "../protocol";

/** What the view sends to the kernel when the card is answered. */
export interface ElicitationMessage {
  kind: "elicitation";
  call_id: string;
  action: "accept" | "decline" | "cancel";
  content?: Record<string, unknown>;
}

type Send = (msg: ElicitationMessage) => void;
type Spec = Record<string, unknown>;
type Choice = { value: string; label: string };

const DONE: Record<string, string> = { accept: "✓ Accepted", decline: "✗ Declined", cancel: "⊘ Cancelled" };

function choices(spec: Spec): Choice[] {
  const items = (spec.items ?? {}) as Spec;
  const titled = (spec.oneOf ?? spec.anyOf ?? items.oneOf ?? items.anyOf) as Spec[] | undefined;
  if (Array.isArray(titled)) return titled.map((c) => ({ value: String(c.const), label: String(c.title ?? c.const) }));
  const values = (spec.enum ?? items.enum) as unknown[] | undefined;
  const names = spec.enumNames as unknown[] | undefined;
  if (!Array.isArray(values)) return [];
  return values.map((v, i) => ({ value: String(v), label: String(names?.[i] ?? v) }));
}

/** One field: its input and how to read its value back. */
function field(name: string, spec: Spec, required: boolean): { el: HTMLElement; read: () => unknown } {
  const title = String(spec.title ?? name) + (required ? " *" : "");
  const help = typeof spec.description === "string" ? h("span", "jb-elicit-help", spec.description) : null;
  const options = choices(spec);
  const fallback = spec.default;
  if (spec.type === "boolean") {
    const box = h("input", { type: "checkbox", name });
    box.checked = fallback === true;
    return { el: h("label", "jb-elicit-field jb-elicit-check", box, ` ${title}`, help), read: () => box.checked };
  }
  if (spec.type === "array" && options.length) {
    const picked = new Set(Array.isArray(fallback) ? fallback.map(String) : []);
    const boxes = options.map((o) => {
      const box = h("input", { type: "checkbox", name, value: o.value });
      box.checked = picked.has(o.value);
      return { box, el: h("label", "jb-elicit-option", box, ` ${o.label}`) };
    });
    return {
      el: h("fieldset", "jb-elicit-field", h("legend", "", title), help, ...boxes.map((b) => b.el)),
      read: () => boxes.filter((b) => b.box.checked).map((b) => b.box.value),
    };
  }
  if (options.length) {
    const select = h("select", { name });
    if (!required) select.append(h("option", { value: "" }, "—"));
    for (const o of options) select.append(h("option", { value: o.value }, o.label));
    if (fallback !== undefined) select.value = String(fallback);
    return { el: h("label", "jb-elicit-field", h("span", "", title), select, help), read: () => select.value };
  }
  const numeric = spec.type === "number" || spec.type === "integer";
  const formats: Record<string, string> = { email: "email", uri: "url", date: "date", "date-time": "datetime-local" };
  const input = h("input", {
    name,
    type: numeric ? "number" : formats[String(spec.format)] ?? "text",
    ...(spec.type === "integer" ? { step: "1" } : numeric ? { step: "any" } : {}),
  });
  if (fallback !== undefined) input.value = String(fallback);
  if (required) input.required = true;
  return {
    el: h("label", "jb-elicit-field", h("span", "", title), input, help),
    read: () => (input.value === "" ? undefined : numeric ? Number(input.value) : input.value),
  };
}

export class ElicitationCard {
  readonly el: HTMLElement;
  private readonly actions: HTMLDivElement;
  private readonly status: HTMLDivElement;
  private readonly title: HTMLSpanElement;
  private decided = false;

  constructor(
    private readonly e: EventOf<"approval_request">,
    private readonly send: Send | null,
  ) {
    const preview = (e.preview ?? {}) as Spec;
    const form = (preview.elicitation ?? {}) as Spec;
    const server = String(form.server ?? "");
    const isUrl = form.mode === "url";
    const required = new Set(Array.isArray(form.required) ? form.required.map(String) : []);
    const fields = Object.entries((form.fields ?? {}) as Record<string, Spec>).map(([name, spec]) =>
      ({ name, ...field(name, spec, required.has(name)) }));
    const button = (label: string, cls: string, action: ElicitationMessage["action"]) => {
      const b = h("button", { class: `jb-btn ${cls}`, type: "button" }, label);
      b.addEventListener("click", () => this.answer(action, fields));
      return b;
    };
    this.actions = h(
      "div",
      "jb-approval-actions",
      button(isUrl ? "Done" : "Accept", "jb-approve", "accept"),
      button("Decline", "jb-deny", "decline"),
      button("Cancel", "jb-cancel", "cancel"),
    );
    const wait = e.timeout_s ? ` It counts as cancelled after ${Math.round(e.timeout_s)} s.` : "";
    this.status = h("div", "jb-card-note jb-approval-status", `Waiting for your answer.${wait}`);
    if (send === null) {
      this.actions.hidden = true;
      setText(this.status, "Waiting for an answer in the kernel.");
    }
    let body: HTMLElement;
    if (isUrl) {
      const url = String(form.url ?? "");
      const safe = /^https?:\/\//i.test(url);
      const link = safe
        ? h("a", { href: url, target: "_blank", rel: "noopener noreferrer" }, url)
        : h("code", "", url);
      body = h("div", "jb-elicit-url",
        h("div", "jb-card-note", `The MCP server '${server}' asks you to open this link (it is the server's, not jupyter-brain's):`),
        link);
    } else {
      body = h("form", "jb-elicit-form", ...fields.map((f) => f.el));
      body.addEventListener("submit", (ev) => ev.preventDefault());
    }
    this.el = h(
      "div",
      { class: "jb-card jb-approval jb-elicitation jb-pending", "data-call-id": e.call_id, role: "group",
        "aria-label": `${server} asks` },
      h("div", "jb-card-head",
        (this.title = h("span", "jb-card-title", isUrl ? "Link from an MCP server" : "An MCP server asks")),
        h("code", "jb-approval-tool", server)),
      h("div", "jb-elicit-message", String(form.message ?? "")),
      body,
      this.actions,
      this.status,
    );
  }

  private answer(action: ElicitationMessage["action"], fields: { name: string; read: () => unknown }[]): void {
    if (this.decided || this.send === null) return;
    const msg: ElicitationMessage = { kind: "elicitation", call_id: this.e.call_id, action };
    if (action === "accept" && fields.length) {
      const content: Record<string, unknown> = {};
      for (const f of fields) {
        const v = f.read();
        if (v !== undefined) content[f.name] = v;
      }
      msg.content = content;
    }
    for (const b of this.actions.querySelectorAll("button")) (b as HTMLButtonElement).disabled = true;
    setText(this.status, "Sending…");
    this.send(msg);
  }

  decide(d: EventOf<"approval_decision">): void {
    this.decided = true;
    this.actions.remove();
    this.el.classList.remove("jb-pending");
    const action = (d as { action?: string }).action || (d.approved ? "accept" : "decline");
    this.el.classList.add(action === "accept" ? "jb-approved" : "jb-denied");
    setText(this.title, DONE[action] ?? action);
    const by = d.by === "timeout" ? " (no answer before the timeout)" : "";
    setText(this.status, `${DONE[action] ?? action}${by}`);
  }
}
