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
   * (fetch, XHR, reading a fetched body), short timers and messages (a
   * MessageChannel's port, postMessage to this window) its handlers started,
   * and what those start in turn, a few generations deep: that is "pending"
   * work, waited for until it is done. Intervals and animation frames it
   * asked for are "busy": they may never end, so the page is given a short
   * window, as one that keeps mutating. The originals are taken here, before
   * any page script runs, so a page that replaces a global later still goes
   * through these wrappers. The Sightline world asks with a SETTLE event
   * ("begin", "end", "state"); every answer, and every time the pending
   * work falls to zero, is a STATE event whose detail is {"pending": n,
   * "busy": n, "frames": n, "observers": n} (the last two below). */
  const SETTLE = '__sightline_settle__';
  const STATE = '__sightline_settle_state__';
  const SHORT_TIMER_MS = 1000;  /* longer timers are the page's own schedule */
  const MAX_DEPTH = 6;          /* a timer chain deeper than this is a loop */
  const apply = Reflect.apply;
  const then = Promise.prototype.then;
  const listen = EventTarget.prototype.addEventListener;
  const setTimer = window.setTimeout;
  const clearTimer = window.clearTimeout;
  const setRepeat = window.setInterval;
  const clearRepeat = window.clearInterval;
  const askFrame = window.requestAnimationFrame;
  const cancelFrame = window.cancelAnimationFrame;
  const weakHas = WeakSet.prototype.has;
  const weakAdd = WeakSet.prototype.add;
  const weakDelete = WeakSet.prototype.delete;
  const mapGet = WeakMap.prototype.get;
  const mapSet = WeakMap.prototype.set;
  const fetched = new WeakSet ();
  const timers = Object.create (null);  /* tracked timer id → true */
  const repeats = Object.create (null); /* tracked interval id → true */
  const frames = Object.create (null);  /* tracked animation frame id → true */
  let acting = false;                   /* between the action's "begin" and "end" */
  let depth = 0;                        /* > 0 while work the action started runs */
  let pending = 0;
  let busy = 0;
  const level = () => Math.max (depth, acting ? 1 : 0);
  const tracking = () => level () > 0 && level () < MAX_DEPTH;
  const tell = () => {
    try {
      dispatch (new CustomEventCtor (STATE, { detail: stringify ({
        pending, busy, frames: askedCount, observers: watching }) }));
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
   * response, the other listeners of a message) counts as the action's work
   * too. */
  const attribute = (at) => {
    if (at > depth) {
      depth = at;
      apply (setTimer, window, [() => { depth = 0; }, 0]);
    }
  };
  /* @handler run as work of generation @at: what it starts is the action's */
  const runAt = (at, handler, self, args) => {
    const outer = depth;
    depth = at;
    try {
      return apply (handler, self, args);
    } finally {
      depth = outer;
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
      try {
        return runAt (at, handler, this, args);
      } finally {
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
  /* Busy work: an interval until it is cleared, an animation frame until it
   * ran. What an interval's ticks start is not waited for (it would be
   * pending again at every tick); a frame asked for by a tracked frame is the
   * same animation, not a generation deeper. */
  const stopBusy = (table, id) => {
    if (table[id]) {
      delete table[id];
      busy = Math.max (0, busy - 1);
    }
  };
  window.setInterval = function (handler, delay, ...rest) {
    if (!tracking () || typeof handler !== 'function' || !(Number (delay || 0) <= SHORT_TIMER_MS))
      return apply (setRepeat, window, [handler, delay, ...rest]);
    const id = apply (setRepeat, window, [function (...args) {
      return runAt (MAX_DEPTH, handler, this, args);
    }, delay, ...rest]);
    repeats[id] = true;
    busy++;
    return id;
  };
  window.clearInterval = function (id) {
    stopBusy (repeats, id);
    return apply (clearRepeat, window, [id]);
  };
  let inFrame = 0;  /* the generation of the tracked frame callback running, or 0 */
  /* Every animation frame the page asked for and not yet had, the action's or
   * not, and its resize and intersection observers that observe something:
   * with none of them, and no animation, the page runs nothing of its own in
   * a rendering update, so settling need not wait for one. */
  const asked = Object.create (null);
  let askedCount = 0;
  const had = (id) => {
    if (asked[id]) {
      delete asked[id];
      askedCount--;
    }
  };
  let watching = 0;
  const live = new WeakSet ();
  for (const name of ['ResizeObserver', 'IntersectionObserver']) {
    const proto = window[name] && window[name].prototype;
    if (!proto)
      continue;
    const observe = proto.observe;
    const disconnect = proto.disconnect;
    proto.observe = function (...args) {
      if (!apply (weakHas, live, [this])) {
        apply (weakAdd, live, [this]);
        watching++;
      }
      return apply (observe, this, args);
    };
    proto.disconnect = function (...args) {
      if (apply (weakHas, live, [this])) {
        apply (weakDelete, live, [this]);
        watching--;
      }
      return apply (disconnect, this, args);
    };
  }
  if (typeof askFrame === 'function') {
    window.requestAnimationFrame = function (callback) {
      const at = inFrame || level () + 1;
      if (typeof callback !== 'function')
        return apply (askFrame, window, [callback]);
      let id = 0;
      if (!inFrame && !tracking ()) {
        id = apply (askFrame, window, [function (...args) {
          had (id);
          return apply (callback, this, args);
        }]);
        asked[id] = true;
        askedCount++;
        return id;
      }
      id = apply (askFrame, window, [function (...args) {
        had (id);
        stopBusy (frames, id);
        const outer = inFrame;
        inFrame = at;
        try {
          return runAt (at, callback, this, args);
        } finally {
          inFrame = outer;
        }
      }]);
      frames[id] = true;
      busy++;
      asked[id] = true;
      askedCount++;
      return id;
    };
    window.cancelAnimationFrame = function (id) {
      had (id);
      stopBusy (frames, id);
      return apply (cancelFrame, window, [id]);
    };
  }
  /* Messages: one posted by the action's work is pending until it was
   * delivered and the task that delivered it ended, or, never delivered (a
   * port nobody started), for SHORT_TIMER_MS. */
  const posted = new WeakMap ();  /* receiver (window or port) → generations in flight */
  const post = (receiver) => {
    if (!tracking ())
      return;
    const queue = apply (mapGet, posted, [receiver]) || [];
    const message = { at: level () + 1, done: false };
    const finish = () => {
      if (!message.done) {
        message.done = true;
        end ();
      }
    };
    message.finish = finish;
    queue.push (message);
    apply (mapSet, posted, [receiver, queue]);
    begin ();
    apply (setTimer, window, [() => {
      const i = queue.indexOf (message);
      if (i >= 0)
        queue.splice (i, 1);
      finish ();
    }, SHORT_TIMER_MS]);
  };
  const delivered = (receiver) => {
    const queue = apply (mapGet, posted, [receiver]);
    const message = queue && queue.shift ();
    if (!message)
      return;
    attribute (message.at);
    apply (setTimer, window, [message.finish, 0]);
  };
  const partners = new WeakMap ();  /* a MessageChannel's port → the other one */
  const Channel = window.MessageChannel;
  const portPost = typeof MessagePort === 'function' ? MessagePort.prototype.postMessage : null;
  if (typeof Channel === 'function' && portPost) {
    const Wrapped = function MessageChannel () {
      const channel = Reflect.construct (Channel, [], new.target || Wrapped);
      for (const [port, other] of [[channel.port1, channel.port2], [channel.port2, channel.port1]]) {
        apply (mapSet, partners, [port, other]);
        /* first, so that the page's own listeners run as the action's work */
        apply (listen, other, ['message', () => delivered (other)]);
      }
      return channel;
    };
    Wrapped.prototype = Channel.prototype;
    window.MessageChannel = Wrapped;
    MessagePort.prototype.postMessage = function (...args) {
      const other = apply (mapGet, partners, [this]);
      const result = apply (portPost, this, args);
      if (other)
        post (other);
      return result;
    };
  }
  const windowPost = window.postMessage;
  apply (listen, window, ['message', (event) => {
    if (event.source === window)
      delivered (window);
  }, true]);
  window.postMessage = function (...args) {
    /* a bare postMessage () from strict code has no this: the window's own */
    const self = this === undefined || this === null ? window : this;
    const result = apply (windowPost, self, args);
    if (self === window)
      post (window);
    return result;
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
