/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Injected into the page's own world at document start, in every frame. It
 * forwards console messages and uncaught errors to the Sightline world as a
 * DOM event carrying JSON text: only DOM events and strings cross worlds. */
(() => {
  'use strict';
  const EVENT = '__sightline_log__';
  const dispatch = window.dispatchEvent.bind (window);
  const CustomEventCtor = window.CustomEvent;
  const stringify = JSON.stringify;
  const toText = (value) => {
    if (typeof value === 'string')
      return value;
    if (value instanceof Error)
      return String (value);
    try {
      const json = stringify (value);
      return json === undefined ? String (value) : json;
    } catch (e) {
      return String (value);
    }
  };
  const send = (entry) => {
    try {
      entry.url = entry.url || String (location.href);
      dispatch (new CustomEventCtor (EVENT, { detail: stringify (entry) }));
    } catch (e) {
      /* A page that broke the DOM can't break its own page load through us. */
    }
  };
  const levels = { log: 'log', info: 'info', warn: 'warning', error: 'error', debug: 'debug' };
  for (const [method, level] of Object.entries (levels)) {
    const original = console[method];
    if (typeof original !== 'function')
      continue;
    console[method] = function (...args) {
      send ({ kind: 'console', level, text: args.map (toText).join (' ') });
      return original.apply (this, args);
    };
  }
  window.addEventListener ('error', (event) => {
    if (!(event instanceof ErrorEvent))
      return;
    const text = event.error instanceof Error ? String (event.error) : String (event.message);
    send ({ kind: 'error', text, url: event.filename || '' });
  }, true);
  /* Loads that failed, for the origin guard, which names the ones its
   * content filter refused (it fails them like a network error, unseen by
   * Sightline otherwise): elements (img, script, link, media), fetch and
   * XMLHttpRequest. The page's own handling is left as it was. */
  const absolute = (url) => {
    try {
      return String (new URL (String (url), location.href));
    } catch (e) {
      return '';
    }
  };
  const failed = (what, url) => {
    if (url)
      send ({ kind: 'resource', text: what, url });
  };
  window.addEventListener ('error', (event) => {
    const target = event.target;
    if (event instanceof ErrorEvent || !(target instanceof Element))
      return;
    failed (target.localName, absolute (target.currentSrc || target.src || target.href || ''));
  }, true);
  /* Work an action started, for its settling (actions.js quiet()): requests
   * (fetch, XHR, reading a fetched body) and short timers its handlers
   * scheduled, and what those schedule in turn, a few generations deep. The
   * originals are taken here, before any page script runs, so a page that
   * replaces a global later still goes through these wrappers. The Sightline
   * world asks with a SETTLE event ("begin", "end", "state"); every answer,
   * and every time the count of such work falls to zero, is a STATE event
   * whose detail is {"pending": n}. */
  const SETTLE = '__sightline_settle__';
  const STATE = '__sightline_settle_state__';
  const SHORT_TIMER_MS = 500;   /* longer timers are the page's own schedule */
  const MAX_DEPTH = 6;          /* a timer chain deeper than this is a loop */
  const apply = Reflect.apply;
  const then = Promise.prototype.then;
  const listen = EventTarget.prototype.addEventListener;
  const setTimer = window.setTimeout;
  const clearTimer = window.clearTimeout;
  const weakHas = WeakSet.prototype.has;
  const weakAdd = WeakSet.prototype.add;
  const fetched = new WeakSet ();
  const timers = Object.create (null);  /* tracked timer id → true */
  let acting = false;                   /* between the action's "begin" and "end" */
  let depth = 0;                        /* > 0 while work the action started runs */
  let pending = 0;
  const level = () => Math.max (depth, acting ? 1 : 0);
  const tracking = () => level () > 0 && level () < MAX_DEPTH;
  const tell = () => {
    try {
      dispatch (new CustomEventCtor (STATE, { detail: stringify ({ pending }) }));
    } catch (e) {
    }
  };
  const begin = () => { pending++; };
  const end = () => {
    pending = Math.max (0, pending - 1);
    if (pending === 0)
      tell ();
  };
  /* What runs in the rest of this task (the page's promise reactions to a
   * response) counts as the action's work too. */
  const attribute = (at) => {
    if (at > depth) {
      depth = at;
      apply (setTimer, window, [() => { depth = 0; }, 0]);
    }
  };
  apply (listen, window, [SETTLE, (event) => {
    if (event.detail === 'begin' || event.detail === 'end')
      acting = event.detail === 'begin';
    tell ();
  }, true]);
  window.setTimeout = function (handler, delay, ...rest) {
    const at = level () + 1;
    if (!tracking () || typeof handler !== 'function' ||
        !(Number (delay || 0) <= SHORT_TIMER_MS))
      return apply (setTimer, window, [handler, delay, ...rest]);
    let id = 0;
    const run = function (...args) {
      delete timers[id];
      const outer = depth;
      depth = at;
      try {
        return apply (handler, this, args);
      } finally {
        depth = outer;
        end ();
      }
    };
    id = apply (setTimer, window, [run, delay, ...rest]);
    timers[id] = true;
    begin ();
    return id;
  };
  window.clearTimeout = function (id) {
    if (timers[id]) {
      delete timers[id];
      end ();
    }
    return apply (clearTimer, window, [id]);
  };
  /* A promise that counts as pending work until it settles. */
  const track = (promise, at, onResponse) => {
    begin ();
    return apply (then, promise, [(value) => {
      if (onResponse)
        onResponse (value);
      attribute (at);
      end ();
      return value;
    }, (error) => {
      attribute (at);
      end ();
      throw error;
    }]);
  };
  const originalFetch = window.fetch;
  if (typeof originalFetch === 'function') {
    window.fetch = function (input, init) {
      const url = absolute (input instanceof Request ? input.url : input);
      let request = apply (originalFetch, this, [input, init]);
      if (tracking ())
        request = track (request, level () + 1, (response) => {
          if (response instanceof Response)
            apply (weakAdd, fetched, [response]);
        });
      return apply (then, request, [(response) => response, (error) => {
        failed ('fetch', url);
        throw error;
      }]);
    };
    for (const name of ['arrayBuffer', 'blob', 'formData', 'json', 'text']) {
      const read = Response.prototype[name];
      if (typeof read !== 'function')
        continue;
      Response.prototype[name] = function (...args) {
        const body = apply (read, this, args);
        return tracking () || apply (weakHas, fetched, [this]) ? track (body, level () + 1) : body;
      };
    }
  }
  const originalOpen = XMLHttpRequest.prototype.open;
  XMLHttpRequest.prototype.open = function (method, url, ...rest) {
    const target = absolute (url);
    apply (listen, this, ['error', () => failed ('xhr', target)]);
    return apply (originalOpen, this, [method, url, ...rest]);
  };
  const originalSend = XMLHttpRequest.prototype.send;
  XMLHttpRequest.prototype.send = function (...args) {
    if (!tracking ())
      return apply (originalSend, this, args);
    const at = level () + 1;
    /* readystatechange to DONE comes before load and loadend */
    apply (listen, this, ['readystatechange', () => {
      if (this.readyState === 4)
        attribute (at);
    }]);
    apply (listen, this, ['loadend', end]);
    begin ();
    try {
      return apply (originalSend, this, args);
    } catch (error) {
      end ();
      throw error;
    }
  };
  window.addEventListener ('unhandledrejection', (event) => {
    send ({ kind: 'error', text: 'Unhandled rejection: ' + toText (event.reason) });
  }, true);
}) ();
