/**
 * Finished ``%%agent`` turns, saved as ``application/vnd.jupyter-brain.turn+json`` (the
 * kernel retires the live widget once a turn is final, so a saved notebook carries no
 * widget code per cell). Drawn by the live view's own renderer (``js/src/turn_view.ts``,
 * bundled into ``../view``; its CSS comes with ``style/index.js``). Where this extension is absent, the bundle's
 * ``text/markdown`` is shown instead.
 *
 * Safe in untrusted notebooks: the renderer sets no script, and the model's Markdown goes
 * through DOMPurify as in the live view.
 */
import type { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Widget } from '@lumino/widgets';

import { renderTurn, type TurnBundle, type TurnPainter } from '../view/turn_view.js';

export const TURN_MIME = 'application/vnd.jupyter-brain.turn+json';

export class TurnRenderer extends Widget implements IRenderMime.IRenderer {
  private _painter: TurnPainter | null = null;

  constructor() {
    super();
    this.addClass('jb-turn-output');
    this.node.dataset.mimeType = TURN_MIME; // as JupyterLab's own renderers: tests and styles find it
  }

  async renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    const bundle = model.data[TURN_MIME] as unknown as TurnBundle | undefined;
    const markdown = model.data['text/markdown'];
    this._painter?.dispose();
    this.node.textContent = '';
    if (!bundle || !Array.isArray(bundle.transcript)) {
      this.node.textContent = 'jupyter-brain: this turn was saved in a form this extension cannot read.';
      return;
    }
    this._painter = renderTurn(this.node, bundle, typeof markdown === 'string' ? markdown : '');
  }

  dispose(): void {
    this._painter?.dispose();
    this._painter = null;
    super.dispose();
  }
}

/** Ranked before Markdown (60), so the extension's view wins over the fallback. */
export const turnRendererFactory: IRenderMime.IRendererFactory = {
  safe: true,
  mimeTypes: [TURN_MIME],
  defaultRank: 40,
  createRenderer: () => new TurnRenderer()
};
