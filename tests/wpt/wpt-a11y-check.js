// SPDX-License-Identifier: GPL-3.0-or-later
// The WPT accessibility harness's page side: the body of an async function
// run in Sightline's isolated world after snapshot.js, on one page of
// ../shared/wpt-a11y. It reads the page's expectations (as its README says
// they are written) and answers each through __sight.snapshot.describe(),
// the observation's own roles and names. Returns
//   { checks: [{ kind: "name" | "role", expected, actual, ok, test, html }] }.

// The pages' scripts may still be building their test elements: wait for
// two frames after the load, with a deadline.
await new Promise ((resolve) => {
  const deadline = setTimeout (resolve, 2000);
  requestAnimationFrame (() => requestAnimationFrame (() => { clearTimeout (deadline); resolve (); }));
});

const S = __sight.snapshot;
const checks = [];
// The expected name is compared as written; the computed one with runs of
// ASCII whitespace (not NBSP) made one space and trimmed.
const asciiNorm = (s) => s.replace (/[\t\n\f\r ]+/g, ' ').replace (/^ | $/g, '');
// Computed-role spellings that name the same role: ARIA 1.3 computes
// "image" for img (img is its synonym); "none" is how Chromium spells a
// role-less (generic) element, which the README's generic helpers accept
// too, so an expected "none" is met by generic.
const SYNONYMS = { image: 'img', img: 'img', presentation: 'none' };
const same = (a, b) => (SYNONYMS[a] || a) === (SYNONYMS[b] || b) ||
  ((b === 'none' || b === '') && a === 'generic');
// Values that mark what the specs leave open: no answer can meet them, so
// they are counted apart, not as failures.
const OPEN = new Set (['indeterminate', 'SPEC_AMBIGUOUS_LOG_VALUE']);

function testName (el, fallback) {
  return el.getAttribute ('data-testname') || fallback;
}

function html (el) {
  const h = el.outerHTML.replace (/\s+/g, ' ');
  return h.length > 300 ? h.slice (0, 300) + '…' : h;
}

function check (kind, el, expected, accepted) {
  let actual;
  try {
    const d = S.describe (el);
    actual = kind === 'name' ? asciiNorm (d.name) : d.role;
  } catch (e) {
    actual = 'exception: ' + e.message;
  }
  const ok = accepted ? accepted.some ((r) => same (actual, r)) : kind === 'name'
    ? actual === expected : same (actual, expected);
  checks.push ({ kind, expected, actual, ok, open: OPEN.has (expected),
                 test: testName (el, expected), html: html (el) });
}

for (const el of document.querySelectorAll ('[data-expectedlabel], [data-expectedname]')) {
  const attr = el.hasAttribute ('data-expectedlabel') ? 'data-expectedlabel' : 'data-expectedname';
  check ('name', el, el.getAttribute (attr));
}
for (const el of document.querySelectorAll ('[data-expectedrole]'))
  check ('role', el, el.getAttribute ('data-expectedrole'));

// Role lists the script names rather than the markup.
const scripts = Array.from (document.querySelectorAll ('script:not([src])'), (s) => s.textContent)
  .join ('\n');
const strings = (list) => Array.from (list.matchAll (/["']([^"']*)["']/g), (m) => m[1]);
for (const m of scripts.matchAll (/verifyGenericRolesBySelector\(\s*["']([^"']+)["']\s*\)/g))
  for (const el of document.querySelectorAll (m[1]))
    check ('role', el, 'generic', ['generic', '', 'none']);
for (const m of scripts.matchAll (
  /verifyRoleOrVariantRolesBySelector\(\s*["']([^"']+)["']\s*,\s*\[([^\]]*)\]\s*\)/g)) {
  if (m[1] === '.ex-generic' && /verifyGenericRolesBySelector/.test (scripts))
    continue;
  let els;
  try { els = document.querySelectorAll (m[1]); } catch (e) { continue; }
  const roles = strings (m[2]);
  for (const el of els)
    check ('role', el, roles.join (' | '), roles);
}
for (const m of scripts.matchAll (/assignAndVerifyRolesByRoleNames\(\s*\[([^\]]*)\]\s*\)/g)) {
  for (const role of strings (m[1])) {
    const el = document.createElement ('div');
    el.append ('x');
    el.setAttribute ('role', role);
    el.setAttribute ('data-testname', 'role: ' + role);
    document.body.append (el);
    check ('role', el, role.toLowerCase ());
  }
}
return { checks };
