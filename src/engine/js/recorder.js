/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * recorder.js: turns a person's interaction with the page into steps.
 *
 * Runs in the "sightline" isolated script world after snapshot.js (it names
 * elements the way an observation does: role, name, and which of several
 * alike). Installed at document start on every page while recording; it only
 * listens (capture phase) and never changes what the page does, except in
 * pick mode, where the next click chooses an element for an assertion
 * instead of reaching the page.
 *
 * Each event goes to the host as one JSON message on the "sightRecorder"
 * script message handler:
 *   { kind: "click"|"dblclick"|"fill"|"select"|"check"|"uncheck"|"press"|
 *           "pick"|"nav",
 *     target: { ref, role, name, nth, count, tag, box: [x,y,w,h] } | null,
 *     value, key, secure, assertion, url }
 * Typing is coalesced: one "fill" per field, sent when the person leaves the
 * field, presses a key that matters, clicks elsewhere or the page unloads.
 * A secure field's value is never sent (only { secure: true }), unless the
 * host asked for it to offer saving it as a credential: then the message
 * also carries it, with the field's purpose (secret-fields.js's table). A
 * fill also names its field's purpose ("email", "username", …) when known.
 *
 * API (globalThis.__sight.recorder):
 *   pick(kind)  the next click picks an element for an assertion of @kind:
 *               "visible", "text", "value" or "checked"
 *   flush()     sends the pending fill now
 */
(() => {
  'use strict';
  const G = globalThis;
  if (G.__sight && G.__sight.recorder)
    return;
  G.__sight = G.__sight || {};

  const SECURE_AUTOCOMPLETE = /(^|\s)(current-password|new-password|one-time-code)(\s|$)/;
  const KEYS = new Set (['Enter', 'Escape', 'Tab']);
  const TEXT_INPUTS = new Set (['', 'text', 'email', 'password', 'search', 'tel', 'url',
                                'number', 'date', 'datetime-local', 'month', 'time', 'week']);
  const ACTIONABLE = 'a[href],button,input,select,textarea,summary,label,[role],[onclick],' +
                     '[tabindex],[contenteditable=""],[contenteditable="true"]';

  let pending = null;     /* { el, target, secure } */
  let picking = null;     /* assertion kind while in pick mode */
  let swallow = false;    /* the click after a pick */

  function post (message) {
    try {
      G.webkit.messageHandlers.sightRecorder.postMessage (JSON.stringify (message));
    } catch (e) {
      /* not recording any more */
    }
  }

  function isSecure (el) {
    return el.localName === 'input' &&
           (el.type === 'password' || SECURE_AUTOCOMPLETE.test (el.autocomplete || ''));
  }

  function isTextField (el) {
    if (el.localName === 'textarea')
      return true;
    if (el.localName === 'input')
      return TEXT_INPUTS.has ((el.getAttribute ('type') || '').toLowerCase ()) ||
             TEXT_INPUTS.has (el.type);
    return el.isContentEditable === true;
  }

  /* Flattened nodes of an observation, in document order. */
  function nodes () {
    const out = [];
    const rec = (n) => {
      if (n.ref !== undefined && n.role !== undefined)
        out.push (n);
      if (n.children)
        for (const c of n.children)
          rec (c);
    };
    rec (G.__sight.snapshot.observe ({ text: 'none', tree: true }).tree);
    return out;
  }

  /* How an observation names @el (or the nearest ancestor it lists). An
   * image or heading inside a link or a clickable card, which the card's
   * name already holds, stands for the card: that is what was clicked. */
  function describe (el) {
    if (!el || !G.__sight.snapshot)
      return null;
    const snapshot = G.__sight.snapshot;
    const all = nodes ();
    const byRef = new Map (all.map ((n) => [n.ref, n]));
    let found = null;
    for (let e = el; e && e.nodeType === 1; e = e.parentElement) {
      const ref = snapshot.refOf (e);
      const node = byRef.get (ref);
      if (!node || node.role === 'generic' && !node.name && !node.clickable)
        continue;
      if (found && (snapshot.isInteractive (found.node) || !found.node.name || !node.name ||
                    !node.name.includes (found.node.name) || !snapshot.isInteractive (node)))
        break;
      found = { ref, node, tag: e.localName };
    }
    if (!found)
      return null;
    const node = found.node;
    const alike = all.filter ((n) => n.role === node.role && (n.name || '') === (node.name || ''));
    return {
      ref: found.ref, role: node.role, name: node.name || '',
      nth: alike.indexOf (node) + 1, count: alike.length,
      tag: found.tag, box: node.box || null,
    };
  }

  /* The control a click or key is about: a label stands for its control. */
  function actionable (el) {
    let e = el && el.nodeType === 1 ? el : el && el.parentElement;
    e = e ? e.closest (ACTIONABLE) || e : null;
    if (e && e.localName === 'label' && e.control)
      return e.control;
    return e;
  }

  function flush () {
    if (!pending)
      return;
    const p = pending;
    pending = null;
    const sf = G.__sight.secretFields;
    const purpose = sf ? sf.purposeOf (p.el).purpose : null;
    if (p.secure && G.__sightRecorderOffersCredentials === true)
      post ({ kind: 'fill', target: p.target, secure: true, purpose,
              value: fieldValue (p.el) });
    else if (p.secure)
      post ({ kind: 'fill', target: p.target, secure: true });
    else
      post ({ kind: 'fill', target: p.target, purpose, value: fieldValue (p.el) });
  }

  function fieldValue (el) {
    return el.isContentEditable ? el.textContent : el.value;
  }

  function onInput (event) {
    const el = event.composedPath ? event.composedPath ()[0] : event.target;
    if (!el || !isTextField (el))
      return;
    if (pending && pending.el !== el)
      flush ();
    if (!pending)
      pending = { el, target: describe (el), secure: isSecure (el) };
  }

  function onChange (event) {
    const el = event.target;
    if (!el || el.nodeType !== 1)
      return;
    if (isTextField (el)) {
      if (pending && pending.el === el)
        flush ();
      return;
    }
    flush ();
    if (el.localName === 'select') {
      const labels = Array.from (el.selectedOptions).map ((o) => o.label || o.text);
      post ({ kind: 'select', target: describe (el), value: labels.join (', ') });
    } else if (el.localName === 'input' && el.type === 'checkbox') {
      post ({ kind: el.checked ? 'check' : 'uncheck', target: describe (el) });
    } else if (el.localName === 'input' && el.type === 'radio' && el.checked) {
      post ({ kind: 'click', target: describe (el) });
    }
  }

  /* Picking happens on mousedown, before a checkbox toggles; the click
   * that follows is swallowed so the page never sees it. */
  function onMouseDown (event) {
    if (!picking)
      return;
    event.preventDefault ();
    event.stopImmediatePropagation ();
    const raw = event.composedPath ? event.composedPath ()[0] : event.target;
    const el = actionable (raw);
    {
      const kind = picking;
      picking = null;
      swallow = true;
      const target = describe (el || raw);
      let text = null, value = null, checked = null;
      if (el) {
        text = (el.innerText || el.textContent || '').trim ().slice (0, 200);
        if ('value' in el && !isSecure (el))
          value = fieldValue (el);
        if ('checked' in el)
          checked = !!el.checked;
        else if (el.getAttribute && el.getAttribute ('aria-checked'))
          checked = el.getAttribute ('aria-checked') === 'true';
      }
      post ({ kind: 'pick', assertion: kind, target, text, value, checked });
    }
  }

  function onClick (event) {
    const raw = event.composedPath ? event.composedPath ()[0] : event.target;
    const el = actionable (raw);
    if (swallow) {
      swallow = false;
      event.preventDefault ();
      event.stopImmediatePropagation ();
      return;
    }
    if (!el)
      return;
    /* Typing into a field and clicking into it are one step: the fill. */
    if (isTextField (el) || el.localName === 'select' || el.localName === 'option')
      return;
    if (el.localName === 'input' && (el.type === 'checkbox' || el.type === 'radio'))
      return;  /* the change event says what happened */
    if (pending && pending.el !== el)
      flush ();
    if (event.detail === 2)
      return;  /* the second click of a double click: dblclick follows */
    post ({ kind: 'click', target: describe (el) });
  }

  function onDblClick (event) {
    const el = actionable (event.target);
    if (!el || picking)
      return;
    post ({ kind: 'dblclick', target: describe (el) });
  }

  function onKeyDown (event) {
    if (!KEYS.has (event.key) || picking)
      return;
    const el = event.composedPath ? event.composedPath ()[0] : event.target;
    flush ();
    const focused = el && el.nodeType === 1 && el !== document.body ? el : null;
    post ({ kind: 'press', key: event.key, target: focused ? describe (focused) : null });
  }

  const opts = { capture: true, passive: false };
  G.addEventListener ('input', onInput, opts);
  G.addEventListener ('change', onChange, opts);
  G.addEventListener ('mousedown', onMouseDown, opts);
  G.addEventListener ('click', onClick, opts);
  G.addEventListener ('dblclick', onDblClick, opts);
  G.addEventListener ('keydown', onKeyDown, opts);
  G.addEventListener ('focusout', (event) => {
    if (pending && event.target === pending.el)
      flush ();
  }, opts);
  G.addEventListener ('pagehide', flush, opts);
  G.addEventListener ('beforeunload', flush, opts);

  G.__sight.recorder = {
    pick (kind) {
      picking = kind || 'visible';
      return true;
    },
    flush () {
      flush ();
      return true;
    },
  };
}) ();
