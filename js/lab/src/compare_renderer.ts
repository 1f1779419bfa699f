/**
 * Finished ``%%compare`` outputs, saved as ``application/vnd.jupyter-brain.compare+json``
 * (the kernel retires the live widget once every run has ended, so a saved notebook
 * reopens without "Error displaying widget"). Drawn by the live view's own renderer
 * (``js/src/compare_bundle.ts``, bundled into ``../view``; its CSS comes with
 * ``style/index.js``). Where this extension is absent, the bundle's ``text/markdown`` shows.
 *
 * "Mark best" asks the notebook's kernel through the extension's comm (``markBest``); once
 * recorded, the winner is written into the output's data, so the saved file keeps it.
 * Safe in untrusted notebooks: no script, and the model's Markdown goes through DOMPurify.
 */
import type { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Widget } from '@lumino/widgets';

import { type ComparePainter, isCompareBundle, renderCompare } from '../view/compare_bundle.js';

export const COMPARE_MIME = 'application/vnd.jupyter-brain.compare+json';

/** Records a winner in the kernel of the notebook that shows ``node``: null once
 *  recorded, else why not. */
export type MarkBest = (node: HTMLElement, comparisonId: string, strategy: string, run: number) => Promise<string | null>;

export class CompareRenderer extends Widget implements IRenderMime.IRenderer {
  private _painter: ComparePainter | null = null;

  constructor(private readonly _markBest?: MarkBest) {
    super();
    this.addClass('jb-compare-output');
    this.node.dataset.mimeType = COMPARE_MIME; // as JupyterLab's own renderers: tests and styles find it
  }

  async renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    const bundle = model.data[COMPARE_MIME] as unknown;
    this._painter?.dispose();
    this.node.textContent = '';
    if (!isCompareBundle(bundle)) {
      this.node.textContent = 'jupyter-brain: this comparison was saved in a form this extension cannot read.';
      return;
    }
    const markBest = this._markBest;
    this._painter = renderCompare(this.node, bundle, {
      onMarkBest: markBest ? (id, strategy, run) => markBest(this.node, id, strategy, run) : undefined,
      onWinner: strategy => {
        // Kept in the output, so the saved notebook shows the winner too.
        model.setData({ data: { ...model.data, [COMPARE_MIME]: { ...bundle, winner: strategy } as any } });
      }
    });
  }

  dispose(): void {
    this._painter?.dispose();
    this._painter = null;
    super.dispose();
  }
}

/** Ranked before Markdown (60), so the extension's view wins over the fallback. */
export function compareRendererFactory(markBest?: MarkBest): IRenderMime.IRendererFactory {
  return {
    safe: true,
    mimeTypes: [COMPARE_MIME],
    defaultRank: 40,
    createRenderer: () => new CompareRenderer(markBest)
  };
}
