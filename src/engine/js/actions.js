/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * actions.js: acting on the page the way a person does.
 *
 * Runs in the "sightline" isolated script world after snapshot.js (whose
 * __sight.snapshot.resolve() maps a ref to its element). It installs
 * globalThis.__sight.actions once per document:
 *
 *   perform(args)  args = { ref, action: { type, ... }, timeout, settle }
 *                  -> { ok: true, descriptor, detail, settle, timing } or
 *                     { ok: false, code, message }
 *   tapAt(args)    args = { x, y, timeout, settle }  (viewport CSS pixels)
 *                  With settle (quiet()'s args but the timeout), both wait
 *                  after acting until the page is done with the action
 *                  (settle: quiet()'s answer), so the common case settles in
 *                  the same round trip.
 *   quiet(args)    resolves once the page is done with the action (see
 *                  quiet() below)
 *
 * Input path: WebKitGTK 6 offers no public way to inject platform input into
 * a web view (GTK 4 events can't be constructed, and WebKit's automation
 * input needs a WebDriver session), so pointer, mouse and keyboard events are
 * synthesized here and have isTrusted false. Text goes in through
 * document.execCommand('insertText'), whose beforeinput/input events are the
 * editor's own (isTrusted true) and which updates controlled inputs of React,
 * Vue and Angular as typing does. Default actions that synthetic events don't
 * trigger by themselves are performed as the browser would: focus on
 * mousedown, implicit form submission on Enter, toggles on Space, focus moves
 * on Tab.
 */
(() => {
  'use strict';
  const G = globalThis;
  const VERSION = 1;

  if (G.__sight && G.__sight.actions && G.__sight.actions.version === VERSION)
    return;
  G.__sight = G.__sight || {};

  class ActionError extends Error {
    constructor (code, message, retryable) {
      super (message);
      this.code = code;
      this.retryable = !!retryable;
    }
  }

  const nextFrame = () => new Promise (resolve => {
    let done = false;
    const finish = () => { if (!done) { done = true; resolve (); } };
    requestAnimationFrame (finish);
    /* Hidden documents don't run animation frames. Otherwise wait for a real
     * one: animations only advance in rendering updates, so two reads without
     * one in between would call anything stable. */
    setTimeout (finish, document.visibilityState === 'hidden' ? 50 : 1000);
  });
  const sleep = (ms) => new Promise (resolve => setTimeout (resolve, ms));
  const norm = (s) => String (s || '').replace (/\s+/g, ' ').trim ();

  /* ---------------------------------------------------------------- */
  /* Names for errors and descriptors                                  */

  const IMPLICIT_ROLES = {
    A: (el) => el.hasAttribute ('href') ? 'link' : 'generic',
    BUTTON: () => 'button', SELECT: (el) => el.multiple || el.size > 1 ? 'listbox' : 'combobox',
    TEXTAREA: () => 'textbox', H1: () => 'heading', H2: () => 'heading', H3: () => 'heading',
    H4: () => 'heading', H5: () => 'heading', H6: () => 'heading', IMG: () => 'img',
    NAV: () => 'navigation', MAIN: () => 'main', DIALOG: () => 'dialog', FORM: () => 'form',
    UL: () => 'list', OL: () => 'list', LI: () => 'listitem', TABLE: () => 'table',
    CANVAS: () => 'canvas', HEADER: () => 'banner', FOOTER: () => 'contentinfo',
    SECTION: () => 'region', ASIDE: () => 'complementary', OPTION: () => 'option',
    INPUT: (el) => ({ checkbox: 'checkbox', radio: 'radio', button: 'button', submit: 'button',
                      reset: 'button', image: 'button', range: 'slider', number: 'spinbutton',
                      search: 'searchbox', file: 'button' })[el.type] || 'textbox',
  };

  function snapshotNode (el) {
    const snap = G.__sight.snapshot;
    if (!snap || !snap.observe || !snap.refOf)
      return null;
    try {
      const ref = snap.refOf (el);
      const result = snap.observe ({ root: ref, text: 'none', tree: true });
      const stack = [result.tree];
      while (stack.length) {
        const node = stack.pop ();
        if (node && node.ref === ref)
          return node;
        if (node && node.children)
          stack.push (...node.children);
      }
    } catch (e) {
    }
    return null;
  }

  function roleAndName (el, quick) {
    const node = quick ? null : snapshotNode (el);
    if (node && node.role)
      return { role: node.role, name: node.name || '' };
    const explicit = (el.getAttribute ('role') || '').split (/\s+/)[0];
    const implicit = IMPLICIT_ROLES[el.tagName];
    const role = explicit || (implicit ? implicit (el) : 'generic');
    let name = el.getAttribute ('aria-label') || '';
    if (!name && el.labels && el.labels.length)
      name = el.labels[0].textContent;
    if (!name)
      name = el.getAttribute ('title') || el.getAttribute ('alt') || el.textContent ||
             el.getAttribute ('placeholder') || '';
    return { role, name: norm (name).slice (0, 80) };
  }

  function describeBriefly (el) {
    const { role, name } = roleAndName (el);
    return name ? role + ' "' + name + '"' : role + ' <' + el.tagName.toLowerCase () + '>';
  }

  function cssPath (el) {
    const parts = [];
    for (let e = el; e && e.nodeType === 1 && e !== e.ownerDocument.documentElement;
         e = e.parentElement) {
      if (e.id && /^[A-Za-z][\w-]*$/.test (e.id)) {
        parts.unshift ('#' + e.id);
        break;
      }
      let part = e.tagName.toLowerCase ();
      const parent = e.parentElement;
      if (parent) {
        const same = Array.from (parent.children).filter (c => c.tagName === e.tagName);
        if (same.length > 1)
          part += ':nth-of-type(' + (same.indexOf (e) + 1) + ')';
      }
      parts.unshift (part);
    }
    return parts.join (' > ');
  }

  function framePath (el) {
    const path = [];
    for (let win = el.ownerDocument.defaultView; win && win !== win.top; win = win.parent) {
      const frame = win.frameElement;
      if (!frame)
        break;
      path.unshift (cssPath (frame));
    }
    return path;
  }

  function descriptor (el) {
    const { role, name } = roleAndName (el);
    const box = el.getBoundingClientRect ();
    const text = norm (el.innerText || el.textContent || el.value || '').slice (0, 120);
    let nth = 0;
    /* nth among elements of the same tag that look the same (quick names). */
    const doc = el.ownerDocument;
    const same = doc.getElementsByTagName (el.tagName);
    const mine = roleAndName (el, true);
    if (same.length < 2000) {
      for (const other of same) {
        if (other === el)
          break;
        const o = roleAndName (other, true);
        if (o.role === mine.role && o.name === mine.name)
          nth++;
      }
    }
    const testIdAttr = ['data-testid', 'data-test-id', 'data-test', 'data-cy']
      .find (a => el.hasAttribute (a));
    return {
      ref: G.__sight.snapshot && G.__sight.snapshot.refOf ? G.__sight.snapshot.refOf (el) : null,
      role, name, nth, text,
      tag: el.tagName.toLowerCase (),
      testId: testIdAttr ? el.getAttribute (testIdAttr) : null,
      css: cssPath (el),
      frame: framePath (el),
      box: { x: Math.round (box.x), y: Math.round (box.y),
             width: Math.round (box.width), height: Math.round (box.height) },
      viewport: { width: innerWidth, height: innerHeight },
    };
  }

  /* ---------------------------------------------------------------- */
  /* Actionability                                                     */

  function resolveRef (ref) {
    const snap = G.__sight.snapshot;
    if (!snap || !snap.resolve)
      throw new ActionError ('ACTION_FAILED', 'No observation of this page yet: observe it, then ' +
                             'act on a ref from that observation');
    const el = snap.resolve (ref);
    if (!el)
      throw new ActionError ('ACTION_FAILED', 'The element ' + ref + ' is not on the page any ' +
                             'more; observe the page again', true);
    return el;
  }

  function isVisible (el) {
    if (!el.isConnected)
      return false;
    const style = getComputedStyle (el);
    if (style.visibility === 'hidden' || style.visibility === 'collapse')
      return false;
    const rect = el.getBoundingClientRect ();
    if (rect.width === 0 && rect.height === 0 && el.tagName !== 'OPTION')
      return false;
    return !(el.checkVisibility && !el.checkVisibility ({ opacityProperty: false }));
  }

  function isDisabled (el) {
    if (el.matches (':disabled'))
      return true;
    for (let e = el; e; e = e.parentElement)
      if (e.getAttribute ('aria-disabled') === 'true')
        return true;
    return false;
  }

  function isEditable (el) {
    if (el.isContentEditable)
      return true;
    if (el.tagName === 'TEXTAREA')
      return !el.readOnly;
    if (el.tagName === 'INPUT')
      return !el.readOnly && !['checkbox', 'radio', 'button', 'submit', 'reset', 'file', 'image',
                               'range', 'color', 'hidden'].includes (el.type);
    return false;
  }

  /* The element's own frame's coordinates → the top viewport's. */
  function frameOffset (el) {
    let x = 0, y = 0;
    for (let win = el.ownerDocument.defaultView; win && win !== win.top; win = win.parent) {
      const frame = win.frameElement;
      if (!frame)
        break;
      const r = frame.getBoundingClientRect ();
      x += r.left + frame.clientLeft;
      y += r.top + frame.clientTop;
    }
    return { x, y };
  }

  function clickPoint (el, position) {
    const rect = el.getBoundingClientRect ();
    if (position)
      return { x: rect.left + position.x, y: rect.top + position.y };
    return { x: rect.left + rect.width / 2, y: rect.top + rect.height / 2 };
  }

  function hitTarget (el, point) {
    const doc = el.ownerDocument;
    let hit = doc.elementFromPoint (point.x, point.y);
    while (hit && hit.shadowRoot) {
      const inner = hit.shadowRoot.elementFromPoint (point.x, point.y);
      if (!inner || inner === hit)
        break;
      hit = inner;
    }
    return hit;
  }

  function contains (el, other) {
    for (let e = other; e; e = e.parentNode || e.host)
      if (e === el)
        return true;
    return false;
  }

  /* Waits until @el passes @checks or the deadline passes; throws the last
   * reason. Checks: visible, stable, enabled, editable, receives (hit test). */
  async function waitActionable (el, checks, deadline, position) {
    let reason = null;
    for (;;) {
      reason = null;
      if (!el.isConnected)
        throw new ActionError ('ACTION_FAILED', 'The element was removed from the page', true);
      if (checks.visible && !isVisible (el))
        reason = 'it is not visible';
      else if (checks.enabled && isDisabled (el))
        reason = 'it is disabled';
      else if (checks.editable && !isEditable (el))
        reason = 'it is not editable';
      if (!reason && (checks.stable || checks.receives)) {
        /* Scroll only when the element is not wholly in the viewport already, as a
         * person would (and without the extra frame a scroll costs). */
        const r = el.getBoundingClientRect ();
        const win = el.ownerDocument.defaultView;
        if (r.top < 0 || r.left < 0 || r.bottom > win.innerHeight || r.right > win.innerWidth)
          el.scrollIntoView ({ block: 'center', inline: 'center', behavior: 'instant' });
        if (checks.stable && framesMatter (hooks ('state'))) {
          /* The box at the last rendering update and at the next one: two
           * animation frames, so anything animating shows as moving. With
           * nothing animating and no frame callback, nothing moves it. */
          const a = el.getBoundingClientRect ();
          await nextFrame ();
          const b = el.getBoundingClientRect ();
          if (a.x !== b.x || a.y !== b.y || a.width !== b.width || a.height !== b.height)
            reason = 'it is still moving';
        }
        if (!reason && checks.receives) {
          const point = clickPoint (el, position);
          const hit = hitTarget (el, point);
          if (!hit)
            reason = 'it is outside the viewport';
          else if (!contains (el, hit) && !(el.tagName === 'LABEL' && el.control === hit) &&
                   !(hit.tagName === 'LABEL' && hit.control === el)) {
            let cover = listedAncestor (hit) || hit;
            /* Name the covering control or container, not its innermost span. */
            for (let e = hit; cover === hit && e && e !== e.ownerDocument.body;
                 e = e.parentElement)
              if (e.getAttribute ('role') || /^(DIALOG|ASIDE|SECTION|FORM|NAV|HEADER|FOOTER)$/
                    .test (e.tagName) || getComputedStyle (e).position === 'fixed') {
                cover = e;
                break;
              }
            reason = 'it is covered by ' + describeBriefly (cover);
          }
        }
      }
      if (!reason)
        return;
      if (performance.now () >= deadline)
        throw new ActionError ('ACTION_FAILED', describeBriefly (el) + ' cannot be acted on: ' +
                               reason);
      await sleep (50);
    }
  }

  /* ---------------------------------------------------------------- */
  /* Events                                                            */

  const MODIFIERS = { Alt: 'altKey', Control: 'ctrlKey', Meta: 'metaKey', Shift: 'shiftKey' };

  function modifierInit (mods) {
    const init = {};
    for (const m of mods || [])
      if (MODIFIERS[m])
        init[MODIFIERS[m]] = true;
    return init;
  }

  const BUTTONS = { left: 0, middle: 1, right: 2 };

  function pointerSequenceTarget (el, point) {
    return hitTarget (el, point) || el;
  }

  function fireMouse (target, type, point, extra) {
    const win = target.ownerDocument.defaultView;
    const init = Object.assign ({
      bubbles: true, cancelable: true, composed: true, view: win,
      clientX: point.x, clientY: point.y, screenX: point.x, screenY: point.y,
      detail: 1,
    }, extra);
    const Ctor = type.startsWith ('pointer') ? win.PointerEvent || win.MouseEvent
               : type === 'wheel' ? win.WheelEvent : win.MouseEvent;
    if (type.startsWith ('pointer'))
      Object.assign (init, { pointerId: 1, pointerType: 'mouse', isPrimary: true });
    if (type === 'mouseenter' || type === 'mouseleave' || type === 'pointerenter' ||
        type === 'pointerleave')
      init.bubbles = false;
    return target.dispatchEvent (new Ctor (type, init));
  }

  let hovered = null;

  function moveTo (target, point, mods) {
    const extra = Object.assign ({ buttons: 0 }, mods);
    if (hovered !== target) {
      if (hovered && hovered.isConnected) {
        fireMouse (hovered, 'pointerout', point, extra);
        fireMouse (hovered, 'pointerleave', point, extra);
        fireMouse (hovered, 'mouseout', point, extra);
        fireMouse (hovered, 'mouseleave', point, extra);
      }
      fireMouse (target, 'pointerover', point, extra);
      fireMouse (target, 'pointerenter', point, extra);
      fireMouse (target, 'mouseover', point, extra);
      fireMouse (target, 'mouseenter', point, extra);
      hovered = target;
    }
    fireMouse (target, 'pointermove', point, extra);
    fireMouse (target, 'mousemove', point, extra);
  }

  function focusable (el) {
    for (let e = el; e; e = e.parentElement) {
      if (e.tabIndex >= 0 || e.isContentEditable || e.matches ('a[href], button, input, select, ' +
                                                             'textarea, [tabindex]'))
        return e;
    }
    return null;
  }

  function clickAt (target, point, options) {
    const mods = modifierInit (options.modifiers);
    const button = BUTTONS[options.button || 'left'] ?? 0;
    const count = Math.max (1, Math.min (3, options.clickCount || 1));
    const buttonsDown = button === 0 ? 1 : button === 1 ? 4 : 2;
    moveTo (target, point, mods);
    for (let i = 1; i <= count; i++) {
      const down = Object.assign ({ button, buttons: buttonsDown, detail: i }, mods);
      const up = Object.assign ({ button, buttons: 0, detail: i }, mods);
      const pd = fireMouse (target, 'pointerdown', point, down);
      const md = pd ? fireMouse (target, 'mousedown', point, down) : true;
      if (md && i === 1) {
        const f = focusable (target);
        if (f && f !== target.ownerDocument.activeElement)
          f.focus ();
        else if (!f && target.ownerDocument.activeElement &&
                 target.ownerDocument.activeElement !== target.ownerDocument.body)
          target.ownerDocument.activeElement.blur ();
      }
      fireMouse (target, 'pointerup', point, up);
      fireMouse (target, 'mouseup', point, up);
      if (button === 0) {
        /* A dispatched click runs the element's activation behaviour:
         * links follow, checkboxes toggle, submit buttons submit. */
        fireMouse (target, 'click', point, up);
      } else if (button === 2) {
        fireMouse (target, 'contextmenu', point, up);
      } else {
        fireMouse (target, 'auxclick', point, up);
      }
      if (i === 2 && button === 0)
        fireMouse (target, 'dblclick', point, Object.assign ({ button, buttons: 0, detail: 2 },
                                                              mods));
    }
  }

  /* Keys */

  const KEY_CODES = {
    Enter: 13, Tab: 9, Escape: 27, Backspace: 8, Delete: 46, ' ': 32, Space: 32,
    ArrowLeft: 37, ArrowUp: 38, ArrowRight: 39, ArrowDown: 40, Home: 36, End: 35,
    PageUp: 33, PageDown: 34, Shift: 16, Control: 17, Alt: 18, Meta: 91,
  };

  function keyInfo (name) {
    if (name === 'Space')
      name = ' ';
    const code = name.length === 1
      ? (/[a-z]/i.test (name) ? 'Key' + name.toUpperCase ()
         : /[0-9]/.test (name) ? 'Digit' + name : name === ' ' ? 'Space' : '')
      : name;
    const keyCode = KEY_CODES[name] ?? (name.length === 1 ? name.toUpperCase ().charCodeAt (0) : 0);
    return { key: name, code, keyCode };
  }

  function fireKey (target, type, info, mods) {
    const win = target.ownerDocument.defaultView;
    const event = new win.KeyboardEvent (type, Object.assign ({
      key: info.key, code: info.code, bubbles: true, cancelable: true, composed: true,
      view: win, keyCode: info.keyCode, which: info.keyCode,
      charCode: type === 'keypress' ? info.key.charCodeAt (0) : 0,
    }, mods));
    return target.dispatchEvent (event);
  }

  function activeTarget (doc) {
    let el = doc.activeElement || doc.body;
    while (el && el.shadowRoot && el.shadowRoot.activeElement)
      el = el.shadowRoot.activeElement;
    return el || doc.body;
  }

  function insertText (doc, text) {
    /* The editor's own path: trusted beforeinput/input, undo, selection. */
    if (doc.execCommand ('insertText', false, text))
      return;
    const el = activeTarget (doc);
    if ('value' in el) {
      const start = el.selectionStart ?? el.value.length;
      const end = el.selectionEnd ?? el.value.length;
      el.setRangeText (text, start, end, 'end');
      el.dispatchEvent (new InputEvent ('input', { bubbles: true, inputType: 'insertText',
                                                   data: text }));
    }
  }

  function tabbables (doc) {
    return Array.from (doc.querySelectorAll ('a[href], button, input, select, textarea, ' +
                                             '[tabindex], [contenteditable=""], ' +
                                             '[contenteditable=true]'))
      .filter (e => e.tabIndex >= 0 && !e.disabled && isVisible (e))
      .sort ((a, b) => (a.tabIndex || 1e9) - (b.tabIndex || 1e9));
  }

  /* Presses one key or chord, such as "Enter" or "Control+A", on the focus. */
  function pressChord (doc, chord) {
    const parts = chord === '+' ? ['+'] : chord.split ('+').filter (p => p.length);
    if (!parts.length)
      throw new ActionError ('INVALID_ARGUMENT', 'Empty key: ' + JSON.stringify (chord));
    let key = parts.pop ();
    const mods = {};
    for (const m of parts) {
      const name = m === 'Ctrl' ? 'Control' : m === 'Cmd' ? 'Meta' : m;
      if (!MODIFIERS[name])
        throw new ActionError ('INVALID_ARGUMENT', 'Unknown modifier ' + JSON.stringify (m));
      mods[MODIFIERS[name]] = true;
    }
    /* "Control+A" is the A key: key "a" unless Shift is held. */
    if (parts.length && key.length === 1 && !mods.shiftKey)
      key = key.toLowerCase ();
    const info = keyInfo (key);
    const target = activeTarget (doc);
    const printable = info.key.length === 1 && !mods.ctrlKey && !mods.metaKey && !mods.altKey;
    const allowed = fireKey (target, 'keydown', info, mods);
    if (allowed) {
      if (printable) {
        if (fireKey (target, 'keypress', info, mods) && (isEditable (target)))
          insertText (doc, mods.shiftKey ? info.key.toUpperCase () : info.key);
        else if (info.key === ' ' && target.matches ('button, input[type=checkbox], ' +
                                                     'input[type=radio], input[type=button], ' +
                                                     'input[type=submit], [role=button], ' +
                                                     '[role=checkbox]'))
          target.click ();
      } else if ((mods.ctrlKey || mods.metaKey) && info.key.toLowerCase () === 'a') {
        if (isEditable (target) && target.select)
          target.select ();
        else
          doc.execCommand ('selectAll');
      } else {
        defaultKeyAction (doc, target, info.key, mods);
      }
    }
    fireKey (target, 'keyup', info, mods);
  }

  function defaultKeyAction (doc, target, key, mods) {
    switch (key) {
    case 'Enter':
      if (fireKey (target, 'keypress', keyInfo ('Enter'), mods) === false)
        return;
      if (target.tagName === 'TEXTAREA' || target.isContentEditable)
        doc.execCommand ('insertLineBreak');
      else if (target.tagName === 'INPUT' && target.form &&
               !['button', 'reset', 'checkbox', 'radio', 'file'].includes (target.type))
        target.form.requestSubmit ();
      else if (target.matches ('a[href], button, input[type=submit], input[type=button], ' +
                               '[role=button], [role=link]'))
        target.click ();
      break;
    case 'Backspace':
      if (isEditable (target))
        doc.execCommand ('delete');
      break;
    case 'Delete':
      if (isEditable (target))
        doc.execCommand ('forwardDelete');
      break;
    case 'Tab': {
      const list = tabbables (doc);
      if (!list.length)
        break;
      const i = list.indexOf (target);
      const next = mods.shiftKey ? list[(i <= 0 ? list.length : i) - 1]
                                 : list[(i + 1) % list.length];
      next.focus ();
      break;
    }
    case 'Escape':
      break;
    default:
      break;
    }
  }

  /* ---------------------------------------------------------------- */
  /* Actions                                                           */

  function optionMatches (option, wanted) {
    return option.value === wanted || norm (option.label) === norm (wanted) ||
           norm (option.textContent) === norm (wanted);
  }

  const ACTIONS = {
    click: { checks: { visible: true, stable: true, enabled: true, receives: true },
      run (el, a) {
        const point = clickPoint (el, a.position);
        clickAt (pointerSequenceTarget (el, point), point, a);
        return { point };
      } },
    hover: { checks: { visible: true, stable: true, receives: true },
      run (el, a) {
        const point = clickPoint (el, a.position);
        moveTo (pointerSequenceTarget (el, point), point, modifierInit (a.modifiers));
        return { point };
      } },
    focus: { checks: {},
      run (el) {
        el.focus ();
        return { focused: el.ownerDocument.activeElement === el };
      } },
    scrollIntoView: { checks: { visible: true },
      run (el) {
        el.scrollIntoView ({ block: 'center', inline: 'center', behavior: 'instant' });
        return { scrollX, scrollY };
      } },
    fill: { checks: { visible: true, enabled: true, editable: true },
      run (el, a) {
        const value = String (a.value ?? a.text ?? '');
        el.focus ();
        if (el.isContentEditable) {
          el.ownerDocument.execCommand ('selectAll');
        } else {
          el.select ();
        }
        if (value === '')
          el.ownerDocument.execCommand ('delete');
        else
          insertText (el.ownerDocument, value);
        if ('value' in el && el.value !== value && !el.isContentEditable) {
          /* Inputs whose type rejects typed text (date, number in some
           * locales): set the value as the browser's picker would. */
          el.value = value;
          el.dispatchEvent (new Event ('input', { bubbles: true }));
        }
        el.dispatchEvent (new Event ('change', { bubbles: true }));
        return { value: el.type === 'password' ? null : (el.value ?? el.textContent) };
      } },
    /* A secret: only into an enabled, editable field of its purpose, as the
     * page has it now (secret-fields.js); refused with nothing typed. */
    fillSecret: { checks: {},
      async run (el, a, deadline) {
        const fields = G.__sight.secretFields;
        const refuse = (why) => new ActionError ('POLICY_DENIED', 'The secret is not typed into ' +
                                                 describeBriefly (el) + ': ' + why);
        if (!fields)
          throw refuse ('the field check is not loaded');
        if (el.localName !== 'input')
          throw refuse (fields.refusal (el, a.purpose));
        /* Waited for while it is not yet shown, as any fill; a field shown
         * disabled or read-only is refused at once, not after the timeout. */
        try {
          await waitActionable (el, { visible: true }, deadline);
        } catch (e) {
          throw refuse (String (e.message).replace (/^.* cannot be acted on: /, ''));
        }
        if (isDisabled (el))
          throw refuse ('it is disabled');
        if (!isEditable (el))
          throw refuse ('it is not editable');
        const why = fields.refusal (el, a.purpose);
        if (why)
          throw refuse (why);
        ACTIONS.fill.run (el, a);
        return {};
      } },
    type: { checks: { visible: true, enabled: true, editable: true },
      async run (el, a) {
        const text = String (a.text ?? a.value ?? '');
        if (el.ownerDocument.activeElement !== el)
          el.focus ();
        for (const ch of text) {
          pressChord (el.ownerDocument, ch === '+' ? '+' : ch === '\n' ? 'Enter' : ch);
          if (a.delay)
            await sleep (a.delay);
        }
        return { typed: text.length };
      } },
    press: { checks: { visible: true },
      async run (el, a) {
        const keys = Array.isArray (a.keys) ? a.keys : [a.keys ?? a.key];
        /* With no ref the keys go to whatever has the focus. */
        if (el !== el.ownerDocument.documentElement && el.ownerDocument.activeElement !== el)
          el.focus ();
        for (const chord of keys)
          pressChord (el.ownerDocument, String (chord));
        return { keys };
      } },
    select: { checks: { visible: true, enabled: true },
      run (el, a) {
        if (el.tagName !== 'SELECT')
          throw new ActionError ('ACTION_FAILED', describeBriefly (el) + ' is not a select');
        const wanted = (Array.isArray (a.values) ? a.values : [a.value ?? a.values]).map (String);
        const chosen = [];
        for (const w of wanted) {
          const option = Array.from (el.options).find (o => optionMatches (o, w));
          if (!option)
            throw new ActionError ('ACTION_FAILED', describeBriefly (el) + ' has no option ' +
                                   JSON.stringify (w) + ' (options: ' + Array.from (el.options)
                                   .map (o => JSON.stringify (norm (o.label))).join (', ') + ')');
          if (option.disabled)
            throw new ActionError ('ACTION_FAILED', 'The option ' + JSON.stringify (w) +
                                   ' is disabled', true);
          chosen.push (option);
        }
        if (!el.multiple && chosen.length > 1)
          throw new ActionError ('ACTION_FAILED', describeBriefly (el) + ' takes one option');
        el.focus ();
        for (const o of el.options)
          o.selected = chosen.includes (o);
        el.dispatchEvent (new Event ('input', { bubbles: true }));
        el.dispatchEvent (new Event ('change', { bubbles: true }));
        return { values: chosen.map (o => o.value) };
      } },
    check: { checks: { visible: true, stable: true, enabled: true, receives: true },
      run (el, a) { return setChecked (el, a, true); } },
    uncheck: { checks: { visible: true, stable: true, enabled: true, receives: true },
      run (el, a) { return setChecked (el, a, false); } },
    scroll: { checks: {},
      run (el, a) {
        /* pages: a multiple of 0.8 viewport heights (the page-down of a person). */
        const dx = Number (a.dx || 0);
        const dy = a.pages !== undefined ? Number (a.pages) * 0.8 * innerHeight : Number (a.dy || 0);
        const scroller = el === el.ownerDocument.documentElement ? el.ownerDocument.defaultView : el;
        const point = clickPoint (el);
        fireMouse (el, 'wheel', point, { deltaX: dx, deltaY: dy, deltaMode: 0 });
        scroller.scrollBy ({ left: dx, top: dy, behavior: 'instant' });
        return { scrollX: el.scrollLeft ?? scrollX, scrollY: el.scrollTop ?? scrollY };
      } },
    setFiles: { checks: { enabled: true },
      run (el) {
        if (el.tagName !== 'INPUT' || el.type !== 'file')
          throw new ActionError ('ACTION_FAILED', describeBriefly (el) + ' is not a file input');
        /* Opens WebKit's file chooser request, which the engine answers. */
        el.click ();
        return { chooser: true };
      } },
    drag: { checks: { visible: true, stable: true, receives: true },
      async run (el, a, deadline) {
        const to = resolveRef (a.to);
        await waitActionable (to, { visible: true, stable: true, receives: true }, deadline);
        const from = clickPoint (el);
        const dest = clickPoint (to);
        const source = pointerSequenceTarget (el, from);
        moveTo (source, from, {});
        fireMouse (source, 'pointerdown', from, { buttons: 1 });
        fireMouse (source, 'mousedown', from, { buttons: 1 });
        const win = el.ownerDocument.defaultView;
        const dataTransfer = new win.DataTransfer ();
        const draggable = el.closest ('[draggable=true]');
        let dragging = false;
        if (draggable)
          dragging = draggable.dispatchEvent (new win.DragEvent ('dragstart', {
            bubbles: true, cancelable: true, composed: true, clientX: from.x, clientY: from.y,
            dataTransfer }));
        const steps = 5;
        let target = source;
        for (let i = 1; i <= steps; i++) {
          const p = { x: from.x + (dest.x - from.x) * i / steps,
                      y: from.y + (dest.y - from.y) * i / steps };
          target = pointerSequenceTarget (to, p);
          if (dragging) {
            const init = { bubbles: true, cancelable: true, composed: true, clientX: p.x,
                           clientY: p.y, dataTransfer };
            if (i === 1 || target !== source)
              target.dispatchEvent (new win.DragEvent ('dragenter', init));
            target.dispatchEvent (new win.DragEvent ('dragover', init));
          } else {
            moveTo (target, p, { buttons: 1 });
          }
          await nextFrame ();
        }
        if (dragging) {
          const init = { bubbles: true, cancelable: true, composed: true, clientX: dest.x,
                         clientY: dest.y, dataTransfer };
          target.dispatchEvent (new win.DragEvent ('drop', init));
          draggable.dispatchEvent (new win.DragEvent ('dragend', init));
        }
        fireMouse (target, 'pointerup', dest, { buttons: 0 });
        fireMouse (target, 'mouseup', dest, { buttons: 0 });
        return { from, to: dest, html5: dragging };
      } },
  };

  function setChecked (el, a, wanted) {
    const box = el.tagName === 'LABEL' && el.control ? el.control : el;
    const state = () => box.getAttribute ('role') && !('checked' in box)
      ? box.getAttribute ('aria-checked') === 'true' : !!box.checked;
    if (!('checked' in box) && !['checkbox', 'radio', 'switch', 'menuitemcheckbox']
          .includes (box.getAttribute ('role')))
      throw new ActionError ('ACTION_FAILED', describeBriefly (el) + ' is not a checkbox or radio');
    if (box.type === 'radio' && !wanted)
      throw new ActionError ('ACTION_FAILED', 'A radio button cannot be unchecked; check another');
    if (state () !== wanted) {
      const point = clickPoint (el, a.position);
      clickAt (pointerSequenceTarget (el, point), point, {});
    }
    if (state () !== wanted)
      throw new ActionError ('ACTION_FAILED', describeBriefly (el) + ' did not become ' +
                             (wanted ? 'checked' : 'unchecked'));
    return { checked: wanted };
  }

  async function perform (args) {
    const t0 = performance.now ();
    const deadline = t0 + (args.timeout || 5000);
    const a = args.action || {};
    const spec = ACTIONS[a.type];
    if (!spec)
      return { ok: false, code: 'INVALID_ARGUMENT',
               message: 'Unknown action ' + JSON.stringify (a.type) };
    try {
      let el;
      for (;;) {
        try {
          el = args.ref ? resolveRef (args.ref) : document.documentElement;
          break;
        } catch (e) {
          if (!(e instanceof ActionError) || !e.retryable || performance.now () >= deadline)
            throw e;
          await sleep (50);
        }
      }
      const t1 = performance.now ();
      if (args.ref)
        await waitActionable (el, spec.checks, deadline, a.position);
      const t2 = performance.now ();
      const desc = descriptor (el);
      /* a field refilled with a secret may hold it already */
      if (a.type === 'fillSecret')
        desc.text = '';
      const t3 = performance.now ();
      unloading = false;
      const detail = await acting (() => spec.run (el, a, deadline));
      const t4 = performance.now ();
      const settle = args.settle ? await quiet ({ ...args.settle,
                                                  timeout: Math.max (1, deadline - t4) })
                                 : null;
      return { ok: true, descriptor: desc, detail, settle,
               timing: { resolveMs: Math.round (t1 - t0), actionableMs: Math.round (t2 - t1),
                         describeMs: Math.round (t3 - t2), actMs: Math.round (t4 - t3),
                         quietMs: Math.round (performance.now () - t4) } };
    } catch (e) {
      if (e instanceof ActionError)
        return { ok: false, code: e.code, message: e.message };
      return { ok: false, code: 'ACTION_FAILED', message: String (e && e.message || e) };
    }
  }

  /* Listed controls are what a tap at a point taps by its ref: an element
   * whose role (as the observation computes it) is one of the control roles,
   * the one table act's tap_at reads too (sight_action_control_roles(),
   * handed over as __sight.controlRoles), or one that is edited or clicked
   * without a role (contenteditable, an onclick attribute). */
  function listedAncestor (el) {
    const controls = new Set (G.__sight.controlRoles || []);
    const snap = G.__sight.snapshot;
    const roleOf = (e) => snap && snap.describe ? snap.describe (e).role
                                                : roleAndName (e, true).role;
    for (let e = el; e && e.nodeType === 1; e = e.parentElement || (e.getRootNode ().host)) {
      if (e === e.ownerDocument.body || e === e.ownerDocument.documentElement)
        return null;
      if (controls.has (roleOf (e)) ||
          e.matches ('[contenteditable=""], [contenteditable=true], [onclick]'))
        return e;
    }
    return null;
  }

  async function tapAt (args) {
    const point = { x: Number (args.x), y: Number (args.y) };
    if (!(point.x >= 0 && point.y >= 0 && point.x < innerWidth && point.y < innerHeight))
      return { ok: false, code: 'INVALID_ARGUMENT',
               message: 'The point ' + point.x + ',' + point.y + ' is outside the ' +
                        innerWidth + '×' + innerHeight + ' viewport' };
    let hit = document.elementFromPoint (point.x, point.y);
    while (hit && hit.shadowRoot) {
      const inner = hit.shadowRoot.elementFromPoint (point.x, point.y);
      if (!inner || inner === hit)
        break;
      hit = inner;
    }
    if (!hit)
      return { ok: false, code: 'ACTION_FAILED', message: 'Nothing is under the point' };
    const listed = listedAncestor (hit);
    const settle = async () => args.settle ? await quiet ({ ...args.settle,
                                                            timeout: args.timeout || 2000 })
                                           : null;
    if (listed && G.__sight.snapshot && G.__sight.snapshot.refOf && !isDisabled (listed)) {
      const desc = descriptor (listed);
      const box = listed.getBoundingClientRect ();
      const under = describeBriefly (hit);
      unloading = false;
      await acting (() => clickAt (hit, point, {}));
      return { ok: true, tapped: 'ref', ref: desc.ref, descriptor: desc,
               offset: { x: point.x - box.left, y: point.y - box.top }, under,
               settle: await settle () };
    }
    const under = describeBriefly (hit);
    const desc = descriptor (hit);
    unloading = false;
    await acting (() => clickAt (hit, point, {}));
    return { ok: true, tapped: 'point', point, under,
             descriptor: { point, viewport: { width: innerWidth, height: innerHeight },
                           under: desc },
             settle: await settle () };
  }

  /* Whether the document began to unload since the last action started (an
   * action can start a navigation synchronously). */
  let unloading = false;
  addEventListener ('beforeunload', () => { unloading = true; });
  addEventListener ('pagehide', () => { unloading = true; });

  /* Settling. The page hooks (page-hooks.js, in the page's own world) count
   * the work an action started: its requests and the short timers its
   * handlers scheduled. Between "begin" and "end" what the page schedules is
   * the action's; every answer comes back at once as a STATE event. */
  const SETTLE = '__sightline_settle__';
  const STATE = '__sightline_settle_state__';
  let wake = null;
  const heard = new WeakMap ();  /* a frame's window → its hooks' last answer */
  /* This document's window and those of its same-origin frames, at any depth:
   * an action in one can start work in another. */
  const windows = () => {
    const found = [];
    const visit = (win) => {
      let doc = null;
      try {
        doc = win.document;
      } catch (e) {
        return;
      }
      if (!doc)
        return;
      found.push (win);
      for (const frame of doc.querySelectorAll ('iframe, frame')) {
        let inner = null;
        try {
          inner = frame.contentWindow;
        } catch (e) {
        }
        if (inner)
          visit (inner);
      }
    };
    visit (window);
    return found;
  };
  const listenTo = (win) => {
    if (heard.has (win))
      return;
    heard.set (win, { pending: 0, busy: 0, frames: 0, observers: 0 });
    win.addEventListener (STATE, (event) => {
      let state;
      try {
        state = JSON.parse (event.detail);
      } catch (e) {
        return;
      }
      heard.set (win, { pending: state.pending | 0, busy: state.busy | 0,
                        frames: state.frames | 0, observers: state.observers | 0 });
      if ((state.pending | 0) === 0 && wake)
        wake ();
    }, true);
  };
  /* Tells every frame's hooks @op; -> the work they count, summed. */
  const hooks = (op) => {
    const sum = { pending: 0, busy: 0, frames: 0, observers: 0 };
    for (const win of windows ()) {
      listenTo (win);
      try {
        win.dispatchEvent (new CustomEvent (SETTLE, { detail: op }));
      } catch (e) {
        continue;
      }
      const state = heard.get (win);
      for (const key in sum)
        sum[key] += state[key];
    }
    return sum;
  };
  /* What the action did that a rendering update or a task it queued goes on
   * with: a form submitted (its navigation is scheduled), a window scrolled
   * (scroll events come with the next frame). */
  let sequel = false;
  /* Runs @act (the action) as the action whose work the hooks count. */
  async function acting (act) {
    const wins = windows ();
    const scrolled = wins.map (win => win.scrollX + ',' + win.scrollY);
    const submitted = () => { sequel = true; };
    sequel = false;
    for (const win of wins)
      win.addEventListener ('submit', submitted, true);
    hooks ('begin');
    try {
      return await act ();
    } finally {
      hooks ('end');
      wins.forEach ((win, i) => {
        win.removeEventListener ('submit', submitted, true);
        if (win.scrollX + ',' + win.scrollY !== scrolled[i])
          sequel = true;
      });
    }
  }

  /* Whether a rendering update may run page work or move something: an
   * animation in any frame, an animation frame or a resize or intersection
   * observer of the page's. */
  function framesMatter (work) {
    if (work.frames > 0 || work.observers > 0 || work.busy > 0)
      return true;
    for (const win of windows ()) {
      try {
        if (win.document.getAnimations ().length > 0)
          return true;
      } catch (e) {
        return true;
      }
    }
    return false;
  }

  /* Resolves once the page is done with the action: no work it started is
   * pending and a frame was rendered with no mutation in it or after it, in
   * this document or a same-origin frame (reason "signals"). A page that
   * keeps mutating with nothing pending, or runs an interval or animation
   * frames the action started (an animation, a ticking clock), has
   * args.busyMaxMs for one clean frame, then is given up on ("mutating"). Every wait ends
   * at args.timeout ("timeout"), and a document that is being navigated away
   * from answers at once ("navigation"): once it is torn down, nothing it
   * runs would ever answer. -> { quiet, reason, frames, waitedForWork,
   * waitedMs, unloading } */
  function quiet (args) {
    const busyMaxMs = args.busyMaxMs || 500;
    const timeout = args.timeout || 2000;
    const start = performance.now ();
    return new Promise (resolve => {
      let done = false, mutated = false;
      let frames = 0, waitedForWork = 0, busySince = -1;
      let frameTimer = null, lastMutation = -1;
      const observer = new MutationObserver (() => {
        mutated = true;
        lastMutation = performance.now ();
      });
      const leaving = () => finish (false, 'navigation');
      const finish = (isQuiet, reason) => {
        if (done)
          return;
        done = true;
        wake = null;
        observer.disconnect ();
        clearTimeout (frameTimer);
        clearTimeout (limit);
        removeEventListener ('beforeunload', leaving);
        removeEventListener ('pagehide', leaving);
        resolve ({ quiet: isQuiet, reason, frames, waitedForWork,
                   unloading: reason === 'navigation',
                   waitedMs: Math.round (performance.now () - start) });
      };
      /* After a frame was rendered: done unless work is pending or the page
       * mutated after the frame began. */
      const check = () => {
        if (done)
          return;
        const work = hooks ('state');
        if (work.pending > 0) {
          waitedForWork++;
          busySince = -1;
          wake = () => { wake = null; frame (); };
          return;
        }
        const late = mutated || observer.takeRecords ().length > 0 || work.busy > 0;
        mutated = false;
        if (!late) {
          finish (true, 'signals');
          return;
        }
        const now = performance.now ();
        if (busySince < 0)
          busySince = now;
        if (now - busySince >= busyMaxMs)
          finish (false, 'mutating');
        else
          frame ();
      };
      const frame = () => {
        let fired = false;
        const rendered = (frameStart) => {
          if (fired || done)
            return;
          fired = true;
          clearTimeout (frameTimer);
          /* What changed before this frame began is painted in it; what the
           * page's own animation callbacks changed in it (each one's
           * mutations are delivered as it returns) is not settled. */
          observer.takeRecords ();
          mutated = frameStart !== undefined && lastMutation >= frameStart;
          frames++;
          /* a task after the rendering update */
          setTimeout (check, 0);
        };
        requestAnimationFrame (rendered);
        frameTimer = setTimeout (() => rendered (), document.visibilityState === 'hidden' ? 50 : 1000);
      };
      addEventListener ('beforeunload', leaving);
      addEventListener ('pagehide', leaving);
      const limit = setTimeout (() => finish (false, 'timeout'), timeout);
      if (unloading) {
        finish (false, 'navigation');
        return;
      }
      for (const win of windows ())
        observer.observe (win.document, { subtree: true, childList: true, attributes: true,
                                          characterData: true });
      /* A task after the action: with nothing pending, nothing changed since,
       * and nothing a rendering update would run or move, the page is done
       * now; otherwise a frame is waited for as below. */
      const after = sequel;
      setTimeout (() => {
        if (done)
          return;
        const work = hooks ('state');
        if (!after && work.pending === 0 && !framesMatter (work) && !mutated &&
            observer.takeRecords ().length === 0) {
          finish (true, 'signals');
          return;
        }
        frame ();
      }, 0);
    });
  }

  G.__sight.actions = { version: VERSION, perform, tapAt, quiet };
}) ();
