// SPDX-License-Identifier: GPL-3.0-or-later
// The smoke test's basic accessibility check: the body of an async function
// run in Sightline's isolated world on the start page. It returns
// { rules: [...], findings: [{ rule, severity, message, count, examples }] }.
// The rules, and why each is here (WCAG 2.2 success criteria in brackets):
//   document-lang     <html> has a valid lang attribute            [3.1.1]
//   document-title    the page has a non-empty <title>             [2.4.2]
//   image-alt         <img> without alt (alt="" marks decoration)  [1.1.1]
//   control-name      form controls without an accessible name     [4.1.2, 3.3.2]
//   button-name       buttons without an accessible name           [4.1.2]
//   link-name         links without an accessible name             [2.4.4, 4.1.2]
//   heading-order     heading levels that skip (h2 then h4)        [1.3.1]
//   page-heading      no h1 on the page                            [2.4.6]
//   duplicate-id      ids used by more than one element            [4.1.1 (as referenced by labels)]
//   frame-title       iframes without a title                      [4.1.2]
// Only what a person or assistive technology can reach counts: hidden
// elements are skipped. Runs after snapshot.js, whose names it uses.

const findings = [];
const MAX_EXAMPLES = 5;

function visible(el) {
  if (el.closest('[hidden], [aria-hidden="true"], [inert]'))
    return false;
  const style = getComputedStyle(el);
  if (style.display === 'none' || style.visibility === 'hidden')
    return false;
  return el.getClientRects().length > 0 || el.tagName === 'AREA';
}

function describe(el) {
  let text = '<' + el.tagName.toLowerCase();
  if (el.id)
    text += ' id="' + el.id + '"';
  const cls = (el.getAttribute('class') || '').trim().split(/\s+/).filter(Boolean).slice(0, 2);
  if (cls.length)
    text += ' class="' + cls.join(' ') + '"';
  for (const attr of ['name', 'type', 'href', 'src']) {
    const v = el.getAttribute(attr);
    if (v)
      text += ' ' + attr + '="' + v.slice(0, 80) + '"';
  }
  return text + '>';
}

// Names are the observation's own (snapshot.js runs first): one
// computation of accname 1.2 for the model, the inspector and this check.
function accessibleName(el) {
  return __sight.snapshot.describe(el).name;
}

function report(rule, severity, message, elements) {
  if (elements.length === 0)
    return;
  findings.push({
    rule, severity, message, count: elements.length,
    examples: elements.slice(0, MAX_EXAMPLES).map(describe),
  });
}

const lang = (document.documentElement.getAttribute('lang') || '').trim();
if (!lang)
  findings.push({ rule: 'document-lang', severity: 'serious', count: 1, examples: ['<html>'],
                  message: 'The page does not declare its language (<html lang>).' });
else if (!/^[a-zA-Z]{2,3}(-[a-zA-Z0-9]{1,8})*$/.test(lang))
  findings.push({ rule: 'document-lang', severity: 'serious', count: 1, examples: ['<html>'],
                  message: 'The page language "' + lang + '" is not a valid language tag.' });

if (!(document.title || '').trim())
  findings.push({ rule: 'document-title', severity: 'serious', count: 1, examples: ['<title>'],
                  message: 'The page has no title.' });

report('image-alt', 'critical', 'Images without alternative text.',
       Array.from(document.querySelectorAll('img:not([alt])')).filter((img) =>
         visible(img) && !img.getAttribute('aria-label') && !img.getAttribute('aria-labelledby') &&
         !['presentation', 'none'].includes(img.getAttribute('role'))));

const controls = Array.from(document.querySelectorAll(
  'input:not([type=hidden]):not([type=submit]):not([type=reset]):not([type=button]):not([type=image]), select, textarea'));
report('control-name', 'critical', 'Form controls without a label.',
       controls.filter((el) => visible(el) && !accessibleName(el)));

const buttons = Array.from(document.querySelectorAll(
  'button, [role=button], input[type=submit], input[type=reset], input[type=button], input[type=image]'));
report('button-name', 'critical', 'Buttons without an accessible name.',
       buttons.filter((el) => visible(el) && !accessibleName(el)));

report('link-name', 'serious', 'Links without an accessible name.',
       Array.from(document.querySelectorAll('a[href]')).filter((el) => visible(el) && !accessibleName(el)));

const headings = Array.from(document.querySelectorAll('h1, h2, h3, h4, h5, h6, [role=heading]'))
  .filter(visible);
const skipped = [];
let previous = 0;
for (const h of headings) {
  const level = h.getAttribute('role') === 'heading'
    ? parseInt(h.getAttribute('aria-level') || '2', 10) : parseInt(h.tagName.slice(1), 10);
  if (previous && level > previous + 1)
    skipped.push(h);
  previous = level;
}
report('heading-order', 'moderate', 'Heading levels skip (for example an h2 followed by an h4).',
       skipped);
if (!headings.some((h) => h.tagName === 'H1' || (h.getAttribute('role') === 'heading' &&
                                                  h.getAttribute('aria-level') === '1')))
  findings.push({ rule: 'page-heading', severity: 'moderate', count: 1, examples: [],
                  message: 'The page has no level-one heading.' });

const byId = new Map();
for (const el of document.querySelectorAll('[id]')) {
  const list = byId.get(el.id) || [];
  list.push(el);
  byId.set(el.id, list);
}
report('duplicate-id', 'minor', 'Ids used by more than one element.',
       Array.from(byId.values()).filter((list) => list.length > 1).map((list) => list[1]));

report('frame-title', 'serious', 'Frames without a title.',
       Array.from(document.querySelectorAll('iframe, frame')).filter((el) =>
         visible(el) && !(el.getAttribute('title') || '').trim() && !el.getAttribute('aria-label')));

return {
  rules: ['document-lang', 'document-title', 'image-alt', 'control-name', 'button-name',
          'link-name', 'heading-order', 'page-heading', 'duplicate-id', 'frame-title'],
  findings,
};
