/**
 * "Fix with agent" on error outputs: the notebook's renderer of error text
 * (``application/vnd.jupyter.stderr``) wrapped so that an output whose model is an
 * *error* (not a stream to stderr) gets a button below the traceback.
 */
import type { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Widget } from '@lumino/widgets';

export const ERROR_MIME = 'application/vnd.jupyter.stderr';

export type FixHandler = (outputNode: HTMLElement, button: HTMLButtonElement) => void;

/** The output model JupyterLab passes is the output itself; ``type`` says what it is. */
export function isErrorOutput(model: IRenderMime.IMimeModel): boolean {
  return (model as unknown as { type?: string }).type === 'error';
}

export class FixableErrorRenderer extends Widget implements IRenderMime.IRenderer {
  private _button: HTMLButtonElement | null = null;

  constructor(
    private _inner: IRenderMime.IRenderer,
    private _onFix: FixHandler
  ) {
    super();
    this.addClass('jb-error-output');
  }

  async renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    await this._inner.renderModel(model);
    if (this._inner.node.parentNode !== this.node) {
      this.node.insertBefore(this._inner.node, this.node.firstChild);
    }
    if (isErrorOutput(model) && !this._button) {
      const button = document.createElement('button');
      button.className = 'jp-Button jb-fix-button';
      button.textContent = 'Fix with agent';
      button.title = 'Ask the agent for a corrected cell (shown as a diff first)';
      button.addEventListener('click', () => this._onFix(this.node, button));
      this._button = button;
      this.node.appendChild(button);
    }
  }

  dispose(): void {
    if (!this.isDisposed) {
      this._inner.dispose();
    }
    super.dispose();
  }
}

export function fixableErrorFactory(
  inner: IRenderMime.IRendererFactory,
  onFix: FixHandler
): IRenderMime.IRendererFactory {
  return {
    safe: inner.safe,
    mimeTypes: inner.mimeTypes,
    defaultRank: inner.defaultRank,
    createRenderer: options => new FixableErrorRenderer(inner.createRenderer(options), onFix)
  };
}
