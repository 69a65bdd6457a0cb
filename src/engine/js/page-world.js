/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Injected into the Sightline script world at document start, in every frame:
 * passes the page hooks' log events and the main frame's DOMContentLoaded to
 * the UI process through a message handler that only this world can see. */
(() => {
  'use strict';
  const handler = window.webkit.messageHandlers.sightline;
  const post = (message) => {
    try {
      handler.postMessage (JSON.stringify (message));
    } catch (e) {
    }
  };
  window.addEventListener ('__sightline_log__', (event) => {
    if (typeof event.detail === 'string')
      post ({ type: 'log', entry: event.detail });
  }, true);
  if (window === window.top) {
    const ready = () => post ({ type: 'domcontentloaded', url: String (location.href) });
    if (document.readyState === 'loading')
      document.addEventListener ('DOMContentLoaded', ready, { once: true });
    else
      ready ();
  }
}) ();
