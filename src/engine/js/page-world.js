/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Injected into the Sightline script world at document start, in every frame:
 * passes the page hooks' log events and the main frame's DOMContentLoaded and
 * load events to the UI process through a message handler that only this
 * world can see. */
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
    /* WebKit reports the load finished some time after the document's load
     * event (up to half a second in a new web process); a load waits for
     * this event, as a browser's does. Only the browser's own: a page's
     * script can dispatch a load event before its subresources are in. */
    const loaded = (event) => {
      if (!event.isTrusted || event.target !== document)
        return;
      window.removeEventListener ('load', loaded);
      post ({ type: 'load', url: String (location.href) });
    };
    if (document.readyState !== 'complete')
      window.addEventListener ('load', loaded);
  }
}) ();
