/**
 * jupyter-brain's JupyterLab 4 extension. Every feature needs the kernel side
 * (``%load_ext jupyter_brain``) and falls back to the kernel-only commands without it:
 * ``%%agent --cells`` (one cell via set_next_input), ``%agent fix``, ``%agent inspect``,
 * ``%agent status``.
 */
import { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { Dialog, ICommandPalette, MainAreaWidget, showDialog, showErrorMessage } from '@jupyterlab/apputils';
import type { Cell, ICodeCellModel } from '@jupyterlab/cells';
import { EditorExtensionRegistry, IEditorExtensionRegistry, IEditorLanguageRegistry } from '@jupyterlab/codemirror';
import { INotebookTracker, NotebookActions, NotebookPanel } from '@jupyterlab/notebook';
import { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import { IStatusBar } from '@jupyterlab/statusbar';
import { Widget } from '@lumino/widgets';

import { applyCells, ICellLike, ISharedCells, planCells } from './cells';
import { KernelChannel } from './channel';
import { renderDiff } from './diff';
import { ERROR_MIME, fixableErrorFactory } from './fixbutton';
import { statusText, statusTitle } from './format';
import { agentCellExtension } from './highlight';
import { renderInspector } from './inspector';
import { compareRendererFactory } from './compare_renderer';
import { OutsideApprovals } from './outside_approval';
import { trackProvenance } from './provenance_badge';
import { turnRendererFactory } from './turn_renderer';
import type { ICellsMessage, IFixReply, IInspectReply, IStatusMessage } from './protocol';

export const CommandIDs = {
  insertAgentCell: 'jupyter-brain:insert-agent-cell',
  fixCell: 'jupyter-brain:fix-cell',
  showRequest: 'jupyter-brain:show-request',
  showStatus: 'jupyter-brain:show-status'
};

const channels = new WeakMap<NotebookPanel, KernelChannel>();
const lastStatus = new WeakMap<NotebookPanel, IStatusMessage>();

function pre(text: string): Widget {
  const body = new Widget();
  const el = document.createElement('pre');
  el.className = 'jb-dialog-text';
  el.textContent = text;
  body.node.appendChild(el);
  return body;
}

function cellsOf(panel: NotebookPanel): ICellLike[] {
  const out: ICellLike[] = [];
  const cells = panel.content.model!.cells;
  for (let i = 0; i < cells.length; i++) {
    const c = cells.get(i);
    out.push({ id: c.id, source: c.sharedModel.getSource(), metadata: c.sharedModel.getMetadata() as any });
  }
  return out;
}

async function insertCells(panel: NotebookPanel, msg: ICellsMessage): Promise<void> {
  const model = panel.content.model;
  if (!model) {
    return;
  }
  const plan = planCells(cellsOf(panel), msg);
  if (plan.agentIndex < 0) {
    console.warn('jupyter-brain: the %%agent cell of these code cells is not in this notebook');
    return;
  }
  let replace = true;
  if (plan.edited.length) {
    const answer = await showDialog({
      title: 'Replace the cells the agent inserted last time?',
      body:
        `You edited ${plan.edited.length} of the ${plan.previous.length} cell(s) this %%agent cell ` +
        'inserted on its last run. Replace them with the new ones, or keep them and add the new cells below?',
      buttons: [Dialog.cancelButton({ label: 'Keep mine, add below' }), Dialog.warnButton({ label: 'Replace' })]
    });
    replace = answer.button.accept;
  }
  applyCells(model.sharedModel as unknown as ISharedCells, plan, replace);
}

function cellHasError(cell: Cell): boolean {
  if (cell.model.type !== 'code') {
    return false;
  }
  const outputs = (cell.model as ICodeCellModel).outputs;
  for (let i = 0; i < outputs.length; i++) {
    if (outputs.get(i).type === 'error') {
      return true;
    }
  }
  return false;
}

async function fixCell(panel: NotebookPanel, cell: Cell, button?: HTMLButtonElement): Promise<void> {
  const channel = channels.get(panel);
  if (!channel) {
    return;
  }
  const label = button?.textContent;
  if (button) {
    button.disabled = true;
    button.textContent = 'Asking the agent…';
  }
  let reply: IFixReply;
  try {
    reply = (await channel.request({
      type: 'fix',
      cell_id: cell.model.id,
      execution_count: (cell.model as ICodeCellModel).executionCount ?? null
    })) as IFixReply;
  } finally {
    if (button) {
      button.disabled = false;
      button.textContent = label ?? 'Fix with agent';
    }
  }
  if (reply.error || !reply.diff || reply.fixed === undefined) {
    await showErrorMessage('Fix with agent', reply.error || 'The proposed cell is the same as the failing one.');
    return;
  }
  const body = new Widget();
  body.addClass('jb-fix-dialog');
  if (reply.explanation) {
    const p = document.createElement('p');
    p.textContent = reply.explanation;
    body.node.appendChild(p);
  }
  body.node.appendChild(renderDiff(reply.diff));
  const result = await showDialog({
    title: `Proposed fix of In [${reply.execution_count}] (${reply.error_type})`,
    body,
    buttons: [
      Dialog.cancelButton({ label: 'Discard' }),
      Dialog.okButton({ label: 'Insert as new cell', displayType: 'default' }),
      Dialog.okButton({ label: 'Apply' })
    ]
  });
  if (result.button.label === 'Apply') {
    cell.model.sharedModel.setSource(reply.fixed);
  } else if (result.button.label === 'Insert as new cell') {
    const index = panel.content.widgets.indexOf(cell);
    panel.content.model!.sharedModel.insertCell(index + 1, { cell_type: 'code', source: reply.fixed });
  }
}

class StatusItem extends Widget {
  constructor(onClick: () => void) {
    super();
    this.addClass('jb-status-item');
    this.node.textContent = 'agent: no turn yet';
    this.node.title = 'jupyter-brain: no turn yet in this notebook. Click for %agent status.';
    this.node.addEventListener('click', onClick);
  }

  display(status: IStatusMessage | undefined): void {
    this.node.textContent = status ? statusText(status) : 'agent: no turn yet';
    this.node.title = status ? statusTitle(status) : 'jupyter-brain: no turn yet in this notebook.';
    this.node.dataset.level = status?.context_level ?? '';
  }
}

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'jupyter-brain:plugin',
  description: 'jupyter-brain: agent code as cells, Fix with agent, %%agent highlighting, status bar, inspector.',
  autoStart: true,
  requires: [INotebookTracker, IRenderMimeRegistry, IEditorExtensionRegistry, IEditorLanguageRegistry],
  optional: [IStatusBar, ICommandPalette],
  activate: async (
    app: JupyterFrontEnd,
    tracker: INotebookTracker,
    rendermime: IRenderMimeRegistry,
    extensions: IEditorExtensionRegistry,
    languages: IEditorLanguageRegistry,
    statusBar: IStatusBar | null,
    palette: ICommandPalette | null
  ) => {
    // %%agent / %%compare bodies as Markdown.
    const markdown = await languages.getLanguage('markdown');
    if (markdown?.support) {
      extensions.addExtension({
        name: 'jupyter-brain:agent-cell-markdown',
        factory: options =>
          EditorExtensionRegistry.createImmutableExtension(
            agentCellExtension(markdown.support!, options.model.sharedModel.getSource())
          )
      });
    }

    const status = new StatusItem(() => void app.commands.execute(CommandIDs.showStatus));
    const showCurrentStatus = () => {
      const panel = tracker.currentWidget;
      status.display(panel ? lastStatus.get(panel) : undefined);
    };

    tracker.widgetAdded.connect((_, panel) => {
      const channel = new KernelChannel(panel.sessionContext);
      channels.set(panel, channel);
      channel.received.connect((_, msg) => {
        if (msg.type === 'status') {
          lastStatus.set(panel, msg as unknown as IStatusMessage);
          if (tracker.currentWidget === panel) {
            showCurrentStatus();
          }
        } else if (msg.type === 'cells') {
          void insertCells(panel, msg as unknown as ICellsMessage);
        }
      });
      panel.disposed.connect(() => channel.dispose());
    });
    tracker.currentChanged.connect(showCurrentStatus);

    // Outside agents (the server's MCP endpoint): their cells' badges, and the ask cards.
    trackProvenance(tracker);
    void new OutsideApprovals(tracker).run();

    // "Fix with agent" under error outputs.
    const errorFactory = rendermime.getFactory(ERROR_MIME);
    if (errorFactory) {
      const onFix = (node: HTMLElement, button: HTMLButtonElement) => {
        tracker.forEach(panel => {
          const cell = panel.content.widgets.find(c => c.node.contains(node));
          if (cell) {
            void fixCell(panel, cell, button);
          }
        });
      };
      rendermime.addFactory(fixableErrorFactory(errorFactory, onFix), rendermime.getRank(ERROR_MIME));
    }
    // Finished %%agent turns and %%compare cells (their Markdown fallback shows where this
    // extension is absent); a comparison's "Mark best" asks the kernel of its notebook.
    rendermime.addFactory(turnRendererFactory);
    rendermime.addFactory(
      compareRendererFactory(async (node, comparisonId, strategy, run) => {
        let channel: KernelChannel | undefined;
        tracker.forEach(panel => {
          if (panel.node.contains(node)) {
            channel = channels.get(panel);
          }
        });
        if (!channel) {
          return `No notebook kernel to record it: run %agent compare-best ${strategy} in this notebook.`;
        }
        const reply = await channel.request({ type: 'mark_best', comparison_id: comparisonId, strategy, run });
        return reply.error ?? null;
      })
    );

    const current = () => tracker.currentWidget;
    app.commands.addCommand(CommandIDs.insertAgentCell, {
      label: 'Insert agent cell below',
      caption: 'A new %%agent cell below the active cell',
      isEnabled: () => !!current(),
      execute: () => {
        const panel = current();
        if (!panel) {
          return;
        }
        NotebookActions.insertBelow(panel.content);
        const cell = panel.content.activeCell;
        if (cell) {
          cell.model.sharedModel.setSource('%%agent\n');
          panel.content.mode = 'edit';
          cell.editor?.setCursorPosition({ line: 1, column: 0 });
        }
      }
    });
    app.commands.addCommand(CommandIDs.fixCell, {
      label: 'Fix the error in this cell',
      caption: 'Ask the agent for a corrected cell, shown as a diff',
      isEnabled: () => {
        const cell = current()?.content.activeCell;
        return !!cell && cellHasError(cell);
      },
      execute: () => {
        const panel = current();
        const cell = panel?.content.activeCell;
        if (panel && cell && cellHasError(cell)) {
          return fixCell(panel, cell);
        }
      }
    });
    app.commands.addCommand(CommandIDs.showRequest, {
      label: 'Show what the agent sent',
      caption: 'The last request as sent to the model, with the token count of each part',
      isEnabled: () => !!current(),
      execute: async () => {
        const panel = current();
        const channel = panel && channels.get(panel);
        if (!channel) {
          return;
        }
        const reply = (await channel.request({ type: 'inspect' })) as IInspectReply;
        const content = new Widget();
        content.addClass('jb-inspector-panel');
        content.node.appendChild(renderInspector(reply));
        const widget = new MainAreaWidget({ content });
        widget.id = `jupyter-brain-inspector-${Date.now()}`;
        widget.title.label = 'What the agent sent';
        widget.title.closable = true;
        app.shell.add(widget, 'main', { mode: 'split-right' });
        app.shell.activateById(widget.id);
      }
    });
    app.commands.addCommand(CommandIDs.showStatus, {
      label: 'Show the agent status',
      execute: async () => {
        const panel = current();
        const channel = panel && channels.get(panel);
        if (!channel) {
          return;
        }
        const reply = await channel.request({ type: 'status' });
        await showDialog({
          title: 'jupyter-brain · %agent status',
          body: pre(reply.error ?? String(reply.text ?? '')),
          buttons: [Dialog.okButton({ label: 'Close' })]
        });
      }
    });
    if (palette) {
      for (const command of [CommandIDs.insertAgentCell, CommandIDs.fixCell, CommandIDs.showRequest]) {
        palette.addItem({ command, category: 'jupyter-brain' });
      }
    }
    if (statusBar) {
      statusBar.registerStatusItem('jupyter-brain:status', {
        item: status,
        align: 'left',
        rank: 100,
        isActive: () => !!tracker.currentWidget
      });
    }
  }
};

export default plugin;
