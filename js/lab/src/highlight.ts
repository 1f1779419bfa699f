/**
 * ``%%agent`` and ``%%compare`` bodies highlighted as Markdown, the first line as a magic line.
 *
 * JupyterLab 4's ``ipython`` language is plain ``@codemirror/lang-python`` (see
 * packages/codemirror/src/language.ts; cell magics have no mode, jupyterlab#3869). The
 * editor's own language sits in a compartment that only changes with the MIME type, and
 * the ``language`` facet takes its first value, so this adds, per editor, a compartment of
 * higher precedence holding the Markdown language while the cell starts with the magic
 * (and nothing otherwise), switched by a transaction extender as the user types.
 */
import { Compartment, EditorState, Extension, Prec, RangeSetBuilder, Text } from '@codemirror/state';
import { Decoration, DecorationSet, EditorView, ViewPlugin, ViewUpdate } from '@codemirror/view';

export const MAGIC = /^\s*%%(agent|compare)\b/;

export function isAgentCell(text: string): boolean {
  return MAGIC.test(text);
}

function docStart(doc: Text): string {
  return doc.sliceString(0, Math.min(doc.length, 64));
}

const magicLine = Decoration.line({ class: 'jb-magic-line' });
const magicWord = Decoration.mark({ class: 'jb-magic-word' });

function magicDecorations(view: EditorView): DecorationSet {
  const builder = new RangeSetBuilder<Decoration>();
  const first = view.state.doc.line(1);
  const match = MAGIC.exec(first.text);
  if (match) {
    const start = first.from + first.text.indexOf('%%');
    builder.add(first.from, first.from, magicLine);
    builder.add(start, start + 2 + match[1].length, magicWord);
  }
  return builder.finish();
}

const magicLinePlugin = ViewPlugin.fromClass(
  class {
    decorations: DecorationSet;
    constructor(view: EditorView) {
      this.decorations = magicDecorations(view);
    }
    update(update: ViewUpdate) {
      if (update.docChanged) {
        this.decorations = magicDecorations(update.view);
      }
    }
  },
  { decorations: v => v.decorations }
);

/** The editor extension for one cell editor, given its text when it is created. */
export function agentCellExtension(markdown: Extension, initialText: string): Extension {
  const language = new Compartment();
  const on = () => Prec.highest(markdown);
  return [
    language.of(isAgentCell(initialText) ? on() : []),
    EditorState.transactionExtender.of(tr => {
      if (!tr.docChanged) {
        return null;
      }
      const was = isAgentCell(docStart(tr.startState.doc));
      const now = isAgentCell(docStart(tr.newDoc));
      return was === now ? null : { effects: language.reconfigure(now ? on() : []) };
    }),
    EditorView.editorAttributes.compute(['doc'], (state): Record<string, string> =>
      isAgentCell(docStart(state.doc)) ? { class: 'jb-agent-editor', 'data-jb-language': 'markdown' } : {}
    ),
    magicLinePlugin
  ];
}
