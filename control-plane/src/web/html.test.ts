import { describe, expect, it } from 'vitest';
import { SafeHtml, escapeHtml, html } from './html.js';

describe('html', () => {
  it('escapes the five characters that matter in content and quoted attributes', () => {
    expect(escapeHtml(`<a href="x" title='y'>&amp;</a>`)).toBe(
      '&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;amp;&lt;/a&gt;',
    );
  });

  it('escapes every interpolated string, in text and in attributes', () => {
    const name = `"><script>alert(1)</script>`;
    const out = html`<p title="${name}">${name}</p>`.value;
    expect(out).toBe(
      '<p title="&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;">&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;</p>',
    );
    expect(out).not.toContain('<script>');
  });

  it('keeps nested templates as markup but escapes strings inside arrays', () => {
    const items = ['<b>', html`<i>ok</i>`];
    // prettier-ignore
    const out = html`<ul>${items.map((i) => html`<li>${i}</li>`)}</ul>`.value;
    expect(out).toBe('<ul><li>&lt;b&gt;</li><li><i>ok</i></li></ul>');
  });

  it('renders false, null and undefined as nothing and numbers as text', () => {
    expect(html`[${false}${null}${undefined}${0}]`.value).toBe('[0]');
  });

  it('produces SafeHtml, whose string form is the markup', () => {
    // prettier-ignore
    const out = html`<br>`;
    expect(out).toBeInstanceOf(SafeHtml);
    expect(String(out)).toBe('<br>');
  });
});
