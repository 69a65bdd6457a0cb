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
  const originalFetch = window.fetch;
  if (typeof originalFetch === 'function') {
    window.fetch = function (input, init) {
      const url = absolute (input instanceof Request ? input.url : input);
      return originalFetch.call (this, input, init).then ((response) => response, (error) => {
        failed ('fetch', url);
        throw error;
      });
    };
  }
  const originalOpen = XMLHttpRequest.prototype.open;
  XMLHttpRequest.prototype.open = function (method, url, ...rest) {
    const target = absolute (url);
    this.addEventListener ('error', () => failed ('xhr', target));
    return originalOpen.call (this, method, url, ...rest);
  };
  window.addEventListener ('unhandledrejection', (event) => {
    send ({ kind: 'error', text: 'Unhandled rejection: ' + toText (event.reason) });
  }, true);
}) ();
