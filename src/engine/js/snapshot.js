/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * snapshot.js: the page's accessibility tree as Sightline observes it.
 *
 * Runs in the "sightline" isolated script world (SIGHT_SCRIPT_WORLD), never in
 * the page's own world. The file is an async function body's prelude: it
 * installs `globalThis.__sight.snapshot` once per document (re-running it is
 * cheap and keeps the installed copy, and with it the refs), so a caller runs
 *
 *     <this file> + "\nreturn __sight.snapshot.observe(args);"
 *
 * through sight_web_page_evaluate_async() and gets one JSON value back: one
 * DOM walk, one round trip.
 *
 * API (all on globalThis.__sight.snapshot):
 *   observe(args)   -> { version, url, title, viewport, counts, secure[],
 *                        frames[], text, tree, timing[, state][, truncated] }
 *       args.text:  "compact" (default; bounded, for the model), "full", "none"
 *       args.tree:  include the JSON tree (default true)
 *       args.root:  a ref; observe only that subtree (the "expand" tool)
 *       args.maxChars: budget of the compact text (default 24000)
 *       args.maxNodes, args.maxElements: a safety bound of one walk
 *                   (defaults: LIMITS below, a million: every element of
 *                   any real page is listed). Past either only what the
 *                   viewport shows is still walked, up to twice the
 *                   limits; every other element is counted with its
 *                   subtree, not walked; the texts say "… N elements not
 *                   observed" where they were, and the result has
 *                   truncated: { notObserved, maxNodes, maxElements }.
 *       args.since: a state an earlier observe() returned; when the page
 *                   is still in that state the answer is only
 *                   { version, unchanged: true, state }. Given (null:
 *                   none yet), the result has the page's state.
 *       args.maxTreeChars: the budget of page text in the tree (default
 *                   LIMITS.chars). Past it text runs outside the viewport
 *                   are left out (elements are all still listed), and
 *                   counts.textClipped says how many characters.
 *   find(args)      -> { matches, text[, notObserved] }: nodes whose name or
 *                      text contains args.query (case-insensitive), at most
 *                      args.limit (50), within the same limits
 *   resolve(ref)    -> the Element a ref names, or null when it is gone. For
 *                      the actions code: `__sight.snapshot.resolve("f1e7")`.
 *                      Refs resolve only for elements an observe() saw.
 *   refOf(element)  -> the element's ref (assigning one if it has none)
 *   isInteractive(node) -> whether a node of observe()'s tree is a control,
 *                      clickable, focusable or a frame (the recorder asks)
 *   bareWalk()      -> the number of elements in one bare walk over the same
 *                      DOM (light + open shadow + same-origin frames): the
 *                      floor the benchmark compares observe() against.
 *
 * Refs: "eN" for the main document, "fMeN" inside the same-origin iframe
 * whose own ref carries frame number M. A ref is kept on its element in a
 * WeakMap of the isolated world, so an element keeps its ref across
 * observations of one document, and a new document starts over.
 *
 * Rules: roles per HTML-AAM (explicit role = first valid token), names and
 * descriptions per accname 1.2, hidden content (display:none, visibility
 * hidden/collapse, hidden, aria-hidden, inert, outside an open modal dialog,
 * inside content-visibility: hidden) excluded, generic wrappers without a
 * name flattened, text already carried by a name computed from content
 * dropped (the elements it holds stay, quiet: out of the model's text).
 * "clickable" marks an element without an interactive role whose computed
 * cursor turns to `pointer` (or that has an onclick attribute): page click
 * listeners are invisible from here, the cursor is the signal pages give
 * sighted users. Secure inputs
 * (type=password, autocomplete current-password/new-password/one-time-code)
 * are flagged `secure` and their values never leave this script.
 */
(() => {
  'use strict';
  const VERSION = 1;
  const G = globalThis;
  if (G.__sight && G.__sight.snapshot && G.__sight.snapshot.version === VERSION)
    return;
  G.__sight = G.__sight || {};

  const state = {
    refs: new WeakMap (),     /* Element -> ref */
    byRef: new Map (),        /* ref -> WeakRef(Element) */
    next: 1,
    frames: new WeakMap (),   /* iframe Element -> frame number */
    uaSummaries: new WeakMap (),  /* <details> without a <summary> -> its UA summary's ref */
    nextFrame: 1,
  };

  const VALID_ROLES = new Set ((
    'alert alertdialog application article banner blockquote button caption cell checkbox ' +
    'code columnheader combobox complementary contentinfo definition deletion dialog directory ' +
    'document emphasis feed figure form generic grid gridcell group heading img insertion link ' +
    'list listbox listitem log main mark marquee math menu menubar menuitem menuitemcheckbox ' +
    'menuitemradio meter navigation none note option paragraph presentation progressbar radio ' +
    'radiogroup region row rowgroup rowheader scrollbar search searchbox separator slider ' +
    'spinbutton status strong subscript superscript switch tab table tablist tabpanel term ' +
    'textbox time timer toolbar tooltip tree treegrid treeitem').split (' '));

  /* Roles a person acts on: they always get a line, a ref and (role, name). */
  const INTERACTIVE = new Set ((
    'button checkbox combobox link listbox menuitem menuitemcheckbox menuitemradio option ' +
    'radio searchbox slider spinbutton switch tab textbox treeitem scrollbar gridcell').split (' '));

  /* accname 1.2 / ARIA 1.2: roles whose name may come from their content. */
  const NAME_FROM_CONTENT = new Set ((
    'button cell checkbox columnheader gridcell heading link menuitem menuitemcheckbox ' +
    'menuitemradio option radio row rowheader switch tab tooltip treeitem').split (' '));

  /* Roles that carry no name and vanish when they have none to show. */
  const FLATTEN = new Set (['generic', 'none', 'presentation', 'paragraph', 'rowgroup', 'caption']);

  const SKIP_TAGS = new Set ([
    'script', 'style', 'template', 'noscript', 'head', 'meta', 'link', 'title', 'base',
    'datalist', 'param', 'source', 'track']);

  const SECTIONING_SCOPE =
    'article,aside,nav,section,[role=article],[role=complementary],[role=navigation],' +
    '[role=region]';

  const LANDMARK_SCOPE =
    'article,aside,main,nav,section,[role=article],[role=complementary],[role=main],' +
    '[role=navigation],[role=region]';

  /* Bounds of one walk. The tree lists every element (a million is only a
   * guard for memory); what is bounded is text: runs longer than MAX_TEXT
   * are clipped, and past `chars` characters of page text only the
   * viewport's text is kept. */
  const LIMITS = { nodes: 1000000, elements: 1000000, chars: 2000000 };
  const MAX_TEXT = 4000;

  const TEXT_INPUT_ROLES = new Set (['textbox', 'searchbox', 'combobox', 'spinbutton']);
  const RANGE_ROLES = new Set (['slider', 'spinbutton', 'progressbar', 'scrollbar', 'meter']);

  /* Runs of ASCII whitespace (not NBSP, which stays U+00A0) made one
   * space, and trimmed. */
  const norm = s => s.replace (/[\t\n\f\r ]+/g, ' ').replace (/^ | $/g, '');

  function refOf (el, prefix) {
    let r = state.refs.get (el);
    if (r === undefined) {
      r = (prefix || '') + 'e' + state.next++;
      state.refs.set (el, r);
      state.byRef.set (r, new WeakRef (el));
    }
    return r;
  }

  function resolve (ref) {
    const w = state.byRef.get (ref);
    if (!w)
      return null;
    const el = w.deref ();
    if (!el || !el.isConnected) {
      state.byRef.delete (ref);
      return null;
    }
    return el;
  }

  function pruneRefs () {
    if (state.byRef.size < 20000)
      return;
    for (const [r, w] of state.byRef)
      if (!w.deref ())
        state.byRef.delete (r);
  }

  /* The computed display and visibility of the elements seen during one
   * observation, each read once (the cursor when first asked for:
   * cursorOf()): names computed from content visit elements the walk
   * visits again, and in WebKit every read of a computed style's property
   * computes it again. Reset by observe(). */
  let styles = new Map ();

  function resetCaches () {
    walkOwns = null;
    labelIndex = new WeakMap ();
    styles = new Map ();
    roles = new Map ();
    plains = new Map ();
    contents = new Map ();
    tableKinds = new Map ();
    pseudoDocs = new WeakMap ();
    contentHidingRoots = new Map ();
    cursorScopes = new Map ();
    cursorAnywhere = false;
  }

  /* An element's computed style, each property asked for when first
   * needed: most elements are rendered (checkVisibility(), one native call
   * that builds no style declaration, says so), and for those the walk
   * needs display only where text meets the element's boundary and the
   * cursor only where a rule can set one (cursorMayDiffer()). */
  class Style {
    constructor (el) {
      this.el = el;
      this.decl = null;
      this.shown = undefined;
      this.disp = undefined;
      this.vis = undefined;
      this.cursor = undefined;
    }
    get d () {
      if (this.decl === null)
        this.decl = this.el.ownerDocument.defaultView.getComputedStyle (this.el);
      return this.decl;
    }
    /* Rendered with a box and visibility: visible (so display is neither
     * none nor contents). False says nothing: ask display and visibility. */
    get rendered () {
      if (this.shown === undefined) {
        if (this.decl !== null || typeof this.el.checkVisibility !== 'function') {
          /* Its display already read (a name from content asked): one
           * more property is cheaper than the native call. */
          const d = this.display;
          this.shown = d !== 'none' && d !== 'contents' && this.visibility === 'visible';
        } else
          this.shown = this.el.checkVisibility (VISIBILITY_CHECK);
      }
      return this.shown;
    }
    get display () {
      if (this.disp === undefined)
        this.disp = this.d.display;
      return this.disp;
    }
    get visibility () {
      if (this.vis === undefined)
        this.vis = this.shown === true ? 'visible' : this.d.visibility;
      return this.vis;
    }
    /* rendered, from display and visibility: where a name from content
     * asks, which reads display anyway to join the text. */
    get styled () {
      if (this.shown === undefined) {
        const d = this.display;
        this.shown = d !== 'none' && d !== 'contents' && this.visibility === 'visible';
      }
      return this.shown;
    }
    /* display: none, read only for an element that is not rendered. */
    get none () {
      return !this.rendered && this.display === 'none';
    }
    get contents () {
      return !this.rendered && this.display === 'contents';
    }
  }

  const VISIBILITY_CHECK = { visibilityProperty: true, contentVisibilityAuto: false,
                             opacityProperty: false };

  function cssOf (el) {
    let cs = styles.get (el);
    if (cs === undefined) {
      cs = new Style (el);
      styles.set (el, cs);
    }
    return cs;
  }

  /* The computed cursor of a style record of cssOf() (null: the top). */
  function cursorOf (cs) {
    if (cs === null)
      return 'auto';
    if (cs.cursor === undefined)
      cs.cursor = cs.d.cursor;
    return cs.cursor;
  }

  /* ---------- where a cursor can be set ---------- */

  /* An element's computed cursor is its parent's unless a rule, its style
   * attribute or the UA sheet sets one on it. Per tree scope (a document
   * or a shadow root), once per observation: the elements the scope's
   * style rules that mention cursor (or all) select, a superset (@media
   * and @supports conditions are not asked), or null where that cannot be
   * told (an unreadable sheet, a selector querySelectorAll cannot match
   * here: :host, ::slotted, ::part, nesting). */
  let cursorScopes = new Map ();
  let cursorAnywhere = false;
  /* Tags the UA sheet may give a cursor. */
  const UA_CURSOR_TAGS = new Set (['a', 'area', 'button', 'input', 'select', 'textarea',
    'summary', 'label', 'option', 'details', 'img', 'svg']);
  const CURSOR_DECL = /(^|[\s;{])(cursor|all)\s*:/i;

  /* Adds the selectors of @sheets' rules that mention a cursor to @sels;
   * false where that cannot be told. */
  function cursorSelectors (rules, sels) {
    for (const rule of rules) {
      if (rule.styleSheet) {
        let sub;
        try { sub = rule.styleSheet.cssRules; } catch (e) { return false; }
        if (!sub || !cursorSelectors (sub, sels)) return false;
        continue;
      }
      const t = rule.cssText;
      if (!CURSOR_DECL.test (t))
        continue;
      if (rule.selectorText !== undefined) {
        const sel = rule.selectorText;
        if (/:host|::|&|:scope/.test (sel) || (rule.cssRules && rule.cssRules.length))
          return false;
        sels.push (sel);
      } else if (rule.cssRules) {
        if (!cursorSelectors (rule.cssRules, sels)) return false;
      } else
        return false;
    }
    return true;
  }

  function cursorScope (root) {
    let scope = cursorScopes.get (root);
    if (scope !== undefined)
      return scope;
    scope = null;
    const sels = [];
    let known = true;
    const lists = [root.styleSheets, root.adoptedStyleSheets];
    for (const sheets of lists) {
      if (!sheets || !known) continue;
      for (const sheet of sheets) {
        let rules;
        try { rules = sheet.cssRules; } catch (e) { rules = null; }
        if (!rules || !cursorSelectors (rules, sels)) { known = false; break; }
      }
    }
    if (known && root.querySelectorAll) {
      sels.push ('[style*="cursor" i]', '[style*="all" i]');
      try {
        scope = new Set (root.querySelectorAll (sels.join (',')));
      } catch (e) {
        scope = null;
      }
    }
    if (scope === null && root.host === undefined)
      cursorAnywhere = true;
    cursorScopes.set (root, scope);
    return scope;
  }

  /* Whether @el's computed cursor can differ from its parent's in the
   * walk. */
  function cursorMayDiffer (el, ctx) {
    if (cursorAnywhere || UA_CURSOR_TAGS.has (el.localName))
      return true;
    if (ctx.owns && ctx.owns.owned.has (el))
      return true;   /* placed under its owner, it inherits from its parent */
    const root = el.getRootNode ();
    /* A shadow root's host scope can reach into it (::part) and its sheets
     * out of it (::slotted, :host): both scopes must be known. */
    if (root !== el.ownerDocument && cursorScope (el.ownerDocument) === null)
      return true;
    if (el.assignedSlot && cursorScope (el.assignedSlot.getRootNode ()) === null)
      return true;
    if (el.shadowRoot && cursorScope (el.shadowRoot) === null)
      return true;
    const scope = cursorScope (root);
    return scope === null || scope.has (el);
  }

  /* Attributes that can change an element's role, name, description,
   * states or whether it is listed, apart from those its tag gives
   * meaning (alt, href, type, ...): an element with none of them is
   * "plain", and its role, name and states are read without asking for
   * each of them (most elements of a page are plain). */
  const AUTHOR_ATTRS = new Set (['role', 'title', 'tabindex', 'onclick', 'inert', 'placeholder',
    'contenteditable']);
  let plains = new Map ();

  function isPlain (el) {
    let p = plains.get (el);
    if (p === undefined) {
      p = true;
      if (el.hasAttributes ()) {
        const names = el.getAttributeNames ();
        for (let i = 0; i < names.length; i++) {
          const n = names[i];
          if (AUTHOR_ATTRS.has (n) || n.startsWith ('aria-')) {
            p = false;
            break;
          }
        }
      }
      plains.set (el, p);
    }
    return p;
  }

  function children (el) {
    if (el.shadowRoot) {
      watch.sawShadow = true;
      return el.shadowRoot.childNodes;
    }
    if (el.localName === 'slot') {
      const a = el.assignedNodes ({ flatten: true });
      if (a.length)
        return a;
    }
    return el.childNodes;
  }

  function byId (el, id) {
    const root = el.getRootNode ();
    return (root.getElementById ? root.getElementById (id) : null) ||
           el.ownerDocument.getElementById (id);
  }

  function focusable (el) {
    if (!isPlain (el) && el.hasAttribute ('tabindex') && el.tabIndex >= 0)
      return true;
    return false;
  }

  function hasGlobalAria (el) {
    return !isPlain (el) && el.hasAttribute ('aria-label') || el.hasAttribute ('aria-labelledby') ||
           el.hasAttribute ('aria-labeledby') || el.hasAttribute ('aria-describedby');
  }

  /* aria-labelledby, or its misspelling aria-labeledby, which engines
   * accept too; with both, the first one on the element. */
  function labelledByAttr (el) {
    if (isPlain (el))
      return null;
    const a = el.getAttribute ('aria-labelledby');
    if (!el.hasAttribute ('aria-labeledby'))
      return a;
    if (a !== null)
      for (const at of el.attributes)
        if (at.name === 'aria-labelledby' || at.name === 'aria-labeledby')
          return at.value;
    return el.getAttribute ('aria-labeledby');
  }

  /* WAI-ARIA 1.2's global states and properties: any of them on an element
   * makes it keep its native role over none/presentation (9.2). */
  const GLOBAL_ARIA = ['aria-atomic', 'aria-busy', 'aria-controls', 'aria-current',
    'aria-describedby', 'aria-description', 'aria-details', 'aria-dropeffect', 'aria-flowto',
    'aria-grabbed', 'aria-haspopup', 'aria-invalid', 'aria-keyshortcuts', 'aria-label',
    'aria-labelledby', 'aria-labeledby', 'aria-live', 'aria-owns', 'aria-relevant',
    'aria-roledescription'];

  function hasAnyGlobalAria (el) {
    if (isPlain (el))
      return false;
    for (const a of GLOBAL_ARIA)
      if (el.hasAttribute (a))
        return true;
    return false;
  }

  /* Focusable at all (tabindex=-1 too), for the presentational conflict. */
  function anyFocusable (el, tag) {
    if ((!isPlain (el) && el.hasAttribute ('tabindex')) || el.isContentEditable)
      return true;
    switch (tag) {
    case 'a': case 'area': return el.hasAttribute ('href');
    case 'button': case 'select': case 'textarea': return !el.disabled;
    case 'input': return !el.disabled && (el.getAttribute ('type') || '').toLowerCase () !== 'hidden';
    case 'iframe': return true;
    case 'summary': return isDetailsSummary (el);
    }
    return false;
  }

  /* The <summary> that is its <details>' first summary child: the one the
   * UA makes the disclosure button. */
  function isDetailsSummary (el) {
    const d = el.parentElement;
    return !!d && d.localName === 'details' && d.querySelector (':scope > summary') === el;
  }

  /* Roles (WAI-ARIA 1.2 "required context role") that mean nothing outside
   * their context: with no ancestor of a context role, the element falls
   * back to its next role token or its native role. A cell's context is its
   * row or, as engines accept, the table or grid itself; rows and row groups
   * stand on their own. */
  const TABLE_CONTEXT = ['row', 'grid', 'table', 'treegrid'];
  const REQUIRED_CONTEXT = {
    listitem: ['list', 'directory'],
    option: ['listbox', 'group', 'combobox'],
    cell: TABLE_CONTEXT, gridcell: TABLE_CONTEXT, columnheader: TABLE_CONTEXT,
    rowheader: TABLE_CONTEXT,
    menuitem: ['group', 'menu', 'menubar'],
    menuitemcheckbox: ['group', 'menu', 'menubar'],
    menuitemradio: ['group', 'menu', 'menubar'],
    tab: ['tablist'],
    treeitem: ['group', 'tree'],
    caption: ['figure', 'grid', 'table', 'treegrid'],
  };

  /* The walk's aria-owns (see ownsOf): an owned node's parent is its owner. */
  let walkOwns = null;

  function parentOf (el) {
    const owner = walkOwns && walkOwns.owned.get (el);
    if (owner) return owner;
    if (el.parentElement) return el.parentElement;
    const root = el.parentNode;
    return root && root.host ? root.host : null;
  }

  function inContext (el, wanted) {
    for (let p = parentOf (el); p; p = parentOf (p))
      if (wanted.includes (roleOf (p, p.localName)))
        return true;
    return false;
  }

  /* Roles that are landmarks only with a name (WAI-ARIA 1.2 form, region). */
  function hasAuthorName (el) {
    if (isPlain (el))
      return false;
    const al = el.getAttribute ('aria-label');
    if (al && al.trim ()) return true;
    const t = el.getAttribute ('title');
    if (t && t.trim ()) return true;
    const lb = labelledByAttr (el);
    return !!lb && labelledByName (el, lb, NO_OPTIONS) !== '';
  }

  const SYNONYM_ROLES = { image: 'img', directory: 'list' };
  /* ---------- roles (HTML-AAM) ---------- */

  function inputRole (el) {
    const type = (el.getAttribute ('type') || 'text').toLowerCase ();
    switch (type) {
    case 'button': case 'submit': case 'reset': case 'image': case 'file': case 'color':
      return 'button';
    case 'checkbox':
      return el.hasAttribute ('switch') ? 'switch' : 'checkbox';
    case 'radio': return 'radio';
    case 'range': return 'slider';
    case 'number': return 'spinbutton';
    case 'hidden': return null;
    case 'search': return el.list ? 'combobox' : 'searchbox';
    case 'email': case 'tel': case 'text': case 'url':
      return el.list ? 'combobox' : 'textbox';
    default: return 'textbox';
    }
  }

  function implicitRole (el, tag) {
    switch (tag) {
    case 'a': case 'area': return el.hasAttribute ('href') ? 'link' : 'generic';
    case 'address': return 'group';
    case 'article': return 'article';
    case 'aside':
      /* Scoped to a sectioning element, an aside is a landmark only when
       * named (HTML-AAM). */
      return el.parentElement && el.parentElement.closest (SECTIONING_SCOPE) && !hasAuthorName (el)
        ? 'generic' : 'complementary';
    case 'blockquote': return 'blockquote';
    case 'button': return 'button';
    case 'caption': return 'caption';
    case 'code': return 'code';
    case 'dd': return 'definition';
    case 'del': case 's': return 'deletion';
    case 'details': return 'group';
    case 'dfn': case 'dt': return 'term';
    case 'dialog': return 'dialog';
    case 'dl': return 'list';
    case 'em': return 'emphasis';
    case 'fieldset': return 'group';
    case 'figure': return 'figure';
    case 'footer': return el.closest (LANDMARK_SCOPE) ? 'generic' : 'contentinfo';
    case 'form': return hasAuthorName (el) ? 'form' : 'generic';
    case 'h1': case 'h2': case 'h3': case 'h4': case 'h5': case 'h6': return 'heading';
    case 'header': return el.closest (LANDMARK_SCOPE) ? 'generic' : 'banner';
    case 'hgroup': return 'group';
    case 'hr': return 'separator';
    case 'iframe': return 'iframe';
    case 'img':
      if (el.getAttribute ('alt') === '' && !hasGlobalAria (el) && !el.hasAttribute ('title'))
        return 'none';
      return 'img';
    case 'input': return inputRole (el);
    case 'ins': return 'insertion';
    case 'li': return inContext (el, REQUIRED_CONTEXT.listitem) ? 'listitem' : 'generic';
    case 'main': return 'main';
    case 'mark': return 'mark';
    case 'math': return 'math';
    case 'menu': case 'ol': case 'ul': return 'list';
    case 'meter': return 'meter';
    case 'nav': return 'navigation';
    case 'optgroup': return 'group';
    case 'option': return 'option';
    case 'output': return 'status';
    case 'p': return 'paragraph';
    case 'progress': return 'progressbar';
    case 'search': return 'search';
    case 'section': return hasAuthorName (el) ? 'region' : 'generic';
    case 'select': return el.multiple || el.size > 1 ? 'listbox' : 'combobox';
    case 'strong': return 'strong';
    case 'sub': return 'subscript';
    case 'summary': return isDetailsSummary (el) ? 'button' : 'generic';
    case 'sup': return 'superscript';
    case 'svg':
      return hasGlobalAria (el) || (el.firstElementChild && el.querySelector (':scope > title'))
        ? 'img' : 'none';
    case 'table': return 'table';
    /* Engines expose no row group for these (html-aam#474, WPT's
     * html-aam/table-roles.html): they are generic. */
    case 'tbody': case 'tfoot': case 'thead':
      return anyFocusable (el, tag) || hasAnyGlobalAria (el) ? 'rowgroup' : 'generic';
    case 'td': {
      const kind = tableKind (el.parentElement, el);
      return kind === TABLE_LAYOUT ? 'generic' : kind === TABLE_GRID ? 'gridcell' : 'cell';
    }
    case 'th': {
      if (tableKind (el.parentElement, el) === TABLE_LAYOUT) return 'generic';
      const scope = el.getAttribute ('scope');
      if (scope === 'row' || scope === 'rowgroup') return 'rowheader';
      if (scope === 'col' || scope === 'colgroup') return 'columnheader';
      if (el.parentElement && el.parentElement.parentElement &&
          el.parentElement.parentElement.localName === 'thead') return 'columnheader';
      const row = el.parentElement;
      if (row && row.querySelector (':scope > td')) return 'rowheader';
      return 'columnheader';
    }
    case 'textarea': return 'textbox';
    case 'time': return 'time';
    case 'tr': return tableKind (el, el) === TABLE_LAYOUT ? 'generic' : 'row';
    default: return 'generic';
    }
  }

  /* Roles computed during one observation, as styles are; what table a
   * row's cells are in. */
  let roles = new Map ();
  let tableKinds = new Map ();

  const TABLE_DATA = 0, TABLE_GRID = 1, TABLE_LAYOUT = 2;

  /* Whether the table around @row (@el when it has no parent) is a data
   * table, a grid, or a layout table: a table whose role is none or
   * presentation passes it to its rows and cells (WAI-ARIA 1.2,
   * presentational roles inheritance), as the engines do. Asked once per
   * row: the cells of a row share their table. */
  function tableKind (row, el) {
    let kind = row ? tableKinds.get (row) : undefined;
    if (kind === undefined) {
      const t = (row || el).closest ('table');
      const r = t ? roleOf (t, 'table') : 'table';
      kind = r === 'grid' || r === 'treegrid' ? TABLE_GRID
        : r === 'none' || r === 'presentation' ? TABLE_LAYOUT : TABLE_DATA;
      if (row) tableKinds.set (row, kind);
    }
    return kind;
  }

  function roleOf (el, tag) {
    let r = roles.get (el);
    if (r === undefined) {
      r = computeRole (el, tag);
      roles.set (el, r);
    }
    return r;
  }

  function computeRole (el, tag) {
    const attr = isPlain (el) ? null : el.getAttribute ('role');
    if (attr) {
      for (let token of attr.trim ().toLowerCase ().split (/\s+/)) {
        token = SYNONYM_ROLES[token] || token;
        if (!VALID_ROLES.has (token))
          continue;
        /* Presentational role conflict resolution: a focusable element or
         * one with a global ARIA attribute keeps its native role. */
        if ((token === 'none' || token === 'presentation') &&
            (anyFocusable (el, tag) || hasAnyGlobalAria (el)))
          break;
        if ((token === 'form' || token === 'region') && !hasAuthorName (el))
          continue;
        /* Page-wide landmarks scoped to another landmark are none (as
         * <header> and <footer> there are). */
        if ((token === 'banner' || token === 'contentinfo') && el.parentElement &&
            el.parentElement.closest (LANDMARK_SCOPE))
          continue;
        const ctx = REQUIRED_CONTEXT[token];
        if (ctx && !inContext (el, ctx))
          continue;
        return token;
      }
    }
    return implicitRole (el, tag);
  }

  /* ---------- names (accname 1.2) ---------- */

  /* Whether a document's style sheets can give any element ::before or
   * ::after content: asking every element's pseudo style costs as much as
   * the rest of the walk. Unreadable (cross-origin) sheets count as yes. */
  let pseudoDocs = new WeakMap ();

  /* Whether a rule of @sheets says one of @words (or imports a sheet, or
   * cannot be read). */
  function sheetsMention (sheets, words) {
    for (const sheet of sheets) {
      let rules;
      try { rules = sheet.cssRules; } catch (e) { return true; }
      if (!rules) return true;
      for (const rule of rules) {
        const t = rule.cssText;
        if (t.includes ('@import') || words.some (w => t.includes (w)))
          return true;
      }
    }
    return false;
  }

  function rootSheetsMention (root, words) {
    return sheetsMention (root.styleSheets, words) ||
           (root.adoptedStyleSheets ? sheetsMention (root.adoptedStyleSheets, words) : false);
  }

  const PSEUDO_WORDS = [':before', ':after'];

  function docHasPseudo (root) {
    let v = pseudoDocs.get (root);
    if (v === undefined) {
      v = rootSheetsMention (root, PSEUDO_WORDS);
      pseudoDocs.set (root, v);
    }
    return v;
  }

  /* Whether an element of @el's tree scope can skip its content's
   * rendering (content-visibility: hidden, which hidden="until-found" gets
   * from the UA sheet): per scope and observation, so that pages without
   * it never read the property. */
  let contentHidingRoots = new Map ();
  const CONTENT_VISIBILITY_WORDS = ['content-visibility'];

  function mayHideContent (el) {
    const root = el.getRootNode ();
    let v = contentHidingRoots.get (root);
    if (v === undefined) {
      const scope = root.styleSheets ? root : el.ownerDocument;
      v = rootSheetsMention (scope, CONTENT_VISIBILITY_WORDS) ||
          !!(root.querySelector &&
             root.querySelector ('[hidden="until-found" i], [style*="content-visibility" i]'));
      contentHidingRoots.set (root, v);
    }
    return v;
  }

  /* Whether CSS renders none of @el's content (its own box stays). */
  function hidesContent (el, cs) {
    return mayHideContent (el) && cs.rendered && cs.d.contentVisibility === 'hidden';
  }

  /* CSS generated content of @el's ::before or ::after, as rendered: the
   * alternative text after "/" when the content gives one, apart from the
   * element's text (a space) when its box is not a plain inline one or has
   * horizontal padding or margin. */
  function pseudoText (el, which) {
    const root = el.getRootNode ();
    if (!docHasPseudo (root.styleSheets ? root : el.ownerDocument))
      return '';
    const ps = el.ownerDocument.defaultView.getComputedStyle (el, which);
    const c = ps.content;
    if (!c || c === 'none' || c === 'normal')
      return '';
    let out = '', alt = null;
    const re = /"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)'|attr\(\s*([-\w]+)\s*\)|counter\(\s*([-\w]+)[^)]*\)|(\/)/g;
    let m;
    while ((m = re.exec (c)) !== null) {
      let piece;
      if (m[5] !== undefined) {
        alt = '';
        continue;
      }
      if (m[3] !== undefined)
        piece = el.getAttribute (m[3]) || '';
      else if (m[4] !== undefined)
        piece = '';
      else
        piece = (m[1] !== undefined ? m[1] : m[2]).replace (/\\(.)/g, '$1');
      if (alt !== null) alt += piece;
      else out += piece;
    }
    if (alt !== null)
      out = alt;
    if (!out)
      return '';
    const apart = (ps.display !== 'inline' && ps.display !== 'contents') ||
                  parseFloat (ps.paddingLeft) > 0 || parseFloat (ps.paddingRight) > 0 ||
                  parseFloat (ps.marginLeft) > 0 || parseFloat (ps.marginRight) > 0;
    return apart ? (which === '::before' ? out + ' ' : ' ' + out) : out;
  }

  function isHiddenForName (el, cs) {
    return (!cs.styled && (cs.display === 'none' || cs.visibility !== 'visible')) ||
           (!isPlain (el) && el.getAttribute ('aria-hidden') === 'true');
  }

  function selectedOptionsText (el) {
    if (el.localName === 'select') {
      const parts = [];
      for (const o of el.selectedOptions)
        parts.push (norm (o.label || o.textContent));
      return parts.join (' ');
    }
    const sel = el.querySelectorAll ('[role=option][aria-selected=true]');
    return Array.from (sel, o => norm (o.textContent)).join (' ');
  }

  function rangeValue (el) {
    const vt = el.getAttribute ('aria-valuetext');
    if (vt) return vt;
    const vn = el.getAttribute ('aria-valuenow');
    if (vn) return vn;
    return el.value !== undefined && el.value !== null ? String (el.value) : '';
  }

  function isSecure (el) {
    if (el.localName !== 'input')
      return false;
    if ((el.getAttribute ('type') || '').toLowerCase () === 'password')
      return true;
    const ac = (el.getAttribute ('autocomplete') || '').toLowerCase ();
    return /\b(current-password|new-password|one-time-code)\b/.test (ac);
  }

  function embeddedValue (el, role) {
    if (role === 'textbox' || role === 'searchbox') {
      if (isSecure (el)) return '';
      return el.value !== undefined ? el.value : el.textContent;
    }
    if (role === 'combobox' || role === 'listbox') {
      if (el.localName === 'input') return isSecure (el) ? '' : el.value;
      return selectedOptionsText (el);
    }
    if (RANGE_ROLES.has (role))
      return rangeValue (el);
    return null;
  }

  /* Host-language names (HTML-AAM), without title/placeholder: a string, or
   * null when the element has none of its own. An alt attribute that is
   * present is the name even when empty (img, area, input type=image). */
  function nativeName (el, tag, role, o) {
    switch (tag) {
    case 'input': {
      const type = (el.getAttribute ('type') || 'text').toLowerCase ();
      const labels = labelsName (el, o);
      if (labels !== null) return labels;
      if (type === 'button' || type === 'submit' || type === 'reset') {
        const v = el.getAttribute ('value');
        if (v !== null && v !== '') return v;
        if (type === 'submit') return 'Submit';
        if (type === 'reset') return 'Reset';
        return null;
      }
      if (type === 'image') {
        const alt = el.getAttribute ('alt');
        if (alt !== null) return alt;
        const v = el.getAttribute ('value');
        if (v) return v;
        return el.getAttribute ('title') || 'Submit';
      }
      return null;
    }
    case 'select': case 'textarea': case 'meter': case 'progress': case 'output': case 'button':
      return labelsName (el, o);
    case 'img': case 'area':
      return el.getAttribute ('alt');
    case 'fieldset':
      return childName (el, 'legend', o);
    case 'table':
      return childName (el, 'caption', o);
    case 'figure':
      return childName (el, 'figcaption', o);
    case 'optgroup':
      return el.getAttribute ('label');
    case 'option':
      return el.hasAttribute ('label') ? el.getAttribute ('label') : null;
    case 'svg': {
      const t = el.querySelector (':scope > title');
      return t ? t.textContent : null;
    }
    }
    return null;
  }

  /* The name a <legend>, <caption> or <figcaption> child gives: none when
   * it is hidden (HTML-AAM: hidden elements name nothing). */
  function childName (el, tag, o) {
    const c = el.querySelector (':scope > ' + tag);
    if (!c || isHiddenForName (c, cssOf (c)))
      return null;
    const s = contentName (c, o);
    return s.trim () ? s : null;
  }

  /* An element's <label>s. WebKit's `labels` searches the whole tree scope
   * on every call (quadratic over a page of buttons), so a document's labels
   * are indexed by their control once per observation. */
  let labelIndex = new WeakMap ();

  function labelsOf (el) {
    const root = el.getRootNode ();
    let index = labelIndex.get (root);
    if (index === undefined) {
      index = new Map ();
      const all = root.querySelectorAll ? root.querySelectorAll ('label') : [];
      for (const label of all) {
        const c = label.control;
        if (!c) continue;
        const list = index.get (c);
        if (list) list.push (label);
        else index.set (c, [label]);
      }
      labelIndex.set (root, index);
    }
    return index.get (el) || null;
  }

  function labelsName (el, o) {
    if (!('labels' in el))
      return null;
    const labels = labelsOf (el);
    if (!labels || labels.length === 0)
      return null;
    const parts = [];
    for (const label of labels) {
      /* A hidden label still names its control, as a referenced node does. */
      const hidden = isHiddenForName (label, cssOf (label)) || !!label.closest ('[aria-hidden=true]');
      const sub = { visited: new Set ([el]), lb: o.lb, hiddenOk: o.hiddenOk || hidden,
                    cache: hidden ? null : o.cache };
      parts.push (contentName (label, sub));
    }
    const s = parts.join (' ');
    return s.trim () ? s : null;
  }

  /* Whether CSS renders @cs (an element's or a pseudo-element's box) apart
   * from the text around it: anything but a plain inline box. */
  function separates (cs) {
    const d = cs.display;
    if (d === 'inline' || d === 'contents')
      return false;
    return true;
  }

  /* Elements whose own role keeps them out of a name from content: a
   * treeitem's child group, a menuitem's submenu (they name themselves). */
  const OWN_NAME_SKIP = { treeitem: new Set (['group', 'tree']), menuitem: new Set (['menu']) };

  /* The text of @el's subtree, per accname 2F (and 2G for text nodes):
   * light or shadow children, slotted nodes, then nodes @el owns. */
  function contentName (el, o) {
    let out = pseudoText (el, '::before');
    const skip = o.skipRoles;
    const add = child => {
      if (child.nodeType === 3) {
        out += child.data;
      } else if (child.nodeType === 1) {
        if (child.localName === 'br') {
          out += ' ';
          return;
        }
        if (skip && skip.has (roleOf (child, child.localName)))
          return;
        const s = textAlt (child, o);
        if (s)
          out += separates (cssOf (child)) ? ' ' + s + ' ' : s;
      }
    };
    const list = el.shadowRoot || el.localName === 'slot' ? children (el) : null;
    for (let i = 0, child = list ? list[0] : el.firstChild; child;
         child = list ? list[++i] : child.nextSibling)
      add (child);
    const owns = isPlain (el) ? null : el.getAttribute ('aria-owns');
    if (owns)
      for (const id of owns.trim ().split (/\s+/)) {
        const ref = byId (el, id);
        /* Owned from under a hidden ancestor, a node stays hidden. */
        if (ref && ref !== el && !ref.contains (el) &&
            (!ref.checkVisibility || ref.checkVisibility ({ visibilityProperty: true }) ||
             o.hiddenOk)) {
          /* Rendered elsewhere: apart from the owner's own text. */
          out += ' ';
          add (ref);
          out += ' ';
        }
      }
    out += pseudoText (el, '::after');
    return out;
  }

  /* The text of @el's subtree (contentName()), computed once per
   * observation where nothing in the computation changes it: a row named
   * from its cells and then each cell named from its content, a heading
   * and then its link, read the cells' and the link's text once. */
  let contents = new Map ();

  function contentOf (el, o) {
    if (!o.cache || o.lb || o.hiddenOk || o.skipRoles)
      return contentName (el, o);
    let s = contents.get (el);
    if (s === undefined) {
      s = contentName (el, o);
      contents.set (el, s);
    }
    return s;
  }

  /* accname 1.2 text alternative of a node reached by recursion. */
  function textAlt (el, o) {
    if (o.visited.has (el))
      return '';
    o.visited.add (el);
    const tag = el.localName;
    if (SKIP_TAGS.has (tag))
      return '';
    const cs = cssOf (el);
    if (!o.hiddenOk && isHiddenForName (el, cs)) {
      /* A hidden element may still hold visible descendants. */
      if (cs.none || (!isPlain (el) && el.getAttribute ('aria-hidden') === 'true'))
        return '';
      let s = '';
      for (const child of children (el))
        if (child.nodeType === 1)
          s += textAlt (child, o);
      return s;
    }
    /* A slot is no node of the tree: only what it shows counts. */
    if (tag === 'slot')
      return contentName (el, o);
    const cacheable = !o.lb && !o.hiddenOk && o.cache && !o.skipRoles;
    if (cacheable && o.cache.has (el))
      return o.cache.get (el);
    const role = roleOf (el, tag);
    let s = '';
    /* 2B */
    const lb = !o.lb && labelledByAttr (el);
    if (lb)
      s = labelledByName (el, lb, o);
    /* 2C */
    if (!s.trim ()) {
      const v = embeddedValue (el, role);
      if (v !== null)
        s = v;
    }
    const plain = isPlain (el);
    if (!plain && (s === '' || !s.trim ())) {
      const al = el.getAttribute ('aria-label');
      if (al && al.trim ())
        s = al;
    }
    if (!s.trim ()) {
      const n = nativeName (el, tag, role, o);
      if (n !== null)
        s = n;
      else
        s = contentOf (el, o);
    }
    if (!plain && !s.trim ())
      s = el.getAttribute ('title') || '';
    if (cacheable)
      o.cache.set (el, s);
    return s;
  }

  function labelledByName (el, ids, o) {
    const parts = [];
    for (const id of ids.trim ().split (/\s+/)) {
      const ref = byId (el, id);
      if (!ref)
        continue;
      const hidden = isHiddenForName (ref, cssOf (ref));
      /* Within one computation a node counts once: what a nested
       * aria-labelledby took is skipped where the content reaches it. */
      const sub = { visited: o.visited || new Set (), lb: true, hiddenOk: o.hiddenOk || hidden,
                    cache: null };
      /* A directly referenced node contributes its whole text alternative,
       * computed from content when it has no other. */
      let s = '';
      if (o.visited) o.visited.add (ref);
      const al = ref.localName === 'slot' ? null : ref.getAttribute ('aria-label');
      if (al && al.trim ())
        s = al;
      else {
        const role = roleOf (ref, ref.localName);
        const v = embeddedValue (ref, role);
        s = v !== null ? v : nativeName (ref, ref.localName, role, sub);
        if (!s || !s.trim ()) {
          sub.visited.add (ref);
          s = contentName (ref, sub);
        }
        if (!s.trim ())
          s = ref.getAttribute ('title') || '';
      }
      parts.push (s);
    }
    return norm (parts.join (' '));
  }

  /* Roles on which WAI-ARIA 1.2 prohibits author names: they still answer
   * to aria-labelledby, aria-label and title (as the engines and WPT do),
   * never to their content. */
  const NAME_PROHIBITED = new Set (['generic', 'none', 'presentation', 'paragraph', 'rowgroup',
    'caption', 'code', 'deletion', 'emphasis', 'insertion', 'strong', 'subscript', 'superscript',
    'mark', 'time', 'term', 'definition']);

  const NO_OPTIONS = { hiddenOk: false };

  /* Where the last nameOf() took its name from (no array per element). */
  const FROM_OTHER = 0, FROM_CONTENT = 1, FROM_TITLE = 2;
  let nameSource = FROM_OTHER;

  /* The name of an element that is the root of a computation; nameSource
   * says whether it came from the content or the title. */
  function nameOf (el, tag, role, cache) {
    nameSource = FROM_OTHER;
    const plain = isPlain (el);
    if (!plain) {
      const lb = labelledByAttr (el);
      if (lb) {
        const s = labelledByName (el, lb, NO_OPTIONS);
        if (s) return s;
      }
      const al = el.getAttribute ('aria-label');
      if (al && al.trim () && tag !== 'slot')
        return norm (al);
    }
    if (!NAME_PROHIBITED.has (role) || tag === 'summary') {
      const o = { visited: new Set ([el]), lb: false, hiddenOk: false, cache,
                  skipRoles: OWN_NAME_SKIP[role] || null };
      const n = nativeName (el, tag, role, o);
      if (n !== null) {
        const s = norm (n);
        if (s || ((tag === 'img' || tag === 'area' || tag === 'input') && el.hasAttribute ('alt')))
          return s;
      }
      /* HTML-AAM names a <summary> from its subtree whatever its role. */
      if (NAME_FROM_CONTENT.has (role) || tag === 'summary') {
        const s = norm (contentOf (el, o));
        if (s) {
          nameSource = FROM_CONTENT;
          return s;
        }
      }
    }
    if (plain)
      return '';
    const title = el.getAttribute ('title');
    if (title && title.trim ()) {
      nameSource = FROM_TITLE;
      return norm (title);
    }
    const ph = el.getAttribute ('placeholder') || el.getAttribute ('aria-placeholder');
    if (ph && (TEXT_INPUT_ROLES.has (role)))
      return norm (ph);
    return '';
  }

  function descriptionOf (el, name) {
    if (isPlain (el))
      return '';
    const db = el.getAttribute ('aria-describedby');
    if (db) {
      const s = labelledByName (el, db, { hiddenOk: false });
      if (s) return s;
    }
    const d = el.getAttribute ('aria-description');
    if (d && d.trim ()) return norm (d);
    const t = el.getAttribute ('title');
    if (t && norm (t) !== name) return norm (t);
    return '';
  }

  /* ---------- states ---------- */

  const noAttribute = () => null;

  function setStates (n, el, tag, role, cs, ctx) {
    const aria = isPlain (el) ? noAttribute : a => el.getAttribute (a);
    if (role === 'checkbox' || role === 'radio' || role === 'switch' ||
        role === 'menuitemcheckbox' || role === 'menuitemradio') {
      if (tag === 'input') {
        if (el.indeterminate && role === 'checkbox') n.checked = 'mixed';
        else if (el.checked) n.checked = true;
      } else {
        const c = aria ('aria-checked');
        if (c === 'true') n.checked = true;
        else if (c === 'mixed') n.checked = 'mixed';
      }
    }
    if (tag === 'option' && el.selected) n.selected = true;
    else if (aria ('aria-selected') === 'true') n.selected = true;
    const ex = aria ('aria-expanded');
    if (ex === 'true') n.expanded = true;
    else if (ex === 'false') n.expanded = false;
    else if (tag === 'summary' && el.parentElement && el.parentElement.localName === 'details')
      n.expanded = el.parentElement.open;
    const pr = aria ('aria-pressed');
    if (pr === 'true') n.pressed = true;
    else if (pr === 'mixed') n.pressed = 'mixed';
    if (aria ('aria-disabled') === 'true' || (('disabled' in el) && el.matches (':disabled')))
      n.disabled = true;
    if (el.required || aria ('aria-required') === 'true') n.required = true;
    const inv = aria ('aria-invalid');
    if (inv && inv !== 'false') n.invalid = true;
    if ((el.readOnly && (tag === 'input' || tag === 'textarea')) || aria ('aria-readonly') === 'true')
      n.readonly = true;
    if (role === 'heading') {
      const l = parseInt (aria ('aria-level'), 10);
      n.level = l > 0 ? l : (/^h[1-6]$/.test (tag) ? +tag[1] : 2);
    } else if (aria ('aria-level')) {
      const l = parseInt (aria ('aria-level'), 10);
      if (l > 0) n.level = l;
    }
    if (n.secure) {
      /* never a value */
    } else if (role === 'textbox' || role === 'searchbox' ||
               (role === 'combobox' && tag === 'input')) {
      const v = tag === 'input' || tag === 'textarea' ? el.value : el.textContent;
      if (v) n.value = v.length > 200 ? v.slice (0, 200) + '…' : v;
    } else if (role === 'combobox' && tag === 'select') {
      const v = selectedOptionsText (el);
      if (v) n.value = v;
    } else if (RANGE_ROLES.has (role)) {
      const v = rangeValue (el);
      if (v !== '') n.value = v;
      if (tag === 'progress' || tag === 'meter' || aria ('aria-valuemax') !== null) {
        const max = tag === 'progress' || tag === 'meter' ? el.max : aria ('aria-valuemax');
        if (max !== null && max !== undefined) n.max = String (max);
      }
    }
    if (el === ctx.active) n.focused = true;
    if ((tag === 'dialog' && el.open && el.matches (':modal')) || aria ('aria-modal') === 'true')
      n.modal = true;
  }

  /* ---------- the walk ---------- */

  function deepActive (doc) {
    let a = doc.activeElement;
    for (;;) {
      if (a && a.shadowRoot && a.shadowRoot.activeElement)
        a = a.shadowRoot.activeElement;
      else if (a && a.localName === 'iframe') {
        let d = null;
        try { d = a.contentDocument; } catch (e) { d = null; }
        if (d && d.activeElement && d.activeElement !== d.body) a = d.activeElement;
        else break;
      } else
        break;
    }
    return a;
  }

  function boxOf (el, ctx) {
    const r = el.getBoundingClientRect ();
    return [Math.round (r.left + ctx.offX), Math.round (r.top + ctx.offY),
            Math.round (r.width), Math.round (r.height)];
  }

  /* An element with display: contents has no box of its own: its
   * content's, or where there is none its parent's (or none at all, at the
   * top of the page). */
  function contentsBox (el, ctx, parentBox) {
    const range = el.ownerDocument.createRange ();
    range.selectNodeContents (el);
    const r = range.getBoundingClientRect ();
    if (r.width || r.height || !parentBox)
      return [Math.round (r.left + ctx.offX), Math.round (r.top + ctx.offY),
              Math.round (r.width), Math.round (r.height)];
    return parentBox;
  }

  function inViewport (b, ctx) {
    if (b[2] === 0 && b[3] === 0)
      return b[0] >= 0 && b[1] >= 0 && b[0] < ctx.vw && b[1] < ctx.vh;
    return b[0] < ctx.vw && b[1] < ctx.vh && b[0] + b[2] > 0 && b[1] + b[3] > 0;
  }

  /* Marks the walk over a limit once the counts pass it. */
  function charge (count, max) {
    if (count.hard)
      return;
    const f = count.over ? 2 : 1;
    if (count.nodes >= max.nodes * f || count.elements >= max.elements * f) {
      if (count.over) count.hard = true;
      count.over = true;
    }
  }

  /* Past the limits, an element the viewport does not show (or, past twice
   * the limits, any element) is counted with its subtree instead of
   * walked: one box and one native count, no wrappers for its descendants.
   * Consecutive ones share one marker. Returns whether @el was skipped. */
  function skipped (el, ctx, out) {
    const r = el.getBoundingClientRect ();
    const b = [r.left + ctx.offX, r.top + ctx.offY, r.width, r.height];
    if (!ctx.count.hard && inViewport (b, ctx))
      return false;
    const n = el.getElementsByTagName ('*').length + 1;
    ctx.count.notObserved += n;
    const last = out[out.length - 1];
    if (last && last.skip)
      last.skip += n;
    else
      out.push ({ skip: n, y: b[1] });
    return true;
  }

  /* Appends what @el contributes to @out: one node, or, for a flattened
   * wrapper, its children. */
  function visit (el, ctx, out, parentVisible, parentStyle, parentBox) {
    const tag = el.localName;
    if (SKIP_TAGS.has (tag))
      return;
    /* A node another element owns (aria-owns) sits under its owner. */
    if (ctx.owns && ctx.owns.owned.has (el)) {
      if (ctx.owns.placing !== el)
        return;
      ctx.owns.placing = null;
    }
    const plain = isPlain (el);
    if (!plain && (el.getAttribute ('aria-hidden') === 'true' || el.hasAttribute ('inert')))
      return;
    if (ctx.modal && !ctx.inModal) {
      if (el === ctx.modal)
        ctx = Object.assign ({}, ctx, { inModal: true });
      else if (!el.contains (ctx.modal))
        return;
    }
    if (ctx.count.over && skipped (el, ctx, out))
      return;
    const cs = cssOf (el);
    if (cs.none)
      return;
    const contents = cs.contents;
    {
      /* A block separates the text before it from its own. */
      const last = out[out.length - 1];
      if (last && last.text !== undefined && separates (cs)) out.push (BREAK);
    }
    ctx.count.elements++;
    charge (ctx.count, ctx.max);
    if (tag === 'br') {
      /* A line break separates the words around it. */
      const last = out[out.length - 1];
      if (last && last.text !== undefined) last.text += ' ';
      return;
    }
    const visible = cs.visibility === 'visible';

    let role = visible ? roleOf (el, tag) : 'none';
    if (role === null)
      return;
    if (tag === 'html' || tag === 'body')
      role = 'generic';

    let clickable = false;
    if (visible && (FLATTEN.has (role) || role === 'img' || role === 'listitem')) {
      /* The parent's cursor is read only when this one is a pointer. */
      if ((cursorMayDiffer (el, ctx) && cursorOf (cs) === 'pointer' &&
           cursorOf (parentStyle) !== 'pointer') ||
          (!plain && el.hasAttribute ('onclick')))
        clickable = true;
    }
    const tabbable = visible && FLATTEN.has (role) && focusable (el);

    let name = '', fromContent = false, fromTitle = false;
    if (visible && role !== 'none' && role !== 'presentation') {
      if (clickable || tabbable) {
        name = nameOf (el, tag, role === 'generic' || role === 'paragraph' ? 'button' : role, ctx.cache);
        fromContent = nameSource === FROM_CONTENT;
      } else {
        name = nameOf (el, tag, role, ctx.cache);
        fromContent = nameSource === FROM_CONTENT;
        fromTitle = nameSource === FROM_TITLE;
        /* A wrapper's title is a tooltip, no reason to list the wrapper. */
        if (fromTitle && FLATTEN.has (role))
          name = '';
      }
    }

    const flatten = !visible || (FLATTEN.has (role) && !name && !clickable && !tabbable) ||
                    role === 'none' || role === 'presentation';

    let box = null;
    if (!flatten || contents)
      box = contents ? contentsBox (el, ctx, parentBox) : boxOf (el, ctx);

    let node = null, target = out;
    if (!flatten) {
      node = { ref: refOf (el, ctx.prefix), role: FLATTEN.has (role) ? 'generic' : role };
      if (name) node.name = name.length > 400 ? name.slice (0, 400) + '…' : name;
      if (clickable) node.clickable = true;
      if (tabbable && !clickable) node.focusable = true;
      const secure = isSecure (el);
      if (secure) node.secure = true;
      setStates (node, el, tag, role, cs, ctx);
      const desc = descriptionOf (el, name);
      if (desc) node.desc = desc;
      node.box = box;
      node.inView = inViewport (box, ctx);
      /* An image without a name (no alt: HTML-AAM's img, which the
       * engines list) says nothing to the model. */
      if (role === 'img' && !name && !clickable) node.quiet = true;
      node.children = [];
      target = node.children;
      ctx.count.nodes++;
      ctx.count.chars += name.length;
      if (INTERACTIVE.has (node.role) || clickable || tabbable) ctx.count.interactive++;
      if (secure) ctx.secure.push ({ ref: node.ref, box, inView: node.inView });
      if (role === 'option' && parentBox && box[2] === 0 && box[3] === 0) {
        node.box = parentBox;
        node.inView = inViewport (parentBox, ctx);
      }
    }

    if (tag === 'iframe') {
      if (node) {
        visitFrame (el, node, ctx);
        out.push (node);
      }
      return;
    }
    if (tag === 'label' && !node)
      out.push (BREAK);
    if (tag === 'img') {
      if (el.useMap && visible)
        visitAreas (el, ctx, target, node ? node.box : boxOf (el, ctx));
    } else if (tag === 'input' || tag === 'textarea')
      ;
    else {
      let textBox = box;
      /* A closed <details> renders its summary only; without one, the UA's. */
      const closed = tag === 'details' && !el.open;
      if (tag === 'details' && node && visible && !el.querySelector (':scope > summary'))
        target.push (uaSummary (el, node, ctx));
      /* Siblings, not a NodeList's iterator: several times faster in WebKit. */
      const list = el.shadowRoot || tag === 'slot' ? children (el) : null;
      const first = hidesContent (el, cs) ? null : list ? list[0] : el.firstChild;
      for (let i = 0, child = first; child;
           child = list ? list[++i] : child.nextSibling) {
        if (closed && !(child.nodeType === 1 && child.localName === 'summary'))
          continue;
        if (child.nodeType === 1) {
          visitGuarded (child, ctx, target, visible, cs, node ? node.box : (box || parentBox));
        } else if (child.nodeType === 3 && visible) {
          const t = child.data;
          ctx.count.chars += Math.min (t.length, MAX_TEXT);
          if (!t || !/\S/.test (t))
            {
              const last = target[target.length - 1];
              if (last && last.text !== undefined) last.text += ' ';
              continue;
            }
          if (!textBox) textBox = box = boxOf (el, ctx);
          const last = target[target.length - 1];
          const iv = inViewport (textBox, ctx);
          if (ctx.count.chars > ctx.max.chars && !iv) {
            ctx.count.textClipped += t.length;
            continue;
          }
          if (last && last.text !== undefined) {
            last.text += t;
            if (iv) last.inView = true;
          } else {
            target.push ({ text: t, inView: iv, y: textBox[1] });
          }
        }
      }
    }

    const owned = ctx.owns && ctx.owns.byOwner.get (el);
    if (owned)
      for (const o of owned) {
        ctx.owns.placing = o;
        visitGuarded (o, ctx, target, visible, cs, node ? node.box : (box || parentBox));
        ctx.owns.placing = null;
      }

    if (node) {
      finishNode (node, fromContent);
      out.push (node);
    } else if (tag === 'label') {
      const last = out[out.length - 1];
      if (last && last.text !== undefined) last.text += ' ';
      out.push (BREAK);
    } else {
      /* A block wrapper separates the text before its end from what
       * follows (a break after anything but text separates nothing). */
      const last = out[out.length - 1];
      if (last && last.text !== undefined && separates (cs)) {
        last.text += ' ';
        out.push (BREAK);
      }
    }
  }

  const BREAK = { brk: true };

  /* A <details> without a <summary> child shows the UA's own: a disclosure
   * button named "Details", as engines expose it (HTML: "the user agent
   * should provide its own legend"). No element of the page stands for it,
   * so its ref resolves to the <details>; its box is the first line of the
   * <details>, the whole of it while closed. */
  function uaSummary (el, node, ctx) {
    let ref = state.uaSummaries.get (el);
    if (ref === undefined) {
      ref = (ctx.prefix || '') + 'e' + state.next++;
      state.uaSummaries.set (el, ref);
      state.byRef.set (ref, new WeakRef (el));
    }
    const b = node.box;
    let h = b[3];
    if (el.open) {
      const cs = el.ownerDocument.defaultView.getComputedStyle (el);
      const line = parseFloat (cs.lineHeight) || parseFloat (cs.fontSize) * 1.2;
      if (line > 0) h = Math.min (h, Math.round (line));
    }
    const box = [b[0], b[1], b[2], h];
    ctx.count.nodes++;
    ctx.count.interactive++;
    return { ref, role: 'button', name: 'Details', expanded: el.open, box,
             inView: inViewport (box, ctx) };
  }

  /* An image map's <area href>s are links inside the image that uses the
   * map (the <map> itself renders nothing), each with the box its coords
   * give over the image. */
  function visitAreas (img, ctx, out, imgBox) {
    const id = img.useMap.replace (/^#/, '');
    let map = null;
    for (const m of img.ownerDocument.getElementsByTagName ('map'))
      if (m.name === id || m.id === id) { map = m; break; }
    if (!map)
      return;
    for (const area of map.getElementsByTagName ('area')) {
      const role = roleOf (area, 'area');
      if (role !== 'link')
        continue;
      let box = imgBox;
      const c = (area.getAttribute ('coords') || '').split (/[\s,]+/).map (Number);
      const shape = (area.getAttribute ('shape') || 'rect').toLowerCase ();
      if ((shape === 'rect' || shape === 'rectangle') && c.length >= 4 && c.every (isFinite))
        box = [imgBox[0] + Math.min (c[0], c[2]), imgBox[1] + Math.min (c[1], c[3]),
               Math.abs (c[2] - c[0]), Math.abs (c[3] - c[1])];
      const n = { ref: refOf (area, ctx.prefix), role, box, inView: inViewport (box, ctx) };
      const name = nameOf (area, 'area', role, ctx.cache);
      if (name) n.name = name;
      ctx.count.nodes++;
      ctx.count.interactive++;
      out.push (n);
    }
  }

  /* visit(), where an exception fails @el's subtree only: what the subtree
   * had added is taken back and one node marked `error` stands for it. */
  function visitGuarded (el, ctx, out, parentVisible, parentStyle, parentBox) {
    const mark = out.length;
    try {
      visit (el, ctx, out, parentVisible, parentStyle, parentBox);
    } catch (e) {
      out.length = mark;
      ctx.count.errors++;
      let message = 'error';
      try { message = clip (String (e && e.message !== undefined ? e.message : e), 200); }
      catch (e2) { /* keep "error" */ }
      const node = { ref: refOf (el, ctx.prefix), role: 'generic', error: message,
                     box: parentBox || [0, 0, 0, 0], inView: false };
      node.inView = inViewport (node.box, ctx);
      out.push (node);
    }
  }

  function isInteractiveNode (n) {
    return n.role !== undefined && (INTERACTIVE.has (n.role) || n.clickable || n.focusable ||
                                    n.role === 'iframe');
  }

  function hasInteractive (n) {
    if (n.role === undefined) return false;
    if (isInteractiveNode (n)) return true;
    if (n.children) for (const c of n.children) if (hasInteractive (c)) return true;
    return false;
  }

  /* Normalizes text runs, drops what the name already says, and folds the
   * in-viewport flag upwards. */
  function finishNode (node, fromContent) {
    const kids = [];
    let brk = false;
    for (const c of node.children) {
      if (c === BREAK) {
        brk = true;
        continue;
      }
      if (c.text !== undefined) {
        c.text = clip (norm (c.text), MAX_TEXT);
        if (!c.text || c.text === node.name) continue;
        const prev = kids[kids.length - 1];
        if (prev && prev.text !== undefined && !brk) {
          prev.text += ' ' + c.text;
          prev.inView = prev.inView || c.inView;
          continue;
        }
      }
      brk = false;
      kids.push (c);
    }
    /* A label's text right before (or after) the control it names says
     * nothing the control's line does not. */
    for (let i = 0; i < kids.length; i++) {
      const t = kids[i].text;
      if (t === undefined) continue;
      const nx = kids[i + 1], pv = kids[i - 1];
      if ((nx && nx.name === t && INTERACTIVE.has (nx.role)) ||
          (pv && pv.name === t && INTERACTIVE.has (pv.role))) {
        if (!kids[i].inView || (nx && nx.name === t ? nx : pv).inView) {
          kids.splice (i, 1);
          i--;
        }
      }
    }
    let keep = kids;
    if (fromContent || (node.name && kids.length === 1 && kids[0].text === node.name) ||
        (node.name && INTERACTIVE.has (node.role))) {
      /* The element children stay in the tree, as the engines' trees
       * keep a row's cells, a link's image and a card link's heading; the
       * ones that hold no control say only what this node's name says, so
       * they are quiet: the model's text leaves them out. */
      keep = kids.filter (c => {
        if (c.text !== undefined || c.role === undefined) return false;
        if (!hasInteractive (c)) c.quiet = true;
        return true;
      });
    }
    if (node.role === 'img' || node.role === 'heading')
      keep = keep.filter (c => c.text === undefined);
    node.children = keep;
    const cell = node.role === 'cell' && fromContent;
    if ((node.quiet || cell) && keep.some (hasInteractive)) {
      /* An image quiet for want of a name that holds links (its map's
       * areas) is not quiet. A table cell named from its content that
       * holds controls: its row already says the text, the controls get
       * the lines. */
      node.quiet = undefined;
      if (cell) node.through = true;
    }
    if (!node.inView)
      for (const c of keep)
        if (c.inView) { node.inView = true; break; }
    if (keep.length === 0)
      node.children = undefined;
  }

  function visitFrame (el, node, ctx) {
    let src = el.getAttribute ('src') || 'about:blank';
    let origin = '';
    try { origin = new URL (src, el.baseURI).origin; } catch (e) { origin = ''; }
    let doc = null;
    try { doc = el.contentDocument; } catch (e) { doc = null; }
    let fn = state.frames.get (el);
    if (fn === undefined) {
      fn = state.nextFrame++;
      state.frames.set (el, fn);
    }
    node.frame = 'f' + fn;
    if (!doc || !doc.documentElement) {
      node.crossOrigin = true;
      if (origin && origin !== 'null') node.origin = origin;
      ctx.frames.push ({ ref: node.ref, frame: node.frame, src, origin, crossOrigin: true });
      return;
    }
    ctx.frames.push ({ ref: node.ref, frame: node.frame, src: doc.URL, origin: doc.location.origin,
                       crossOrigin: false });
    const cs = el.ownerDocument.defaultView.getComputedStyle (el);
    const r = el.getBoundingClientRect ();
    const sub = Object.assign ({}, ctx, {
      prefix: 'f' + fn,
      offX: ctx.offX + r.left + el.clientLeft + parseFloat (cs.paddingLeft),
      offY: ctx.offY + r.top + el.clientTop + parseFloat (cs.paddingTop),
      modal: null, inModal: false,
    });
    const kids = [];
    if (!node.name && doc.title) node.name = norm (doc.title);
    visitGuarded (doc.documentElement, sub, kids, true, null, node.box);
    node.children = kids;
    finishNode (node, false);
  }

  /* ---------- serialization ---------- */

  const q = s => '"' + s.replace (/\\/g, '\\\\').replace (/"/g, '\\"') + '"';

  function clip (s, n) {
    return s.length > n ? s.slice (0, n) + '…' : s;
  }

  function nodeLine (n, maxName, noName) {
    let s = n.role;
    if (n.name && !noName) s += ' ' + q (clip (n.name, maxName));
    if (n.level !== undefined) s += ' level=' + n.level;
    if (n.checked === true) s += ' checked';
    else if (n.checked === 'mixed') s += ' checked=mixed';
    if (n.selected) s += ' selected';
    if (n.expanded === true) s += ' expanded';
    else if (n.expanded === false) s += ' collapsed';
    if (n.pressed === true) s += ' pressed';
    else if (n.pressed === 'mixed') s += ' pressed=mixed';
    if (n.disabled) s += ' disabled';
    if (n.required) s += ' required';
    if (n.invalid) s += ' invalid';
    if (n.readonly) s += ' readonly';
    if (n.focused) s += ' focused';
    if (n.modal) s += ' modal';
    if (n.secure) s += ' secure';
    if (n.clickable) s += ' clickable';
    if (n.focusable) s += ' focusable';
    if (n.value !== undefined)
      s += ' value=' + (/^-?\d+(\.\d+)?$/.test (n.value) ? n.value : q (clip (n.value, maxName)));
    if (n.max !== undefined) s += ' max=' + n.max;
    if (n.crossOrigin) s += ' cross-origin';
    if (n.origin) s += ' origin=' + n.origin;
    if (n.desc) s += ' desc=' + q (clip (n.desc, maxName));
    if (n.error) s += ' error=' + q (n.error);
    return s + ' #' + n.ref;
  }

  /* "heading level=3 #e18 > link "Lamp" #e19": a node whose only child
   * carries the same name shares one line with it. Returns [line, node whose
   * children come next]. */
  function chainLine (n, maxName, quietToo) {
    let line = '';
    let cur = n;
    while (cur.name && cur.children && cur.children.length === 1 &&
           cur.children[0].text === undefined && cur.children[0].name === cur.name &&
           (quietToo || !cur.children[0].quiet)) {
      line += nodeLine (cur, maxName, true) + ' > ';
      cur = cur.children[0];
    }
    return [line + nodeLine (cur, maxName, false), cur];
  }

  function fullText (nodes, depth, lines) {
    const pad = ' '.repeat (depth);
    for (const n of nodes) {
      if (n.text !== undefined) {
        lines.push (pad + q (n.text));
        continue;
      }
      if (n.skip) {
        lines.push (pad + '… ' + n.skip + ' elements not observed (limit)');
        continue;
      }
      if (n.through) {
        fullText (n.children, depth, lines);
        continue;
      }
      const [line, last] = chainLine (n, 400, true);
      lines.push (pad + line);
      if (last.children)
        fullText (last.children, depth + 1, lines);
    }
    return lines;
  }

  const SUMMARY_ROLES = new Set ([...INTERACTIVE, 'heading', 'listitem', 'row', 'article',
    'navigation', 'main', 'banner', 'contentinfo', 'complementary', 'region', 'form', 'dialog',
    'table', 'list', 'img', 'iframe', 'search']);

  const NOT_OBSERVED = 'elements not observed';

  function countInto (n, counts) {
    if (n.quiet)
      return;
    if (n.text !== undefined) {
      counts.text = (counts.text || 0) + 1;
      return;
    }
    if (n.skip) {
      counts[NOT_OBSERVED] = (counts[NOT_OBSERVED] || 0) + n.skip;
      return;
    }
    const k = n.clickable ? 'clickable' : n.role;
    if (SUMMARY_ROLES.has (k) || k === 'clickable')
      counts[k] = (counts[k] || 0) + 1;
    if (n.children)
      for (const c of n.children) countInto (c, counts);
  }

  function summaryLine (run, where, parentRef) {
    const top = {};
    for (const n of run) {
      const k = n.text !== undefined ? 'text' : n.skip ? NOT_OBSERVED : n.role;
      top[k] = (top[k] || 0) + (n.skip || 1);
    }
    const counts = {};
    for (const n of run) if (n.children) for (const c of n.children) countInto (c, counts);
    const fmt = o => Object.keys (o).sort ((a, b) => o[b] - o[a])
      .map (k => o[k] + ' ' + k).join (', ');
    let s = '… ' + fmt (top) + ' ' + where;
    const inner = fmt (counts);
    if (inner) s += ' (inside: ' + inner + ')';
    if (parentRef) s += ' [expand ' + parentRef + ']';
    return s;
  }

  function compactText (nodes, depth, lines, ctx, parentRef) {
    const pad = ' '.repeat (depth);
    let run = [], where = '';
    const flush = () => {
      if (run.length) {
        lines.push (pad + summaryLine (run, where, parentRef));
        run = [];
      }
    };
    for (const n of nodes) {
      if (n.quiet)
        continue;
      const over = ctx.chars > ctx.maxChars;
      if (!n.inView || (over && !(n.role !== undefined && hasInteractiveInView (n)))) {
        const w = over && n.inView ? 'not shown (output limit)'
          : ((n.box ? n.box[1] : n.y) < 0 ? 'above' : 'below');
        if (run.length && w !== where) flush ();
        where = w;
        run.push (n);
        continue;
      }
      flush ();
      if (n.through) {
        compactText (n.children, depth, lines, ctx, n.ref);
        continue;
      }
      let line, last = n;
      if (n.text !== undefined)
        line = pad + q (clip (n.text, 200));
      else {
        [line, last] = chainLine (n, 120, false);
        line = pad + line;
      }
      lines.push (line);
      ctx.chars += line.length + 1;
      if (last.children)
        compactText (last.children, depth + 1, lines, ctx, last.ref);
    }
    flush ();
    return lines;
  }

  function hasInteractiveInView (n) {
    if (n.text !== undefined || !n.inView) return false;
    if (isInteractiveNode (n)) return true;
    if (n.children) for (const c of n.children) if (hasInteractiveInView (c)) return true;
    return false;
  }

  /* Returns @nodes without the walk's own markers. They are set undefined,
   * which JSON leaves out, not deleted: a delete turns each node into a
   * slow dictionary object for the serializer. */
  function stripInternal (nodes) {
    if (nodes.some (n => n.skip))
      nodes = nodes.filter (n => !n.skip);
    for (const n of nodes) {
      if (n.inView === false) n.inView = undefined;
      if (n.through !== undefined) n.through = undefined;
      if (n.quiet !== undefined) n.quiet = undefined;
      if (n.text !== undefined) {
        n.y = undefined;
        continue;
      }
      if (n.children) n.children = stripInternal (n.children);
    }
    return nodes;
  }

  function findNode (nodes, ref) {
    for (const n of nodes) {
      if (n.ref === ref) return n;
      if (n.children) {
        const f = findNode (n.children, ref);
        if (f) return f;
      }
    }
    return null;
  }

  /* ---------- entry points ---------- */

  /* The document's aria-owns: owner -> the elements it owns, each owned by
   * the first owner that names it and never by its own descendant; null
   * when the page has none. */
  function ownsOf (doc) {
    const owners = doc.querySelectorAll ('[aria-owns]');
    if (owners.length === 0)
      return null;
    const byOwner = new Map (), owned = new Map ();
    for (const owner of owners) {
      const list = [];
      for (const id of owner.getAttribute ('aria-owns').trim ().split (/\s+/)) {
        const o = id ? byId (owner, id) : null;
        /* Not one's own ancestor, nor an owner of one's owner. */
        if (o && !owned.has (o) && o !== owner && !o.contains (owner) &&
            owned.get (owner) !== o) {
          owned.set (o, owner);
          list.push (o);
        }
      }
      if (list.length) byOwner.set (owner, list);
    }
    return owned.size ? { byOwner, owned, placing: null } : null;
  }

  function walk (args) {
    const doc = document;
    const win = doc.defaultView;
    const modal = doc.querySelector ('dialog:modal') || null;
    const ctx = {
      prefix: '', offX: 0, offY: 0,
      vw: win.innerWidth, vh: win.innerHeight,
      active: deepActive (doc), modal, inModal: false,
      cache: new Map (),
      /* Shared with frames' contexts (Object.assign copies the reference). */
      count: { elements: 0, nodes: 0, interactive: 0, chars: 0, notObserved: 0, errors: 0,
               textClipped: 0,
               over: false, hard: false },
      max: {
        nodes: (args && args.maxNodes) || LIMITS.nodes,
        elements: (args && args.maxElements) || LIMITS.elements,
        chars: (args && args.maxTreeChars) || LIMITS.chars,
      },
      secure: [], frames: [],
      owns: (walkOwns = ownsOf (doc)),
    };
    const tree = [];
    let rootEl = doc.documentElement;
    if (args && args.root) {
      rootEl = resolve (args.root);
      if (!rootEl) {
        const e = new Error ('ref ' + args.root + ' is not on the page any more');
        e.name = 'StaleRef';
        throw e;
      }
      const fr = /^f(\d+)e/.exec (args.root);
      if (fr) {
        /* A ref inside a frame: offsets come from the frame element. */
        ctx.prefix = 'f' + fr[1];
        const fel = rootEl.ownerDocument.defaultView.frameElement;
        if (fel) {
          const r = fel.getBoundingClientRect ();
          ctx.offX = r.left + fel.clientLeft;
          ctx.offY = r.top + fel.clientTop;
        }
      }
      ctx.modal = null;
    }
    if (rootEl)
      visitGuarded (rootEl, ctx, tree, true, null, null);
    const root = { role: 'document', name: norm (doc.title || ''), children: [] };
    root.children = tree;
    finishNode (root, false);
    root.inView = true;
    return [root, ctx];
  }

  /* Whether the page can have changed since an observation: a generation
   * bumped by every DOM mutation and by the events that change what shows
   * without one (input, scroll, focus, hover, loads, animations), watched
   * from the first observation of the document on. state () is a token of
   * the document, its generation, URL, scroll and viewport, or null when the
   * page may change with no such signal (still loading, running animations,
   * frames, canvases, media, shadow trees). Field values are compared here,
   * in this world: they never leave it, not even as a digest. */
  const watch = {
    id: performance.timeOrigin + '-' + Math.random ().toString (36).slice (2),
    generation: 0,
    observer: null,
    observing: false,
    values: null,
    sawShadow: false,
  };
  const WATCHED_EVENTS = [
    'input', 'change', 'scroll', 'resize', 'focusin', 'focusout', 'mouseover', 'mouseout',
    'pointerdown', 'pointerup', 'keydown', 'keyup', 'load', 'error', 'toggle', 'pageshow',
    'popstate', 'hashchange', 'animationstart', 'animationend', 'transitionrun',
    'transitionend', 'fullscreenchange',
  ];
  const UNWATCHABLE = 'iframe, frame, object, embed, canvas, video, audio';

  function bump () {
    watch.generation++;
  }

  /* One mutation is enough until the next state is taken: a page that
   * keeps mutating pays for one record per observation, not one each. */
  function mutated () {
    bump ();
    watch.observer.disconnect ();
    watch.observing = false;
  }

  function fieldValues () {
    const parts = [];
    for (const f of document.querySelectorAll ('input, textarea, select'))
      parts.push (f.value, f.checked ? '1' : '0', f.selectedIndex === undefined ? '' : f.selectedIndex);
    return parts.join ('\u0000');
  }

  function pageState () {
    if (!watch.observer) {
      watch.observer = new MutationObserver (mutated);
      for (const type of WATCHED_EVENTS)
        window.addEventListener (type, bump, true);
      document.addEventListener ('selectionchange', bump, true);
    }
    if (watch.observing && watch.observer.takeRecords ().length > 0)
      mutated ();
    if (!watch.observing) {
      watch.observer.observe (document, { subtree: true, childList: true, attributes: true,
                                          characterData: true });
      watch.observing = true;
    }
    const values = fieldValues ();
    if (values !== watch.values) {
      watch.values = values;
      bump ();
    }
    if (document.readyState !== 'complete' || watch.sawShadow ||
        (document.fonts && document.fonts.status !== 'loaded') ||
        document.querySelector (UNWATCHABLE) !== null ||
        (document.getAnimations && document.getAnimations ().some (a => a.playState === 'running')))
      return null;
    const vv = window.visualViewport;
    return [watch.id, watch.generation, document.URL, window.scrollX, window.scrollY,
            window.innerWidth, window.innerHeight, window.devicePixelRatio,
            vv ? vv.scale : 1].join (' ');
  }

  function observe (args) {
    args = args || {};
    /* Only a caller that compares states pays for them. */
    const watched = args.since !== undefined;
    const since = watched && args.since !== null ? pageState () : null;
    if (since !== null && args.since === since)
      return { version: VERSION, unchanged: true, state: since };
    const t0 = performance.now ();
    resetCaches ();
    pruneRefs ();
    const [root, ctx] = walk (args);
    const t1 = performance.now ();
    const doc = document;
    const se = doc.scrollingElement || doc.documentElement;
    const result = {
      version: VERSION,
      url: doc.URL,
      title: doc.title,
      viewport: {
        width: ctx.vw, height: ctx.vh,
        scrollX: Math.round (window.scrollX), scrollY: Math.round (window.scrollY),
        pageWidth: se ? se.scrollWidth : ctx.vw, pageHeight: se ? se.scrollHeight : ctx.vh,
      },
      counts: {
        elements: ctx.count.elements, nodes: ctx.count.nodes, interactive: ctx.count.interactive,
        notObserved: ctx.count.notObserved,
        errors: ctx.count.errors,
        textClipped: ctx.count.textClipped,
        secure: ctx.secure.length,
        secureInView: ctx.secure.filter (s => s.inView).length,
      },
      secure: ctx.secure,
      frames: ctx.frames,
    };
    if (ctx.count.notObserved)
      result.truncated = { notObserved: ctx.count.notObserved, maxNodes: ctx.max.nodes,
                           maxElements: ctx.max.elements };
    const mode = args.text || 'compact';
    result.textMode = mode;
    const kids = root.children || [];
    const v = result.viewport;
    const head = 'page ' + q (clip (doc.title || '', 120)) + ' ' + doc.URL +
      ' viewport=' + v.width + 'x' + v.height + ' scroll=' + v.scrollX + ',' + v.scrollY +
      ' of ' + v.pageWidth + 'x' + v.pageHeight +
      (ctx.count.notObserved ? ' truncated: ' + ctx.count.notObserved +
                               ' elements not observed (limit ' + ctx.max.nodes + ' nodes)' : '') +
      (ctx.count.textClipped ? ' text clipped: ' + ctx.count.textClipped +
                               ' characters outside the viewport left out' : '');
    if (mode === 'full') {
      result.text = fullText (kids, 0, [head]).join ('\n');
    } else if (mode === 'compact') {
      const tc = { chars: 0, maxChars: args.maxChars || 24000 };
      const lines = [head];
      compactText (kids, 0, lines, tc, args.root || null);
      result.text = lines.join ('\n');
    }
    if (args.tree !== false) {
      root.children = stripInternal (kids);
      result.tree = root;
    }
    result.timing = { walk: Math.round (t1 - t0), serialize: Math.round (performance.now () - t1) };
    /* After the walk, which may have met a shadow tree; nothing the page
     * ran in between. */
    if (watched)
      result.state = pageState ();
    resetCaches ();
    return result;
  }

  function find (args) {
    const query = String ((args && args.query) || '').toLowerCase ();
    const limit = (args && args.limit) || 50;
    resetCaches ();
    const [root, ctx] = walk ({});
    const matches = [];
    const lines = [];
    const rec = (nodes, path) => {
      for (const n of nodes) {
        if (matches.length >= limit) return;
        const hay = (n.text !== undefined ? n.text : (n.name || '') + ' ' + (n.value || ''))
          .toLowerCase ();
        if (query && hay.includes (query)) {
          matches.push (n.text !== undefined ? { text: n.text, in: path } :
            { ref: n.ref, role: n.role, name: n.name || '', box: n.box, inView: n.inView });
          lines.push (n.text !== undefined ? q (clip (n.text, 200)) + ' (in ' + (path || 'page') + ')'
                                          : nodeLine (n, 120));
        }
        if (n.children) rec (n.children, n.ref || path);
      }
    };
    rec (root.children || [], '');
    const result = { query, matches, text: lines.join ('\n') };
    if (ctx.count.notObserved)
      result.notObserved = ctx.count.notObserved;
    return result;
  }

  function bareWalk () {
    let count = 0;
    const rec = el => {
      count++;
      const kids = el.shadowRoot ? el.shadowRoot.children : el.children;
      for (let i = 0; i < kids.length; i++) rec (kids[i]);
      if (el.localName === 'iframe') {
        let d = null;
        try { d = el.contentDocument; } catch (e) { d = null; }
        if (d && d.documentElement) rec (d.documentElement);
      }
    };
    rec (document.documentElement);
    return count;
  }

  /* The role and name the observation gives @el, by the same rules, whether
   * or not the walk would list it (the conformance harness and the smoke
   * test's accessibility check ask for elements one by one). The role is
   * the computed ARIA role: "none" for presentation. */
  function describe (el) {
    resetCaches ();
    try {
      const tag = el.localName;
      let role = roleOf (el, tag);
      if (role === null || role === 'presentation') role = 'none';
      /* An element's name does not depend on whether it is shown: a
       * hidden element is left out of the tree, not renamed. */
      const name = nameOf (el, tag, role, null);
      return { role, name };
    } finally {
      resetCaches ();
    }
  }

  G.__sight.snapshot = {
    version: VERSION,
    observe,
    find,
    describe,
    resolve,
    refOf: el => refOf (el, ''),
    isInteractive: isInteractiveNode,
    bareWalk,
  };
}) ();
