import { describe, expect, it } from 'vitest';

import { cardHeading } from '../src/outside_card_text';

describe('outside approval card', () => {
  it('names the notebook once', () => {
    expect(cardHeading({ path: 'a.ipynb', title: 'insert a code cell at index 1' })).toBe(
      'a.ipynb: insert a code cell at index 1'
    );
    expect(cardHeading({ path: 'made.ipynb', title: 'create the notebook made.ipynb' })).toBe(
      'create the notebook made.ipynb'
    );
    expect(cardHeading({ path: '', title: 'run code' })).toBe('run code');
  });
});
