import { describe, expect, it } from 'vitest';

import { BADGE_CLASS, badgeText, badgeTitle, provenanceOf, updateBadge } from '../src/provenance_badge';

const stamped = {
  provenance: { client: 'claude-code', client_version: '2.1', session: 'abc123', tool: 'insert_cell',
    time: '2026-11-28T12:00:00+00:00' }
};

describe('provenance badge', () => {
  it('reads the provenance the endpoint stamps, and nothing else', () => {
    expect(provenanceOf(stamped)?.client).toBe('claude-code');
    expect(provenanceOf(undefined)).toBeNull();
    expect(provenanceOf({ session: 's', turn: 't', agent_cell: 'a', hash: 'h' })).toBeNull(); // an %%agent --cells cell
    expect(provenanceOf({ provenance: { client: '' } })).toBeNull();
  });

  it('says who in the badge and session and time in its tooltip', () => {
    const p = provenanceOf(stamped)!;
    expect(badgeText(p)).toBe('✎ claude-code');
    expect(badgeTitle(p)).toBe(
      'Written by the outside agent claude-code 2.1 (insert_cell)\nMCP session abc123\nat 2026-11-28T12:00:00+00:00'
    );
  });

  it('is added once, follows a metadata change and goes when the provenance goes', () => {
    const cell = document.createElement('div');
    updateBadge(cell, stamped);
    updateBadge(cell, { provenance: { ...stamped.provenance, client: 'codex' } });
    const badges = cell.querySelectorAll(`.${BADGE_CLASS}`);
    expect(badges.length).toBe(1);
    expect(badges[0].textContent).toBe('✎ codex');
    expect(cell.classList.contains('jb-has-provenance')).toBe(true);
    expect(updateBadge(cell, {})).toBeNull();
    expect(cell.querySelector(`.${BADGE_CLASS}`)).toBeNull();
  });
});
