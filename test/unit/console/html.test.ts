// The console's HTML: nothing interpolated becomes markup unless the console built it.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { escapeHtml, html, htmlText } from '../../../shared/edge/console/html.js';
import { timeLeft } from '../../../shared/edge/console/pages.js';
import { verifies } from '../../support/requirements.js';

describe('html', () => {
  it(verifies('console.csp', 'escapes every interpolated value, in text and in quoted attributes'), () => {
    const hostile = `"><script>alert('x')</script><img src=x onerror=alert(1)>&amp;`;
    const out = htmlText(html`<p title="${hostile}">${hostile}</p>`);
    expect(out).not.toMatch(/<script|<img|"><|'x'/);
    expect(out).toBe(
      '<p title="&quot;&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;&amp;amp;">&quot;&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;&amp;amp;</p>',
    );
  });

  it(verifies('console.csp', 'keeps fragments it built, joins lists and drops null, undefined and false'), () => {
    const items = ['a<b', 'c&d'].map((item) => html`<li>${item}</li>`);
    expect(htmlText(html`<ul>${items}${null}${undefined}${false}</ul>`)).toBe(
      '<ul><li>a&lt;b</li><li>c&amp;d</li></ul>',
    );
    expect(htmlText(html`<b>${0}</b>`)).toBe('<b>0</b>');
  });

  it(verifies('console.csp', 'no text survives escaping with a markup character in it'), () => {
    fc.assert(
      fc.property(fc.string(), (text) => {
        const escaped = escapeHtml(text);
        expect(escaped).not.toMatch(/[<>"']/);
        expect(escaped.replace(/&(amp|lt|gt|quot|#39);/g, '')).not.toContain('&');
      }),
    );
  });
});

describe('time left', () => {
  it(verifies('console.call-page', 'reads as people say it'), () => {
    expect(timeLeft(0)).toBe('none');
    expect(timeLeft(12_400)).toBe('12 s');
    expect(timeLeft(4 * 60_000 + 10_000)).toBe('4 min 10 s');
    expect(timeLeft(2 * 3_600_000 + 5 * 60_000)).toBe('2 h 05 min');
    expect(timeLeft(3 * 86_400_000 + 4 * 3_600_000)).toBe('3 d 4 h');
  });
});
