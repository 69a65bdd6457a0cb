/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * secret-fields.js: which field a secret may be typed into, and where a
 * filled secret shows on the page.
 *
 * Runs in the "sightline" isolated script world (never the page's own). It
 * installs globalThis.__sight.secretFields once per document:
 *
 *   purposeOf(el)        -> what the field is for, read from the page now:
 *                           { purpose: 'password' | 'one-time-code' |
 *                             'username' | 'email' | 'text' | null, facts }
 *   refusal(el, purpose) -> null when a credential of @purpose may be typed
 *                           into @el, else why not (names both purposes)
 *   regions(args)        -> every box a screenshot must paint over:
 *                           args = { values: [..], fullPage, secure }
 *                           { boxes: [{x, y, width, height}], secure, secret }
 *                           (secure fields too with args.secure; counts of
 *                           the boxes of each kind in the captured area)
 *
 * The values a step filled come in as arguments and are compared here, in
 * this world; only boxes go back out.
 */
(() => {
  'use strict';
  const G = globalThis;
  const VERSION = 1;

  if (G.__sight && G.__sight.secretFields && G.__sight.secretFields.version === VERSION)
    return;
  G.__sight = G.__sight || {};

  const tokens = (el) => (el.getAttribute ('autocomplete') || '').toLowerCase ().split (/\s+/);

  /* A secure input: its characters are drawn as dots, or the page says it
   * holds a password or a one-time code. */
  function isSecure (el) {
    if (el.localName !== 'input')
      return false;
    const ac = tokens (el);
    return el.type === 'password' || ac.includes ('current-password') ||
           ac.includes ('new-password') || ac.includes ('one-time-code');
  }

  /* The purpose table (README, "Secrets"). */
  function purposeOf (el) {
    if (!el || el.localName !== 'input')
      return { purpose: null, facts: el ? '<' + el.localName + '>' : 'nothing' };
    const ac = tokens (el);
    const type = (el.getAttribute ('type') || 'text').toLowerCase ();
    const facts = 'type=' + type + (el.getAttribute ('autocomplete')
                                    ? ', autocomplete=' + el.getAttribute ('autocomplete') : '');
    let purpose = 'text';
    if (ac.includes ('one-time-code'))
      purpose = 'one-time-code';
    else if (isSecure (el))
      purpose = 'password';
    else if (ac.includes ('username'))
      purpose = 'username';
    else if (ac.includes ('email') || el.type === 'email')
      purpose = 'email';
    return { purpose, facts };
  }

  const ACCEPTS = {
    'password': (p) => p === 'password',
    'new-password': (p) => p === 'password',
    'one-time-code': (p) => p === 'one-time-code' || p === 'password',
    'username': (p) => p === 'username' || p === 'email',
    'email': (p) => p === 'username' || p === 'email',
  };

  function refusal (el, purpose) {
    const field = purposeOf (el);
    const accepts = Object.hasOwn (ACCEPTS, purpose) ? ACCEPTS[purpose] : null;
    if (!accepts)
      return 'a credential of purpose "' + purpose + '" is typed into no field';
    if (field.purpose && accepts (field.purpose))
      return null;
    return 'the field is ' + (field.purpose ? 'a ' + field.purpose + ' field' : 'not an input') +
           ' (' + field.facts + '), and a "' + purpose + '" credential goes only into ' +
           (purpose === 'username' || purpose === 'email'
              ? 'an input with autocomplete username or email, or type=email'
              : purpose === 'one-time-code'
                ? 'an input with autocomplete one-time-code or a secure input'
                : 'a secure input (type=password, autocomplete current-password or new-password)');
  }

  /* ---------------------------------------------------------------- */
  /* Where a filled secret shows                                       */

  function regions (args) {
    const values = (args.values || []).filter (v => typeof v === 'string' && v.length > 0);
    const fullPage = !!args.fullPage;
    const secure = !!args.secure;
    const boxes = [];
    const counted = { secure: 0, secret: 0 };
    const holds = (s) => typeof s === 'string' && values.some (v => s.includes (v));

    /* @rect in the frame at @offset → the captured area's CSS pixels; kept
     * when any of it lies in the captured area. */
    function add (rect, offset, kind) {
      if (!rect || rect.width <= 0 || rect.height <= 0)
        return;
      const x = rect.left + offset.x + (fullPage ? scrollX : 0);
      const y = rect.top + offset.y + (fullPage ? scrollY : 0);
      const w = fullPage ? document.documentElement.scrollWidth : innerWidth;
      const h = fullPage ? document.documentElement.scrollHeight : innerHeight;
      if (x >= w || y >= h || x + rect.width <= 0 || y + rect.height <= 0)
        return;
      boxes.push ({ x, y, width: rect.width, height: rect.height });
      counted[kind]++;
    }
    function addElement (el, offset, kind) {
      add (el.getBoundingClientRect (), offset, kind);
    }

    /* Text: the smallest element whose text holds a value, or the value's
     * own run within a text node. */
    function visitText (node, offset) {
      if (node.nodeType === Node.TEXT_NODE) {
        for (const v of values) {
          for (let at = node.data.indexOf (v); at >= 0; at = node.data.indexOf (v, at + 1)) {
            const range = node.ownerDocument.createRange ();
            range.setStart (node, at);
            range.setEnd (node, at + v.length);
            for (const r of range.getClientRects ())
              add (r, offset, 'secret');
          }
        }
        return;
      }
      const fragment = node.nodeType === Node.DOCUMENT_FRAGMENT_NODE;
      if ((node.nodeType !== Node.ELEMENT_NODE && !fragment) || !holds (node.textContent))
        return;
      let inChild = false;
      for (const child of node.childNodes)
        if (holds (child.textContent)) {
          inChild = true;
          visitText (child, offset);
        }
      /* Split over several children ("hun<b>ter2</b>"): the element's box. */
      if (!inChild)
        addElement (fragment ? node.host : node, offset, 'secret');
    }

    function visitRoot (root, offset) {
      const start = root.body || root.documentElement || root;
      if (start && values.length > 0)
        visitText (start, offset);
      const walker = (root.ownerDocument || root).createTreeWalker (root, NodeFilter.SHOW_ELEMENT);
      for (let el = walker.currentNode; el; el = walker.nextNode ()) {
        if (el.nodeType !== Node.ELEMENT_NODE)
          continue;
        const field = el.localName === 'input' || el.localName === 'textarea' ||
                      el.localName === 'select';
        if (isSecure (el) && secure)
          addElement (el, offset, 'secure');
        else if (values.length > 0 &&
                 ((field && holds (el.value)) ||
                  Array.prototype.some.call (el.attributes, a => holds (a.value))))
          /* A field holding a secret, whatever its type now, and text an
           * attribute renders (placeholder, value, CSS attr()). */
          addElement (el, offset, 'secret');
        if (el.shadowRoot)
          visitRoot (el.shadowRoot, offset);
        if ((el.localName === 'iframe' || el.localName === 'frame') && el.contentDocument) {
          const r = el.getBoundingClientRect ();
          visitRoot (el.contentDocument, { x: offset.x + r.left + el.clientLeft,
                                           y: offset.y + r.top + el.clientTop });
        }
      }
    }

    visitRoot (document, { x: 0, y: 0 });
    return { boxes, secure: counted.secure, secret: counted.secret };
  }

  G.__sight.secretFields = { version: VERSION, isSecure, purposeOf, refusal, regions };
}) ();
