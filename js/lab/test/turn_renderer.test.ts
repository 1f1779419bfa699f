// The extension's renderer of finished %%agent turns (application/vnd.jupyter-brain.turn+json):
// it wins over the Markdown fallback, works in untrusted notebooks, and draws the turn with
// the live view's renderer (bundled from js/src/turn_view.ts by `npm run build` in js/).
import type { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';

// @lumino/widgets loads @lumino/dragdrop, which needs a DragEvent jsdom lacks: define one
// before the renderer module is imported.
(globalThis as { DragEvent?: unknown }).DragEvent ??= class extends Event {};
let TURN_MIME = '';
let turnRendererFactory: IRenderMime.IRendererFactory;
beforeAll(async () => {
  ({ TURN_MIME, turnRendererFactory } = await import('../src/turn_renderer'));
});

function model(data: Record<string, unknown>): IRenderMime.IMimeModel {
  return { data, metadata: {}, trusted: false, setData: () => undefined } as unknown as IRenderMime.IMimeModel;
}

const transcript = [
  { type: 'turn_start', session_id: 's', user_message: 'Which month?', provider: 'scripted', model: 'm', think_level: 'off', strategy: 'none', max_steps: 6 },
  { type: 'step_start', step: 1 },
  { type: 'text_delta', step: 1, text: '**March** dropped most.' },
  { type: 'step_end', step: 1 },
  { type: 'turn_end', status: 'completed', text: '', steps: 1, tool_calls: 0, reflections: 0, duration_ms: 10, cost_usd: 0 }
];

describe('turn renderer', () => {
  it('is preferred over Markdown and safe for untrusted output', () => {
    expect(turnRendererFactory.mimeTypes).toEqual([TURN_MIME]);
    expect(turnRendererFactory.safe).toBe(true);
    expect(turnRendererFactory.defaultRank).toBeLessThan(60); // Markdown's rank
  });

  afterEach(() => vi.useRealTimers());

  it('draws the saved turn', async () => {
    vi.useFakeTimers();
    const renderer = turnRendererFactory.createRenderer({} as IRenderMime.IRendererOptions);
    await renderer.renderModel(model({ [TURN_MIME]: { version: 1, fold: 'auto', transcript }, 'text/markdown': '**March**' }));
    vi.runAllTimers(); // a repaint goes in slices
    expect(renderer.node.querySelector('.jb-agent-view')).not.toBeNull();
    expect(renderer.node.querySelector('.jb-answer')?.textContent).toContain('March dropped most.');
    renderer.dispose();
  });

  it('says so when the bundle is unreadable', async () => {
    const renderer = turnRendererFactory.createRenderer({} as IRenderMime.IRendererOptions);
    await renderer.renderModel(model({ [TURN_MIME]: { version: 99 } }));
    expect(renderer.node.textContent).toContain('cannot read');
  });
});
