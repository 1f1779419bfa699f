import { markdown } from '@codemirror/lang-markdown';
import { python, pythonLanguage } from '@codemirror/lang-python';
import { language } from '@codemirror/language';
import { EditorState } from '@codemirror/state';
import { describe, expect, it } from 'vitest';

import { agentCellExtension, isAgentCell } from '../src/highlight';

const md = markdown();
const markdownLanguage = md.language;
// python() first, as the editor's own language is: the agent cell's Markdown must win anyway.
const state = (doc: string) => EditorState.create({ doc, extensions: [python(), agentCellExtension(md, doc)] });

describe('%%agent highlighting', () => {
  it('recognizes the magics', () => {
    expect(isAgentCell('%%agent --cells\nhi')).toBe(true);
    expect(isAgentCell('%%compare --strategies react,cot\nhi')).toBe(true);
    expect(isAgentCell('%%agents')).toBe(false);
    expect(isAgentCell('x = 1  # %%agent')).toBe(false);
  });
  it('uses Markdown over the editor language for an agent cell, Python otherwise', () => {
    expect(state('%%agent\n# Title\n**bold**').facet(language)).toBe(markdownLanguage);
    expect(state('x = 1').facet(language)).toBe(pythonLanguage);
  });
  it('switches as the user types the magic and removes it', () => {
    let s = state('x = 1');
    s = s.update({ changes: { from: 0, insert: '%%agent\n' } }).state;
    expect(s.facet(language)).toBe(markdownLanguage);
    s = s.update({ changes: { from: 0, to: 8 } }).state;
    expect(s.facet(language)).toBe(pythonLanguage);
  });
});
