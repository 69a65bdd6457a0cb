/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#include <glib.h>
#include <string.h>

#include "sight-action.h"
#include "sight-direct-step.h"
#include "sight-error.h"
#include "sight-json.h"

/* One row: a phrasing and the step it must parse to. NULL means "not set". */
typedef struct {
  const char      *text;
  SightDirectVerb  verb;
  const char      *role;
  const char      *name;
  int              nth;
  const char      *value;
  SightExpectKind  expect;
} Row;

#define T(text, verb, role, name, nth, value, expect) \
  { text, SIGHT_DIRECT_##verb, role, name, nth, value, SIGHT_EXPECT_##expect }

static const Row rows[] = {
  /* the spec's examples */
  T ("click Sign in", CLICK, NULL, "Sign in", 0, NULL, NONE),
  T ("type \"qa@example.com\" into Email", FILL, NULL, "Email", 0, "qa@example.com", NONE),
  T ("type the username demo into the email field", FILL, "textbox", "email", 0, "demo", NONE),
  T ("click the Pricing link", CLICK, "link", "Pricing", 0, NULL, NONE),
  T ("click the 2nd \"Add to cart\" button", CLICK, "button", "Add to cart", 2, NULL, NONE),
  /* click and friends */
  T ("Click on the \"Sign in\" button.", CLICK, "button", "Sign in", 0, NULL, NONE),
  T ("CLICK Submit", CLICK, NULL, "Submit", 0, NULL, NONE),
  T ("tap the Menu button", CLICK, "button", "Menu", 0, NULL, NONE),
  T ("then click the last \"Delete\" link", CLICK, "link", "Delete", -1, NULL, NONE),
  T ("click the third tab", CLICK, "tab", NULL, 3, NULL, NONE),
  T ("click button \"Save\"", CLICK, "button", "Save", 0, NULL, NONE),
  T ("click the button labelled Save draft", CLICK, "button", "Save draft", 0, NULL, NONE),
  T ("click the link named Terms of service", CLICK, "link", "Terms of service", 0, NULL, NONE),
  T ("click \u201cSign in\u201d", CLICK, NULL, "Sign in", 0, NULL, NONE),
  T ("click 'Log out'", CLICK, NULL, "Log out", 0, NULL, NONE),
  T ("click the user's profile link", CLICK, "link", "user's profile", 0, NULL, NONE),
  T ("click the first name field", CLICK, "textbox", "first name", 0, NULL, NONE),
  T ("click the 11th row", CLICK, "row", NULL, 11, NULL, NONE),
  T ("press the Submit button", CLICK, "button", "Submit", 0, NULL, NONE),
  T ("double-click the \"Title\" cell", DOUBLE_CLICK, "cell", "Title", 0, NULL, NONE),
  T ("Double click Rename", DOUBLE_CLICK, NULL, "Rename", 0, NULL, NONE),
  T ("hover over the Products menu item", HOVER, "menuitem", "Products", 0, NULL, NONE),
  T ("hover Help", HOVER, NULL, "Help", 0, NULL, NONE),
  /* typing */
  T ("type hello world into the search box", FILL, "searchbox", NULL, 0, "hello world", NONE),
  T ("type hello world into the Query field", FILL, "textbox", "Query", 0, "hello world", NONE),
  T ("type \u201cqa@example.com\u201d in the \u201cEmail\u201d field", FILL, "textbox", "Email", 0,
     "qa@example.com", NONE),
  T ("Type 'sign in' into Notes", FILL, NULL, "Notes", 0, "sign in", NONE),
  T ("type sign in into Notes", FILL, NULL, "Notes", 0, "sign in", NONE),
  T ("enter \"42\" in Quantity", FILL, NULL, "Quantity", 0, "42", NONE),
  T ("type the text \"a \\\"b\\\" c\" into Comment", FILL, NULL, "Comment", 0, "a \"b\" c", NONE),
  T ("type \"hello\"", FILL, NULL, NULL, 0, "hello", NONE),
  T ("fill Email with x@y.z", FILL, NULL, "Email", 0, "x@y.z", NONE),
  T ("fill in the \"Full name\" field with \"Ada Lovelace\"", FILL, "textbox", "Full name", 0,
     "Ada Lovelace", NONE),
  T ("Fill the password field with {password}", FILL, "textbox", "password", 0, NULL, NONE),
  T ("clear the Search field", FILL, "textbox", "Search", 0, "", NONE),
  T ("set Quantity to 3", FILL, NULL, "Quantity", 0, "3", NONE),
  /* keys */
  T ("press Enter", PRESS, NULL, NULL, 0, "Enter", NONE),
  T ("press Control+A", PRESS, NULL, NULL, 0, "Control+A", NONE),
  T ("press ctrl+shift+k", PRESS, NULL, NULL, 0, "Control+Shift+K", NONE),
  T ("press the Escape key", PRESS, NULL, NULL, 0, "Escape", NONE),
  T ("press esc", PRESS, NULL, NULL, 0, "Escape", NONE),
  T ("press the down arrow", PRESS, NULL, NULL, 0, "ArrowDown", NONE),
  T ("press Tab", PRESS, NULL, NULL, 0, "Tab", NONE),
  T ("press Enter in the Search field", PRESS, "textbox", "Search", 0, "Enter", NONE),
  T ("press F5", PRESS, NULL, NULL, 0, "F5", NONE),
  /* select */
  T ("select \"Pro\" in Plan", SELECT, NULL, "Plan", 0, "Pro", NONE),
  T ("select \"Pro\" from Plan", SELECT, NULL, "Plan", 0, "Pro", NONE),
  T ("choose Annual billing from the Billing dropdown", SELECT, "combobox", "Billing", 0,
     "Annual billing", NONE),
  T ("select the Monthly radio button", CLICK, "radio", "Monthly", 0, NULL, NONE),
  T ("select the Remember me checkbox", CHECK, "checkbox", "Remember me", 0, NULL, NONE),
  /* check */
  T ("check Remember me", CHECK, NULL, "Remember me", 0, NULL, NONE),
  T ("check the \"I agree\" checkbox", CHECK, "checkbox", "I agree", 0, NULL, NONE),
  T ("tick the Newsletter box", CHECK, NULL, "Newsletter box", 0, NULL, NONE),
  T ("uncheck the Newsletter check box", UNCHECK, "checkbox", "Newsletter", 0, NULL, NONE),
  /* upload */
  T ("upload file.txt to Avatar", UPLOAD, NULL, "Avatar", 0, "file.txt", NONE),
  T ("upload \"report 2024.pdf\" into the Attachment field", UPLOAD, "textbox", "Attachment", 0,
     "report 2024.pdf", NONE),
  T ("attach /tmp/a.png", UPLOAD, NULL, NULL, 0, "/tmp/a.png", NONE),
  /* navigation */
  T ("go to https://example.com/login", GOTO, NULL, NULL, 0, "https://example.com/login", NONE),
  T ("Navigate to /pricing", GOTO, NULL, NULL, 0, "/pricing", NONE),
  T ("open example.com", GOTO, NULL, NULL, 0, "example.com", NONE),
  T ("visit the url \"http://127.0.0.1:8765/\"", GOTO, NULL, NULL, 0, "http://127.0.0.1:8765/",
     NONE),
  T ("go back", BACK, NULL, NULL, 0, NULL, NONE),
  T ("Back.", BACK, NULL, NULL, 0, NULL, NONE),
  T ("go forward", FORWARD, NULL, NULL, 0, NULL, NONE),
  T ("reload the page", RELOAD, NULL, NULL, 0, NULL, NONE),
  T ("refresh", RELOAD, NULL, NULL, 0, NULL, NONE),
  /* scroll and wait */
  T ("scroll down", SCROLL, NULL, NULL, 0, NULL, NONE),
  T ("scroll to the Footer link", SCROLL, "link", "Footer", 0, NULL, NONE),
  T ("scroll the \"Reviews\" heading into view", SCROLL, "heading", "Reviews", 0, NULL, NONE),
  T ("wait for \"Saved\"", WAIT_FOR_TEXT, NULL, NULL, 0, "Saved", TEXT),
  T ("wait for text \"Saved\"", WAIT_FOR_TEXT, NULL, NULL, 0, "Saved", TEXT),
  T ("wait for the text Upload complete", WAIT_FOR_TEXT, NULL, NULL, 0, "Upload complete", TEXT),
  T ("wait until \"Loading\" disappears", WAIT_FOR_TEXT, NULL, NULL, 0, "Loading", NO_TEXT),
  T ("wait for \"Done\" to appear", WAIT_FOR_TEXT, NULL, NULL, 0, "Done", TEXT),
  T ("wait 2 seconds", WAIT_TIME, NULL, NULL, 0, "2000", NONE),
  T ("wait for 500 ms", WAIT_TIME, NULL, NULL, 0, "500", NONE),
  T ("wait 1.5s", WAIT_TIME, NULL, NULL, 0, "1500", NONE),
  /* expectations */
  T ("expect text \"Welcome\"", EXPECT, NULL, NULL, 0, "Welcome", TEXT),
  T ("expect \"Welcome\"", EXPECT, NULL, NULL, 0, "Welcome", TEXT),
  T ("Expect the page to show \"Welcome back\"", EXPECT, NULL, NULL, 0, "Welcome back", TEXT),
  T ("verify that the page contains \u201cOrder placed\u201d", EXPECT, NULL, NULL, 0,
     "Order placed", TEXT),
  T ("I should see \"Dashboard\"", EXPECT, NULL, NULL, 0, "Dashboard", TEXT),
  T ("expect no text \"Invalid password\"", EXPECT, NULL, NULL, 0, "Invalid password", NO_TEXT),
  T ("expect not to see \"Error\"", EXPECT, NULL, NULL, 0, "Error", NO_TEXT),
  T ("expect the page not to contain \"Error\"", EXPECT, NULL, NULL, 0, "Error", NO_TEXT),
  T ("expect URL contains /dashboard", EXPECT, NULL, NULL, 0, "/dashboard", URL_CONTAINS),
  T ("expect the URL to contain \"/dashboard\"", EXPECT, NULL, NULL, 0, "/dashboard",
     URL_CONTAINS),
  T ("expect URL is https://example.com/", EXPECT, NULL, NULL, 0, "https://example.com/",
     URL_EQUALS),
  T ("expect the \"Save\" button visible", EXPECT, "button", "Save", 0, NULL, VISIBLE),
  T ("expect the Save button to be visible", EXPECT, "button", "Save", 0, NULL, VISIBLE),
  T ("expect Spinner hidden", EXPECT, NULL, "Spinner", 0, NULL, HIDDEN),
  T ("expect the Cookie dialog is not visible", EXPECT, "dialog", "Cookie", 0, NULL, HIDDEN),
  T ("assert the Remember me checkbox is checked", EXPECT, "checkbox", "Remember me", 0, NULL,
     CHECKED),
  T ("expect Newsletter to be unchecked", EXPECT, NULL, "Newsletter", 0, NULL, UNCHECKED),
  T ("expect Newsletter not checked", EXPECT, NULL, "Newsletter", 0, NULL, UNCHECKED),
  T ("expect the Submit button disabled", EXPECT, "button", "Submit", 0, NULL, DISABLED),
  T ("ensure the Submit button is enabled", EXPECT, "button", "Submit", 0, NULL, ENABLED),
  T ("expect the Submit button to be not disabled", EXPECT, "button", "Submit", 0, NULL, ENABLED),
  T ("expect Email has value \"a@b.c\"", EXPECT, NULL, "Email", 0, "a@b.c", VALUE),
  T ("expect the Email field to have value a@b.c", EXPECT, "textbox", "Email", 0, "a@b.c", VALUE),
  T ("expect the value of Quantity is 3", EXPECT, NULL, "Quantity", 0, "3", VALUE),
  T ("expect the cart badge has text \"3\"", EXPECT, NULL, "cart badge", 0, "3", HAS_TEXT),
  T ("expect the 2nd row to contain \"Ada\"", EXPECT, "row", NULL, 2, "Ada", HAS_TEXT),
  T ("check that the Pro option is selected", EXPECT, "option", "Pro", 0, NULL, CHECKED),
};

static void
test_phrasings (void)
{
  for (guint i = 0; i < G_N_ELEMENTS (rows); i++)
    {
      const Row *row = &rows[i];
      g_autoptr(GError) error = NULL;
      g_autoptr(SightDirectStep) step = sight_direct_step_parse (row->text, &error);

      g_test_message ("%s", row->text);
      g_assert_no_error (error);
      g_assert_nonnull (step);
      g_assert_cmpstr (sight_direct_verb_to_string (step->verb), ==,
                       sight_direct_verb_to_string (row->verb));
      g_assert_cmpstr (step->target.role, ==, row->role);
      g_assert_cmpstr (step->target.name, ==, row->name);
      g_assert_cmpint (step->target.nth, ==, row->nth);
      g_assert_cmpstr (step->value, ==, row->value);
      g_assert_cmpstr (sight_expect_kind_to_string (step->expect), ==,
                       sight_expect_kind_to_string (row->expect));
      g_assert_cmpstr (step->source, ==, row->text);
    }
}

static void
test_params (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SightDirectStep) step = NULL;

  step = sight_direct_step_parse ("type {password} into Password", &error);
  g_assert_no_error (error);
  g_assert_cmpstr (step->param, ==, "password");
  g_assert_null (step->value);
  g_assert_cmpstr (step->target.name, ==, "Password");
}

static void
test_scroll_amount (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SightDirectStep) down = sight_direct_step_parse ("scroll down 400 pixels", &error);
  g_autoptr(SightDirectStep) top = NULL;

  g_assert_no_error (error);
  g_assert_cmpint (down->scroll, ==, SIGHT_SCROLL_DOWN);
  g_assert_cmpint (down->amount, ==, 400);
  top = sight_direct_step_parse ("scroll to the top", &error);
  g_assert_no_error (error);
  g_assert_cmpint (top->scroll, ==, SIGHT_SCROLL_TOP);
  g_assert_false (top->has_target);
}

/* Inputs that must not parse, and a word the hint must contain. */
static const struct {
  const char *text;
  const char *hint;
} bad_rows[] = {
  { "", "empty" },
  { "   ", "empty" },
  { "click", "target" },
  { "click the", "target" },
  { "click \"Sign in", "quote" },
  { "smash the Submit button", "verb" },
  { "the dashboard shows a trial badge", "verb" },
  { "type the test password into the password field", "secret" },
  { "type", "type" },
  { "fill Email", "fill" },
  { "go to the pricing page", "URL" },
  { "go to", "where" },
  { "press", "key" },
  { "wait for the upload to finish", "condition" },
  { "wait 5 fortnights", "unit" },
  { "wait 900 seconds", "600" },
  { "expect the dashboard shows a trial badge", "assert step" },
  { "expect the page shows a trial badge", "quote" },
  { "expect the thing to be wonderful", "expectation" },
  { "expect", "empty" },
  { "expect URL", "URL" },
  { "expect URL contains", "URL" },
  { "click the \"Save\" \"Cancel\" button", "more than one" },
  { "click the fancy \"Save\" thing", "thing" },
  { "scroll sideways", "scroll" },
  { "scroll down a lot", "scroll" },
  { "select \"Pro\" in", "target" },
};

static void
test_bad_inputs (void)
{
  for (guint i = 0; i < G_N_ELEMENTS (bad_rows); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(SightDirectStep) step = sight_direct_step_parse (bad_rows[i].text, &error);
      g_autofree char *lower = NULL;
      g_autofree char *hint = NULL;

      g_test_message ("%s", bad_rows[i].text);
      g_assert_null (step);
      g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT);
      lower = g_ascii_strdown (error->message, -1);
      hint = g_ascii_strdown (bad_rows[i].hint, -1);
      if (strstr (lower, hint) == NULL)
        g_error ("\"%s\": the message \"%s\" lacks \"%s\"", bad_rows[i].text, error->message,
                 bad_rows[i].hint);
    }
  /* invalid UTF-8 */
  {
    g_autoptr(GError) error = NULL;

    g_assert_null (sight_direct_step_parse ("click \xff\xfe", &error));
    g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT);
  }
}

/* The canonical text parses back to the same step. */
static void
test_round_trip (void)
{
  for (guint i = 0; i < G_N_ELEMENTS (rows); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(SightDirectStep) step = sight_direct_step_parse (rows[i].text, &error);
      g_autoptr(SightDirectStep) back = NULL;
      g_autofree char *text = NULL;
      g_autofree char *text2 = NULL;

      g_assert_no_error (error);
      text = sight_direct_step_to_text (step);
      g_test_message ("%s -> %s", rows[i].text, text);
      back = sight_direct_step_parse (text, &error);
      g_assert_no_error (error);
      g_assert_cmpint (back->verb, ==, step->verb);
      g_assert_cmpint (back->expect, ==, step->expect);
      g_assert_cmpstr (back->target.role, ==, step->target.role);
      g_assert_cmpstr (back->target.name, ==, step->target.name);
      g_assert_cmpint (back->target.nth, ==, step->target.nth);
      g_assert_cmpstr (back->value, ==, step->value);
      g_assert_cmpstr (back->param, ==, step->param);
      g_assert_cmpint (back->scroll, ==, step->scroll);
      text2 = sight_direct_step_to_text (back);
      g_assert_cmpstr (text2, ==, text);
    }
}

static void
test_keys (void)
{
  static const struct { const char *in, *out; } keys[] = {
    { "Enter", "Enter" }, { "return", "Enter" }, { "Control+a", "Control+A" },
    { "cmd+shift+p", "Meta+Shift+P" }, { "Control++", "Control++" }, { "+", "+" },
    { "page down", "PageDown" }, { "the Tab key", "Tab" }, { "F12", "F12" },
    { "Shift", "Shift" }, { "x", "x" }, { "space", "Space" },
    { "Submit", NULL }, { "Foo+A", NULL }, { "F99", NULL }, { "", NULL },
  };

  for (guint i = 0; i < G_N_ELEMENTS (keys); i++)
    {
      g_autofree char *key = sight_key_normalize (keys[i].in);

      g_assert_cmpstr (key, ==, keys[i].out);
    }
}

static void
test_role_hints (void)
{
  g_assert_cmpstr (sight_role_hint_lookup ("Field"), ==, "textbox");
  g_assert_cmpstr (sight_role_hint_lookup ("radio button"), ==, "radio");
  g_assert_null (sight_role_hint_lookup ("banana"));
  g_assert_true (sight_role_hint_matches ("textbox", "searchbox"));
  g_assert_true (sight_role_hint_matches ("checkbox", "switch"));
  g_assert_true (sight_role_hint_matches (NULL, "anything"));
  g_assert_false (sight_role_hint_matches ("button", "link"));
  g_assert_false (sight_role_hint_matches ("textbox", "button"));
}


/* A sign-in page with a shop list: the usual traps of names. */
static const SightNodeView page[] = {
  { "e1", "heading", "Sign in", NULL, 0 },
  { "e2", "textbox", "Email", "", 0 },
  { "e3", "textbox", "Password", "", 0 },
  { "e4", "checkbox", "Remember me", NULL, SIGHT_NODE_CHECKED },
  { "e5", "button", "Sign in", NULL, 0 },
  { "e6", "link", "Pricing", NULL, 0 },
  { "e7", "link", "pricing details", NULL, 0 },
  { "e8", "button", "Add to cart", NULL, 0 },
  { "e9", "button", "Add to cart", NULL, 0 },
  { "e10", "button", "Add to cart", NULL, 0 },
  { "e11", "button", "Menu", NULL, SIGHT_NODE_HIDDEN },
  { "e12", "button", "Menu", NULL, 0 },
  { "e13", "combobox", "Plan", "Free", 0 },
  { "e14", "button", "Add link", NULL, 0 },
  { "e15", "link", "Get started", NULL, 0 },
  { "e16", "searchbox", "Search products", "", 0 },
  { "e17", "button", "Submit order", NULL, SIGHT_NODE_DISABLED },
};

typedef struct {
  const char *step;
  const char *ref;      /* NULL: must fail with ACTION_FAILED */
  const char *message;  /* for failures: a part of the message */
} ResolveRow;

static const ResolveRow resolve_rows[] = {
  { "click Sign in", "e5", NULL },                       /* a control beats a heading */
  { "expect the Sign in heading visible", "e1", NULL },
  { "type \"a@b.c\" into Email", "e2", NULL },
  { "type \"a@b.c\" into the email field", "e2", NULL }, /* case-insensitive */
  { "click the Pricing link", "e6", NULL },              /* exact beats case-insensitive */
  { "click details", "e7", NULL },                       /* substring */
  { "click the 2nd \"Add to cart\" button", "e9", NULL },
  { "click the last \"Add to cart\" button", "e10", NULL },
  { "click \"Add to cart\"", NULL, "e8 button \"Add to cart\", e9 button \"Add to cart\", e10" },
  { "click the 4th \"Add to cart\" button", NULL, "3 elements" },
  { "click Menu", "e12", NULL },                         /* the visible one */
  { "select \"Pro\" in Plan", "e13", NULL },
  { "check Remember me", "e4", NULL },
  { "click Add link", "e14", NULL },                     /* "link" was part of the name */
  { "click the Get started button", "e15", NULL },       /* a link styled as a button */
  { "type shoes into Search", "e16", NULL },
  { "click Checkout", NULL, "nothing on the page matches" },
  { "click the 2nd checkbox", NULL, "1 element" },
  { "click the checkbox", "e4", NULL },
  { "click the button", NULL, "ambiguous" },
  { "expect Plan has value \"Free\"", "e13", NULL },
  { "expect Pricing hidden", "e6", NULL },
};

/* Resolves each step of @table on @nodes and checks the ref or the error. */
static void
check_resolution (const SightNodeView *nodes,
                  guint                n_nodes,
                  const ResolveRow    *table,
                  guint                n_table)
{
  for (guint i = 0; i < n_table; i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(SightDirectStep) step = sight_direct_step_parse (table[i].step, &error);
      guint index = G_MAXUINT;
      gboolean ok;

      g_test_message ("%s", table[i].step);
      g_assert_no_error (error);
      ok = sight_direct_step_resolve (step, nodes, n_nodes, &index, &error);
      if (table[i].ref != NULL)
        {
          g_assert_no_error (error);
          g_assert_true (ok);
          g_assert_cmpstr (nodes[index].ref, ==, table[i].ref);
        }
      else
        {
          g_assert_false (ok);
          g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_ACTION_FAILED);
          if (strstr (error->message, table[i].message) == NULL)
            g_error ("\"%s\": \"%s\" lacks \"%s\"", table[i].step, error->message,
                     table[i].message);
        }
    }
}

static void
test_resolve (void)
{
  check_resolution (page, G_N_ELEMENTS (page), resolve_rows, G_N_ELEMENTS (resolve_rows));
}

/* A page where names from content repeat inside their owners: the image
 * of a link, a card link's heading. */
static const SightNodeView nested_page[] = {
  { "e1", "banner", NULL, NULL, 0, NULL, 0 },
  { "e2", "link", "Acme home", NULL, 0, NULL, 1 },
  { "e3", "img", "Acme home", NULL, 0, NULL, 2 },
  { "e4", "link", "First post title Summary", NULL, 0, NULL, 0 },
  { "e5", "heading", "First post title", NULL, 0, NULL, 1 },
  { "e6", "link", "Logo Docs", NULL, 0, NULL, 0 },
  { "e7", "img", "Logo", NULL, 0, NULL, 1 },
  { "e8", "img", "Logo", NULL, 0, NULL, 0 },
  { "e9", "list", NULL, NULL, 0, NULL, 0 },
  { "e10", "listitem", NULL, NULL, 0, NULL, 1 },
  { "e11", "list", NULL, NULL, 0, NULL, 2 },
  { "e12", "listitem", NULL, NULL, 0, NULL, 3 },
};

static const ResolveRow nested_rows[] = {
  { "expect \"Acme home\" visible", "e2", NULL },          /* the link, not its image */
  { "expect \"First post title\" visible", "e5", NULL },   /* the exact name wins */
  { "expect \"First post\" visible", "e4", NULL },         /* the card, not its heading */
  { "expect \"Logo\" visible", NULL, "e7 img \"Logo\", e8 img \"Logo\"" }, /* not nested */
  { "expect the 2nd listitem visible", "e12", NULL },      /* no name: nothing dropped */
};

static void
test_resolve_nested (void)
{
  check_resolution (nested_page, G_N_ELEMENTS (nested_page), nested_rows,
                    G_N_ELEMENTS (nested_rows));
}

/* The ambiguity message suggests a step that resolves. */
static void
test_ambiguity_hint (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SightDirectStep) step = sight_direct_step_parse ("click the \"Add to cart\" button",
                                                             &error);
  g_autoptr(SightDirectStep) suggested = NULL;
  const char *example;
  guint index;

  g_assert_false (sight_direct_step_resolve (step, page, G_N_ELEMENTS (page), &index, &error));
  example = strstr (error->message, "for example: ");
  g_assert_nonnull (example);
  {
    g_autofree char *text = g_strdup_printf ("click %s", example + strlen ("for example: "));
    g_autoptr(GError) error2 = NULL;

    suggested = sight_direct_step_parse (text, &error2);
    g_assert_no_error (error2);
    g_assert_true (sight_direct_step_resolve (suggested, page, G_N_ELEMENTS (page), &index,
                                              &error2));
    g_assert_cmpstr (page[index].ref, ==, "e9");
  }
}

/* An observation as snapshot.js returns it, seen through the node list. */
static void
test_node_list (void)
{
  static const char json[] =
    "{ \"version\": 1, \"url\": \"http://127.0.0.1/\", \"title\": \"Shop\","
    "  \"viewport\": { \"width\": 800, \"height\": 600 },"
    "  \"tree\": { \"ref\": \"e1\", \"role\": \"document\", \"name\": \"Shop\", \"children\": ["
    "    { \"ref\": \"e2\", \"role\": \"heading\", \"name\": \"Cart\", \"level\": 1, \"children\": [] },"
    "    { \"ref\": \"e3\", \"role\": \"listitem\", \"children\": ["
    "      { \"text\": \"Tea, 3 items\" },"
    "      { \"ref\": \"e4\", \"role\": \"button\", \"name\": \"Remove\", \"children\": [] } ] },"
    "    { \"ref\": \"e5\", \"role\": \"checkbox\", \"name\": \"Gift wrap\", \"checked\": true, \"children\": [] },"
    "    { \"ref\": \"e6\", \"role\": \"checkbox\", \"name\": \"All\", \"checked\": \"mixed\", \"children\": [] },"
    "    { \"ref\": \"e7\", \"role\": \"textbox\", \"name\": \"Coupon\", \"value\": \"SAVE10\", \"focused\": true, \"children\": [] },"
    "    { \"ref\": \"e8\", \"role\": \"button\", \"name\": \"Pay\", \"disabled\": true, \"children\": [] } ] } }";
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;
  g_autoptr(SightObservation) observation = NULL;
  g_autoptr(SightNodeList) list = NULL;
  const SightNodeView *nodes;
  guint n, index;

  json_parser_load_from_data (parser, json, -1, &error);
  g_assert_no_error (error);
  observation = sight_observation_new_from_json (json_parser_get_root (parser), &error);
  g_assert_no_error (error);
  list = sight_node_list_new (observation);
  nodes = sight_node_list_get (list, &n);

  g_assert_cmpuint (n, ==, 8);
  g_assert_cmpstr (nodes[0].role, ==, "document");
  g_assert_cmpstr (nodes[3].ref, ==, "e4");
  g_assert_cmpstr (nodes[2].text, ==, "Tea, 3 items Remove");
  g_assert_cmpuint (nodes[4].states, ==, SIGHT_NODE_CHECKED);
  g_assert_cmpuint (nodes[5].states, ==, SIGHT_NODE_MIXED);
  g_assert_cmpstr (nodes[6].value, ==, "SAVE10");
  g_assert_cmpuint (nodes[6].states, ==, SIGHT_NODE_FOCUSED);
  g_assert_cmpuint (nodes[7].states, ==, SIGHT_NODE_DISABLED);

  {
    g_autoptr(SightDirectStep) step = sight_direct_step_parse ("type \"X\" into the coupon field",
                                                               &error);

    g_assert_no_error (error);
    g_assert_true (sight_direct_step_resolve (step, nodes, n, &index, &error));
    g_assert_cmpstr (nodes[index].ref, ==, "e7");
  }
  {
    g_autoptr(SightDirectStep) step = sight_direct_step_parse ("click Remove", &error);

    g_assert_true (sight_direct_step_resolve (step, nodes, n, &index, &error));
    g_assert_cmpstr (nodes[index].ref, ==, "e4");
  }
}

static char *
compact (JsonObject *object)
{
  g_autoptr(JsonNode) node = json_node_init_object (json_node_alloc (), object);

  return json_to_string (node, FALSE);
}

/* A trace's actions as sight-direct-run.c and act wrote them before there was
 * a SightAction: read and written again they are the same, and the engine gets
 * the object the old verb strings built. */
static void
test_actions (void)
{
  static const struct {
    const char *record;
    const char *engine;    /* NULL: no page action */
  } records[] = {
    { "{\"tool\":\"click\",\"args\":{\"ref\":\"e1\"}}", "{\"type\":\"click\"}" },
    { "{\"tool\":\"dblclick\",\"args\":{\"ref\":\"e1\"}}",
      "{\"clickCount\":2,\"type\":\"click\"}" },
    { "{\"tool\":\"fill\",\"args\":{\"ref\":\"e2\",\"value\":\"a@b.c\"}}",
      "{\"value\":\"a@b.c\",\"type\":\"fill\"}" },
    { "{\"tool\":\"fill\",\"args\":{\"ref\":\"e2\",\"param\":\"password\"}}",
      "{\"value\":\"\",\"type\":\"fill\"}" },
    { "{\"tool\":\"select\",\"args\":{\"ref\":\"e4\",\"option\":\"Pro\"}}",
      "{\"values\":[\"Pro\"],\"type\":\"select\"}" },
    { "{\"tool\":\"press\",\"args\":{\"key\":\"Enter\"}}",
      "{\"keys\":\"Enter\",\"type\":\"press\"}" },
    { "{\"tool\":\"check\",\"args\":{\"ref\":\"e3\",\"checked\":true}}", "{\"type\":\"check\"}" },
    { "{\"tool\":\"check\",\"args\":{\"ref\":\"e3\",\"checked\":false}}",
      "{\"type\":\"uncheck\"}" },
    { "{\"tool\":\"scroll\",\"args\":{\"direction\":\"up\"}}",
      "{\"pages\":-1,\"type\":\"scroll\"}" },
    { "{\"tool\":\"scroll\",\"args\":{\"ref\":\"e9\"}}", "{\"type\":\"scrollIntoView\"}" },
    { "{\"tool\":\"hover\",\"args\":{\"ref\":\"e5\"}}", "{\"type\":\"hover\"}" },
    { "{\"tool\":\"navigate\",\"args\":{\"url\":\"/pricing\"}}", NULL },
    { "{\"tool\":\"back\",\"args\":{}}", NULL },
    { "{\"tool\":\"wait\",\"args\":{\"ms\":250}}", NULL },
    { "{\"tool\":\"screenshot\",\"args\":{}}", NULL },
  };

  for (guint i = 0; i < G_N_ELEMENTS (records); i++)
    {
      g_autoptr(JsonNode) record = sight_json_parse (records[i].record, -1, 8, NULL);
      JsonObject *o = json_node_get_object (record);
      g_auto(SightAction) action = { 0 };
      g_autoptr(JsonObject) args = NULL;
      g_autoptr(JsonObject) engine = NULL;
      g_autoptr(JsonObject) again = json_object_new ();
      g_autofree char *written = NULL;
      const char *tool = NULL;

      g_assert_true (sight_action_from_tool_call (&action, json_object_get_string_member (o, "tool"),
                                                  json_object_get_object_member (o, "args")));
      args = sight_action_to_tool_call (&action, &tool);
      g_assert_nonnull (args);
      json_object_set_string_member (again, "tool", tool);
      json_object_set_object_member (again, "args", g_steal_pointer (&args));
      written = compact (again);
      g_assert_cmpstr (written, ==, records[i].record);

      engine = sight_action_to_engine (&action);
      if (records[i].engine == NULL)
        g_assert_null (engine);
      else
        {
          g_autofree char *engine_text = compact (engine);

          g_assert_cmpstr (engine_text, ==, records[i].engine);
        }
    }

  /* older traces call a tap "tap"; a tool that is no action is refused */
  {
    g_auto(SightAction) tap = { 0 };
    g_auto(SightAction) none = { 0 };

    g_assert_true (sight_action_from_tool_call (&tap, "tap", NULL));
    g_assert_cmpint (tap.kind, ==, SIGHT_ACTION_TAP_AT);
    g_assert_false (sight_action_from_tool_call (&none, "teleport", NULL));
  }

  /* every verb that acts maps to a kind and back; the observing ones to none */
  for (SightDirectVerb verb = SIGHT_DIRECT_CLICK; verb <= SIGHT_DIRECT_EXPECT; verb++)
    {
      SightActionKind kind;
      SightDirectVerb back;

      if (!sight_direct_verb_to_action (verb, &kind))
        {
          g_assert_true (verb == SIGHT_DIRECT_WAIT_FOR_TEXT || verb == SIGHT_DIRECT_EXPECT);
          continue;
        }
      g_assert_true (sight_direct_verb_from_action (kind, &back));
      g_assert_cmpint (back, ==, verb);
      g_assert_true (sight_action_kind_from_nick (sight_action_kind_to_nick (kind), &kind));
    }
  g_assert_cmpstr (sight_direct_verb_to_string (SIGHT_DIRECT_WAIT_FOR_TEXT), ==, "wait-for-text");
  g_assert_cmpstr (sight_expect_kind_to_string (SIGHT_EXPECT_URL_CONTAINS), ==, "url-contains");
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/direct-step/phrasings", test_phrasings);
  g_test_add_func ("/direct-step/params", test_params);
  g_test_add_func ("/direct-step/scroll-amount", test_scroll_amount);
  g_test_add_func ("/direct-step/bad-inputs", test_bad_inputs);
  g_test_add_func ("/direct-step/round-trip", test_round_trip);
  g_test_add_func ("/direct-step/keys", test_keys);
  g_test_add_func ("/direct-step/role-hints", test_role_hints);
  g_test_add_func ("/direct-step/resolve", test_resolve);
  g_test_add_func ("/direct-step/resolve-nested", test_resolve_nested);
  g_test_add_func ("/direct-step/ambiguity-hint", test_ambiguity_hint);
  g_test_add_func ("/direct-step/node-list", test_node_list);
  g_test_add_func ("/direct-step/actions", test_actions);
  return g_test_run ();
}
