// SPDX-License-Identifier: GPL-3.0-or-later
// The body of an async function run in Sightline's isolated script world after
// the Turndown, GFM and Readability libraries (see sight-scrape.c). `args` is
// { formats: [..] }. One pass over the live document returns every format.

const wanted = new Set(args.formats || ['markdown']);
const result = { content: {}, metadata: {}, links: [] };

const DROP = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'IFRAME', 'OBJECT', 'EMBED',
                      'LINK', 'META', 'BASE', 'CANVAS', 'svg']);
const KEEP_ATTRS = new Set(['href', 'src', 'alt', 'title', 'colspan', 'rowspan', 'lang',
                            'datetime', 'type', 'value', 'name', 'for', 'scope']);

function isHidden(el) {
  if (el.hidden || el.getAttribute('aria-hidden') === 'true')
    return true;
  const style = el.ownerDocument.defaultView.getComputedStyle(el);
  return style.display === 'none' || style.visibility === 'hidden';
}

// The cleaned document: a clone of the live one walked in lockstep, so hidden
// elements (known only from live computed styles) are dropped with scripts,
// styles, comments and every presentational or event-handler attribute.
function cleanedClone() {
  const clone = document.documentElement.cloneNode(true);
  const walk = (live, copy) => {
    const liveKids = Array.from(live.childNodes);
    const copyKids = Array.from(copy.childNodes);
    for (let i = 0; i < copyKids.length; i++) {
      const l = liveKids[i], c = copyKids[i];
      if (c.nodeType === Node.COMMENT_NODE || c.nodeType === Node.PROCESSING_INSTRUCTION_NODE) {
        c.remove();
        continue;
      }
      if (c.nodeType !== Node.ELEMENT_NODE)
        continue;
      if (DROP.has(c.nodeName) || DROP.has(c.localName) || (l && l.nodeType === 1 && isHidden(l))) {
        c.remove();
        continue;
      }
      for (const attr of Array.from(c.attributes)) {
        if (!KEEP_ATTRS.has(attr.name))
          c.removeAttribute(attr.name);
      }
      if (c.hasAttribute('href')) {
        const href = c.getAttribute('href');
        if (/^\s*(javascript|vbscript|data):/i.test(href))
          c.removeAttribute('href');
        else
          c.setAttribute('href', new URL(href, document.baseURI).href);
      }
      if (c.hasAttribute('src')) {
        const src = c.getAttribute('src');
        if (/^\s*(javascript|vbscript):/i.test(src))
          c.removeAttribute('src');
        else if (!/^\s*data:/i.test(src))
          c.setAttribute('src', new URL(src, document.baseURI).href);
      }
      if (l && l.nodeType === 1)
        walk(l, c);
    }
  };
  walk(document.documentElement, clone);
  return clone;
}

function toMarkdown(html) {
  const service = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced',
                                        bulletListMarker: '-', emDelimiter: '_' });
  service.use(turndownPluginGfm.gfm);
  return service.turndown(html).trim();
}

const needsClean = wanted.has('cleaned_html') || wanted.has('markdown');
const cleaned = needsClean ? cleanedClone() : null;

if (wanted.has('html'))
  result.content.html = '<!DOCTYPE html>\n' + document.documentElement.outerHTML;
if (wanted.has('cleaned_html'))
  result.content.cleaned_html = cleaned.outerHTML;
if (wanted.has('markdown')) {
  const body = cleaned.querySelector('body') || cleaned;
  result.content.markdown = toMarkdown(body.innerHTML);
}
if (wanted.has('readability')) {
  const article = new Readability(document.cloneNode(true), { charThreshold: 100 }).parse();
  if (article) {
    const parts = [];
    if (article.title)
      parts.push('# ' + article.title);
    if (article.byline)
      parts.push('_' + article.byline + '_');
    parts.push(toMarkdown(article.content || ''));
    result.content.readability = parts.join('\n\n');
  } else {
    result.content.readability = '';
  }
}

const meta = (selector) => {
  const el = document.querySelector(selector);
  return el ? (el.getAttribute('content') || '').trim() : '';
};
const text = document.body ? document.body.innerText || '' : '';
result.metadata.title = document.title || '';
result.metadata.description = meta('meta[name="description" i]') ||
                              meta('meta[property="og:description" i]');
result.metadata.language = (document.documentElement.getAttribute('lang') || '').trim();
result.metadata.wordCount = (text.match(/[\p{L}\p{N}][\p{L}\p{N}'’-]*/gu) || []).length;

const seen = new Set();
for (const a of document.querySelectorAll('a[href]')) {
  let url;
  try {
    url = new URL(a.getAttribute('href'), document.baseURI);
  } catch (e) {
    continue;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    continue;
  url.hash = '';
  if (seen.has(url.href))
    continue;
  seen.add(url.href);
  result.links.push({
    url: url.href,
    text: (a.innerText || a.textContent || '').replace(/\s+/g, ' ').trim().slice(0, 500),
    internal: url.host === location.host,
  });
}

return result;
