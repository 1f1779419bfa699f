/**
 * "Show what the agent sent": the last request of the session, part by part (system
 * prompt, fresh layers, history, tools), each a collapsible section with its token count.
 * Everything is shown as text (``textContent``): the request holds model output.
 */
import type { IInspectReply, IRequestPart, ISnapshot } from './protocol';

export const PART_TITLES: Record<string, string> = {
  system: 'System prompt',
  workspace: 'Workspace',
  memory: 'Memories recalled',
  context_pack: 'Context pack',
  runtime: 'Runtime metadata',
  skill: 'Skill',
  history: 'History'
};

export function partTitle(kind: string): string {
  return PART_TITLES[kind] ?? kind;
}

export function totalTokens(snap: ISnapshot): number {
  return snap.parts.reduce((n, p) => n + p.tokens, 0) + snap.tools.reduce((n, t) => n + t.tokens, 0);
}

function messageText(message: Record<string, unknown>): string {
  const content = message.content;
  let text = typeof content === 'string' ? content : JSON.stringify(content ?? '', null, 2);
  const calls = message.tool_calls as { name?: string; arguments?: unknown }[] | undefined;
  for (const call of calls ?? []) {
    text += `\n→ ${call.name}(${JSON.stringify(call.arguments ?? {})})`;
  }
  return text;
}

function section(doc: Document, title: string, tokens: number, open = false): [HTMLDetailsElement, HTMLElement] {
  const details = doc.createElement('details');
  details.className = 'jb-inspect-part';
  details.open = open;
  const summary = doc.createElement('summary');
  const name = doc.createElement('span');
  name.className = 'jb-inspect-title';
  name.textContent = title;
  const count = doc.createElement('span');
  count.className = 'jb-inspect-tokens';
  count.textContent = `${tokens.toLocaleString('en-US')} tokens`;
  summary.append(name, count);
  const body = doc.createElement('div');
  body.className = 'jb-inspect-body';
  details.append(summary, body);
  return [details, body];
}

function renderPart(doc: Document, part: IRequestPart): HTMLElement {
  const [details, body] = section(doc, partTitle(part.kind), part.tokens);
  details.dataset.kind = part.kind;
  for (const message of part.messages) {
    const block = doc.createElement('div');
    block.className = 'jb-inspect-message';
    if (part.kind === 'history') {
      const role = doc.createElement('div');
      role.className = 'jb-inspect-role';
      role.textContent = String(message.role ?? '?');
      block.appendChild(role);
    }
    const pre = doc.createElement('pre');
    pre.textContent = messageText(message);
    block.appendChild(pre);
    body.appendChild(block);
  }
  return details;
}

/** The whole view of one reply (a snapshot, or the kernel's reason there is none). */
export function renderInspector(reply: IInspectReply, doc: Document = document): HTMLElement {
  const root = doc.createElement('div');
  root.className = 'jb-inspector';
  if (reply.error || !reply.snapshot) {
    const p = doc.createElement('p');
    p.className = 'jb-inspect-empty';
    p.textContent = reply.error ?? 'No request to show yet.';
    root.appendChild(p);
    return root;
  }
  const snap = reply.snapshot;
  const head = doc.createElement('h2');
  head.textContent = `Request of turn ${reply.turn ?? '?'} (step ${snap.step}) to ${snap.provider || '?'}:${snap.model || '?'}`;
  const total = doc.createElement('p');
  total.className = 'jb-inspect-total';
  total.textContent =
    `≈ ${totalTokens(snap).toLocaleString('en-US')} tokens in all (counts calibrated ×${snap.calibration.toFixed(2)}); ` +
    'secrets are masked.';
  root.append(head, total);
  for (const part of snap.parts) {
    root.appendChild(renderPart(doc, part));
  }
  const toolTokens = snap.tools.reduce((n, t) => n + t.tokens, 0);
  const [tools, body] = section(doc, `Tools (${snap.tools.length})`, toolTokens);
  tools.dataset.kind = 'tools';
  for (const tool of snap.tools) {
    const [one, oneBody] = section(doc, tool.name, tool.tokens);
    const pre = doc.createElement('pre');
    pre.textContent = JSON.stringify(tool.schema, null, 2);
    oneBody.appendChild(pre);
    body.appendChild(one);
  }
  root.appendChild(tools);
  return root;
}
