/**
 * The badge on a cell an outside agent wrote (issue #35): the MCP endpoint stamps
 * ``metadata.jupyter_brain.provenance`` (client, session, tool, time) on every cell it inserts
 * or edits; the cell shows "✎ client" in its top right, its tooltip the session and time. It
 * follows the metadata (live edits, save and reopen), so there is nothing to store.
 */
import type { Cell } from '@jupyterlab/cells';
import type { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';

import { META_KEY } from './cells';

export const BADGE_CLASS = 'jb-provenance-badge';

export interface IProvenance {
  client: string;
  client_version?: string;
  session?: string;
  tool?: string;
  time?: string;
}

/** The provenance in a cell's ``jupyter_brain`` metadata, or null (not an outside agent's cell). */
export function provenanceOf(jupyterBrain: unknown): IProvenance | null {
  const found = (jupyterBrain as { provenance?: unknown } | null | undefined)?.provenance as IProvenance | undefined;
  if (!found || typeof found !== 'object' || typeof found.client !== 'string' || !found.client) {
    return null;
  }
  return found;
}

export function badgeText(p: IProvenance): string {
  return `✎ ${p.client}`;
}

export function badgeTitle(p: IProvenance): string {
  const who = p.client + (p.client_version ? ` ${p.client_version}` : '');
  const lines = [`Written by the outside agent ${who}` + (p.tool ? ` (${p.tool})` : '')];
  if (p.session) {
    lines.push(`MCP session ${p.session}`);
  }
  if (p.time) {
    lines.push(`at ${p.time}`);
  }
  return lines.join('\n');
}

/** The badge of ``node`` (a cell's) made to match ``jupyterBrain``: added, updated or removed. */
export function updateBadge(node: HTMLElement, jupyterBrain: unknown): HTMLElement | null {
  const provenance = provenanceOf(jupyterBrain);
  let badge = node.querySelector<HTMLElement>(`:scope > .${BADGE_CLASS}`);
  if (!provenance) {
    badge?.remove();
    node.classList.remove('jb-has-provenance');
    return null;
  }
  if (!badge) {
    badge = node.ownerDocument.createElement('span');
    badge.className = BADGE_CLASS;
    node.appendChild(badge);
  }
  node.classList.add('jb-has-provenance');
  badge.textContent = badgeText(provenance);
  badge.title = badgeTitle(provenance);
  return badge;
}

function refreshCell(cell: Cell): void {
  updateBadge(cell.node, cell.model.getMetadata(META_KEY));
}

/** Badges on every notebook's cells, kept up to date as cells and their metadata change. */
export function trackProvenance(tracker: INotebookTracker): void {
  const watched = new WeakSet<object>();
  const refresh = (panel: NotebookPanel) => {
    for (const cell of panel.content.widgets) {
      if (!watched.has(cell.model)) {
        watched.add(cell.model);
        cell.model.metadataChanged.connect(() => {
          const widget = panel.content.widgets.find(w => w.model === cell.model);
          if (widget) {
            refreshCell(widget);
          }
        });
      }
      refreshCell(cell);
    }
  };
  tracker.widgetAdded.connect((_, panel) => {
    void panel.context.ready.then(() => {
      refresh(panel);
      // after the notebook made its widgets for the change
      panel.content.model?.cells.changed.connect(() => setTimeout(() => refresh(panel), 0));
    });
  });
}
