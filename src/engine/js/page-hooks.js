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
  window.addEventListener ('unhandledrejection', (event) => {
    send ({ kind: 'error', text: 'Unhandled rejection: ' + toText (event.reason) });
  }, true);
}) ();
