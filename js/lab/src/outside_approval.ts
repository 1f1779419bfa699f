/**
 * ``ask`` for outside agents (issue #35): the server's MCP endpoint holds an agent's edit or
 * execution until the user decides. This page keeps a long poll open on
 * ``{base}jupyter-brain/approvals`` naming the notebooks its tabs show (so the server knows a
 * browser is attached), draws each waiting request as a card above its notebook (or in a
 * dialog when no tab shows the notebook), and posts Approve / Deny. Without the server
 * extension (404) it stops polling. Text from the agent goes into text nodes only.
 */
import { Dialog } from '@jupyterlab/apputils';
import type { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { ServerConnection } from '@jupyterlab/services';
import { Widget } from '@lumino/widgets';

import { renderDiff } from './diff';
import { cardHeading } from './outside_card_text';

export interface IOutsideRequest {
  id: string;
  where: 'notebook' | 'dialog';
  client: string;
  session: string;
  tool: string;
  effect: string;
  path: string;
  title: string;
  diff: string;
  code: string;
  timeout_s: number;
}

type Decide = (approved: boolean) => Promise<string | null>;

function el<K extends keyof HTMLElementTagNameMap>(tag: K, cls: string, text?: string): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  node.className = cls;
  if (text !== undefined) {
    node.textContent = text;
  }
  return node;
}

/** The card: who asks, the tool, the notebook, the diff or the code, Approve / Deny
 *  (the in-kernel approval card's classes, so it looks the same). */
export function renderOutsideCard(request: IOutsideRequest, decide: Decide, withActions = true): HTMLElement {
  const view = el('div', 'jb-agent-view jb-outside-approval');
  const card = el('div', 'jb-card jb-approval jb-pending');
  card.dataset.requestId = request.id;
  card.setAttribute('role', 'group');
  card.setAttribute('aria-label', `Approve ${request.tool} by ${request.client}?`);
  const head = el('div', 'jb-card-head');
  head.append(
    el('span', 'jb-card-title', 'Approval needed'),
    el('span', 'jb-outside-client', `✎ ${request.client}`),
    el('code', 'jb-approval-tool', request.tool),
    el('span', `jb-chip jb-effect-${request.effect.replace(/[^a-z]/g, '')}`, request.effect),
    el('span', 'jb-approval-path', cardHeading(request))
  );
  card.appendChild(head);
  if (request.diff) {
    card.appendChild(renderDiff(request.diff));
  } else if (request.code) {
    card.appendChild(el('pre', 'jb-diff jb-outside-code', request.code));
  }
  const actions = el('div', 'jb-approval-actions');
  const approve = el('button', 'jb-btn jb-approve', 'Approve');
  const deny = el('button', 'jb-btn jb-deny', 'Deny');
  approve.type = deny.type = 'button';
  const wait = request.timeout_s ? ` It counts as refused after ${Math.round(request.timeout_s)} s.` : '';
  const status = el(
    'div',
    'jb-card-note jb-approval-status',
    `An outside agent (MCP client "${request.client}") asks to ${request.title}.${wait}`
  );
  const click = async (approved: boolean) => {
    approve.disabled = deny.disabled = true;
    status.textContent = approved ? 'Approving…' : 'Denying…';
    const problem = await decide(approved);
    card.classList.remove('jb-pending');
    card.classList.add(problem ? 'jb-denied' : approved ? 'jb-approved' : 'jb-denied');
    status.textContent = problem ?? (approved ? '✓ Approved' : '✗ Denied');
  };
  approve.addEventListener('click', () => void click(true));
  deny.addEventListener('click', () => void click(false));
  actions.append(approve, deny);
  if (withActions) {
    card.appendChild(actions);
  }
  card.appendChild(status);
  view.appendChild(card);
  return view;
}

const NOT_WAITING = 'This request is no longer waiting (it timed out, or was answered in another tab).';

export class OutsideApprovals {
  private readonly _browser = `lab-${Math.random().toString(36).slice(2)}-${Date.now().toString(36)}`;
  private readonly _settings = ServerConnection.makeSettings();
  private readonly _cards = new Map<string, Widget[]>();
  private readonly _dialogs = new Map<string, Dialog<unknown>>();
  private readonly _answered = new Set<string>();
  private _abort: AbortController | null = null;
  private _stopped = false;

  constructor(private readonly _tracker: INotebookTracker) {
    const resync = () => this._abort?.abort();
    _tracker.widgetAdded.connect((_, panel) => {
      panel.context.pathChanged.connect(resync);
      panel.disposed.connect(resync);
      void panel.context.ready.then(resync);
      resync();
    });
  }

  /** Poll until the server says the endpoint is not there. */
  async run(): Promise<void> {
    while (!this._stopped) {
      const notebooks = this._notebooks();
      this._abort = new AbortController();
      let response: Response;
      try {
        response = await ServerConnection.makeRequest(
          this._url(),
          {
            method: 'POST',
            body: JSON.stringify({ browser: this._browser, notebooks, shown: [...this._cards.keys(), ...this._dialogs.keys()] }),
            signal: this._abort.signal
          },
          this._settings
        );
      } catch (error) {
        if (!this._abort.signal.aborted) {
          await new Promise(resolve => setTimeout(resolve, 5000)); // the server restarts: try again
        }
        continue;
      }
      if (response.status === 404) {
        this._stopped = true; // the server extension is off here: no approvals to show
        return;
      }
      if (!response.ok) {
        await new Promise(resolve => setTimeout(resolve, 5000));
        continue;
      }
      let body: { requests?: IOutsideRequest[] };
      try {
        body = await response.json();
      } catch {
        continue;
      }
      document.body.dataset.jbApprovalsSynced = JSON.stringify(notebooks);
      this._show(body.requests ?? []);
    }
  }

  private _url(id?: string): string {
    return this._settings.baseUrl + 'jupyter-brain/approvals' + (id ? `/${encodeURIComponent(id)}` : '');
  }

  private _notebooks(): string[] {
    const paths: string[] = [];
    this._tracker.forEach(panel => {
      if (!panel.isDisposed) {
        paths.push(panel.context.path);
      }
    });
    return paths;
  }

  private _decide(id: string): Decide {
    return async approved => {
      const response = await ServerConnection.makeRequest(
        this._url(id),
        { method: 'POST', body: JSON.stringify({ approved }) },
        this._settings
      );
      return response.status === 404 ? NOT_WAITING : response.ok ? null : `The server answered ${response.status}.`;
    };
  }

  private _show(requests: IOutsideRequest[]): void {
    const ids = new Set(requests.map(r => r.id));
    for (const [id, widgets] of this._cards) {
      if (!ids.has(id)) {
        widgets.forEach(w => w.dispose());
        this._cards.delete(id);
      }
    }
    for (const [id, dialog] of this._dialogs) {
      if (!ids.has(id)) {
        dialog.dispose();
        this._dialogs.delete(id);
      }
    }
    for (const request of requests) {
      if (this._cards.has(request.id) || this._dialogs.has(request.id) || this._answered.has(request.id)) {
        continue;
      }
      if (request.where === 'notebook') {
        const widgets: Widget[] = [];
        this._tracker.forEach(panel => {
          if (panel.context.path === request.path) {
            widgets.push(this._cardIn(panel, request));
          }
        });
        this._cards.set(request.id, widgets);
      } else {
        this._dialogs.set(request.id, this._dialog(request));
      }
    }
  }

  private _cardIn(panel: NotebookPanel, request: IOutsideRequest): Widget {
    const widget = new Widget();
    widget.addClass('jb-outside-approval-host');
    const card = renderOutsideCard(request, this._decide(request.id));
    widget.node.appendChild(card);
    panel.contentHeader.addWidget(widget);
    // The header is a Lumino BoxPanel: it is as tall as its children's min-height says, so the
    // card's height is passed on as its host's min-height, and the panel's layout fitted again.
    const fit = () => {
      if (!widget.isDisposed) {
        widget.node.style.minHeight = `${card.offsetHeight}px`;
        panel.contentHeader.fit();
      }
    };
    const observer = new ResizeObserver(fit);
    observer.observe(card);
    widget.disposed.connect(() => observer.disconnect());
    requestAnimationFrame(fit);
    return widget;
  }

  private _dialog(request: IOutsideRequest): Dialog<unknown> {
    const body = new Widget();
    body.node.appendChild(renderOutsideCard(request, async () => null, false));
    const dialog = new Dialog({
      title: `${request.client} asks to ${request.title}`,
      body,
      buttons: [Dialog.cancelButton({ label: 'Deny' }), Dialog.okButton({ label: 'Approve' })],
      defaultButton: 0 // Enter denies: approving takes a click
    });
    dialog
      .launch()
      .then(async result => {
        if (this._dialogs.get(request.id) === dialog && result.button) {
          this._dialogs.delete(request.id);
          this._answered.add(request.id);
          await this._decide(request.id)(result.button.accept);
        }
      })
      .catch(() => undefined); // closed because the request went (timed out, answered elsewhere)
    return dialog;
  }
}
