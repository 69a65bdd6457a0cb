/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-recorder"

#include "config.h"

#include "sight-recorder.h"

#include <string.h>

#include "sight-agent-enums.h"
#include "sight-direct-step.h"
#include "sight-enum.h"
#include "sight-json.h"
#include "sight-observation.h"
#include "sight-recorder-resources.h"
#include "sight-secret-fields.h"
#include "sight-secret-fill.h"
#include "sight-web-page.h"

#define HANDLER_NAME "sightRecorder"

struct _SightRecorder {
  GObject parent_instance;

  /* borrowed, weak */
  WebKitWebView *view;

  /* owned */
  WebKitUserScript *script;
  JsonArray        *steps;
  char             *start_url;
  char             *credential_name;
  char             *last_fill_ref;     /* target ref of the last step when it was a fill */
  gint64            last_action_time;  /* monotonic µs of the last click or key */
  char             *last_user;         /* the account typed into an email or username field */
  guint             navigation_window_ms;
  gulong            message_id;
  gulong            load_id;
  gboolean          recording;
  gboolean          offer_credentials;
  /* the pending credential offer: a typed secure value, held host-side
   * (wiped when answered) until the person accepts or declines it */
  JsonObject       *offer_step;
  char             *offer_param;
  char             *offer_name;
  char             *offer_origin;
  char             *offer_purpose;
  char             *offer_value;
};

G_DEFINE_FINAL_TYPE (SightRecorder, sight_recorder, G_TYPE_OBJECT)

enum {
  STEP_ADDED,
  CREDENTIAL_OFFERED,
  N_SIGNALS
};

static void
wipe_free (char *value)
{
  if (value == NULL)
    return;
  memset (value, 0, strlen (value));
  g_free (value);
}

static void
offer_clear (SightRecorder *self)
{
  g_clear_pointer (&self->offer_step, json_object_unref);
  g_clear_pointer (&self->offer_param, g_free);
  g_clear_pointer (&self->offer_name, g_free);
  g_clear_pointer (&self->offer_origin, g_free);
  g_clear_pointer (&self->offer_purpose, g_free);
  g_clear_pointer (&self->offer_value, wipe_free);
}

static guint signals[N_SIGNALS];

static const char *
recorder_script (void)
{
  static char *script;

  if (g_once_init_enter (&script))
    {
      g_autoptr(GBytes) bytes = NULL;
      g_autoptr(GError) error = NULL;
      char *text;

      bytes = g_resource_lookup_data (sight_recorder_js_get_resource (),
                                      "/dev/sightline/agent/js/recorder.js",
                                      G_RESOURCE_LOOKUP_FLAGS_NONE, &error);
      if (bytes == NULL)
        g_error ("recorder.js missing from the agent's resources: %s", error->message);
      /* snapshot.js first: the recorder names elements the way it does;
       * secret-fields.js tells a field's purpose */
      text = g_strconcat (sight_observation_get_script (), "\n", _sight_secret_fields_script (),
                          "\n", (const char *) g_bytes_get_data (bytes, NULL), NULL);
      g_once_init_leave (&script, text);
    }
  return script;
}

static void
add_step (SightRecorder *self,
          JsonObject    *step)
{
  g_autoptr(JsonNode) node = json_node_new (JSON_NODE_OBJECT);

  json_node_set_object (node, step);
  json_array_add_element (self->steps, json_node_ref (node));
  g_debug ("recorded: %s", json_object_get_string_member (step, "do"));
  g_signal_emit (self, signals[STEP_ADDED], 0, node);
}

/* The target of a step from a descriptor: its role, its name quoted, and
 * which of several alike when there are several. */
static void
target_from_descriptor (SightTarget *target,
                        JsonObject  *descriptor)
{
  const char *name = json_object_get_string_member_with_default (descriptor, "name", "");
  gint64 count = json_object_get_int_member_with_default (descriptor, "count", 1);

  target->role = (char *) json_object_get_string_member_with_default (descriptor, "role", NULL);
  target->name = *name != '\0' ? (char *) name : NULL;
  target->quoted = target->name != NULL;
  target->nth = count > 1 ? (int) json_object_get_int_member_with_default (descriptor, "nth", 0)
                          : 0;
}

char *
sight_recorder_step_text (JsonObject      *descriptor,
                          SightDirectVerb  verb,
                          SightExpectKind  expect,
                          const char      *value)
{
  SightDirectStep step = { 0 };

  g_return_val_if_fail (descriptor != NULL, NULL);

  step.verb = verb;
  step.expect = expect;
  step.has_target = TRUE;
  target_from_descriptor (&step.target, descriptor);
  step.value = (char *) value;
  return sight_direct_step_to_text (&step);
}

/* A name for the {param} of a secure field: its name, as an identifier. */
static char *
param_name (const char *field_name)
{
  GString *s = g_string_new (NULL);

  for (const char *p = field_name; p != NULL && *p != '\0'; p++)
    if (g_ascii_isalnum (*p))
      g_string_append_c (s, g_ascii_tolower (*p));
    else if (s->len > 0 && s->str[s->len - 1] != '_')
      g_string_append_c (s, '_');
  while (s->len > 0 && s->str[s->len - 1] == '_')
    g_string_truncate (s, s->len - 1);
  if (s->len == 0 || g_ascii_isdigit (s->str[0]))
    g_string_prepend (s, "password");
  return g_string_free (s, FALSE);
}

/* The account part of what was typed into an email or username field
 * ("member" of "member@example.test"), as a credential name's first part. */
static char *
user_part (const char *typed)
{
  g_autofree char *local = g_strndup (typed, strcspn (typed, "@"));
  GString *s = g_string_new (NULL);

  for (const char *p = local; *p != '\0'; p++)
    if (g_ascii_isalnum (*p) || *p == '-' || *p == '_' || *p == '.')
      g_string_append_c (s, g_ascii_tolower (*p));
  if (s->len == 0)
    return g_string_free (s, TRUE), NULL;
  return g_string_free (s, FALSE);
}

/* A secure field's typed value: held for the offer, known to the redactor
 * at once under the name it would be saved as. */
static void
offer_typed_value (SightRecorder *self,
                   JsonObject    *step,
                   const char    *param,
                   JsonObject    *message)
{
  const char *value = json_object_get_string_member_with_default (message, "value", NULL);
  const char *purpose = json_object_get_string_member_with_default (message, "purpose", NULL);
  const char *uri = self->view != NULL ? webkit_web_view_get_uri (self->view) : NULL;

  if (value == NULL || *value == '\0')
    return;
  offer_clear (self);
  self->offer_step = json_object_ref (step);
  self->offer_param = g_strdup (param);
  self->offer_name = self->last_user != NULL ? g_strconcat (self->last_user, ".", param, NULL)
                                             : g_strdup (param);
  self->offer_origin = sight_origin_normalize (uri);
  self->offer_purpose = g_strdup (sight_credential_purpose_is_valid (purpose) ? purpose
                                                                              : "password");
  self->offer_value = g_strdup (value);
  sight_secret_fill_note_typed (TRUE, self->offer_name, self->offer_value);
  /* the message's copy is wiped: only the offer holds it now */
  memset ((char *) value, 0, strlen (value));
}

static void
handle_message (SightRecorder *self,
                JsonObject    *message)
{
  const char *kind = json_object_get_string_member_with_default (message, "kind", "");
  JsonObject *descriptor = NULL;
  SightDirectStep step = { 0 };
  g_autoptr(JsonObject) out = json_object_new ();
  g_autofree char *text = NULL;
  g_autofree char *param = NULL;
  const char *ref = NULL;

  if (json_object_has_member (message, "target") &&
      JSON_NODE_HOLDS_OBJECT (json_object_get_member (message, "target")))
    descriptor = json_object_get_object_member (message, "target");
  if (descriptor != NULL)
    {
      step.has_target = TRUE;
      target_from_descriptor (&step.target, descriptor);
      ref = json_object_get_string_member_with_default (descriptor, "ref", NULL);
    }

  if (!g_str_equal (kind, "pick"))
    {
      SightActionKind action;

      /* recorder.js names what the person did by its action's nick */
      if (!sight_action_kind_from_nick (kind, &action) ||
          !sight_direct_verb_from_action (action, &step.verb))
        return;
      switch (step.verb)
        {
        case SIGHT_DIRECT_SELECT:
          step.value = (char *) json_object_get_string_member_with_default (message, "value", "");
          break;
        case SIGHT_DIRECT_PRESS:
          step.value = (char *) json_object_get_string_member_with_default (message, "key",
                                                                            "Enter");
          /* a key on the page itself, or on something that is not a field, needs no target */
          if (step.has_target &&
              !sight_role_hint_matches ("textbox", step.target.role) &&
              g_strcmp0 (step.target.role, "textbox") != 0)
            step.has_target = FALSE;
          break;
        case SIGHT_DIRECT_FILL:
          if (json_object_get_boolean_member_with_default (message, "secure", FALSE))
            {
              /* The value was never read: the step names a credential instead. */
              g_autoptr(JsonObject) params = json_object_new ();
              g_autoptr(JsonObject) secret = json_object_new ();

              param = param_name (step.target.name);
              step.param = param;
              json_object_set_string_member (secret, "secret", self->credential_name);
              json_object_set_object_member (params, param, g_steal_pointer (&secret));
              json_object_set_object_member (out, "params", g_steal_pointer (&params));
            }
          else
            {
              const char *purpose = json_object_get_string_member_with_default (message,
                                                                               "purpose", "");

              step.value = (char *) json_object_get_string_member_with_default (message, "value",
                                                                                "");
              if (g_str_equal (purpose, "email") || g_str_equal (purpose, "username"))
                {
                  g_free (self->last_user);
                  self->last_user = user_part (step.value);
                }
            }
          break;
        default:
          /* a click, a double click, a check: the target says it all */
          break;
        }
    }
  else
    {
      /* an element picked for an assertion */
      const char *assertion = json_object_get_string_member_with_default (message, "assertion",
                                                                          "visible");

      step.verb = SIGHT_DIRECT_EXPECT;
      if (!step.has_target)
        return;
      if (g_str_equal (assertion, "text"))
        {
          step.expect = SIGHT_EXPECT_HAS_TEXT;
          step.value = (char *) json_object_get_string_member_with_default (message, "text", NULL);
        }
      else if (g_str_equal (assertion, "value"))
        {
          step.expect = SIGHT_EXPECT_VALUE;
          step.value = (char *) json_object_get_string_member_with_default (message, "value", NULL);
        }
      else if (g_str_equal (assertion, "checked"))
        step.expect = json_object_get_boolean_member_with_default (message, "checked", FALSE)
                        ? SIGHT_EXPECT_CHECKED : SIGHT_EXPECT_UNCHECKED;
      else
        step.expect = SIGHT_EXPECT_VISIBLE;
      if ((step.expect == SIGHT_EXPECT_HAS_TEXT || step.expect == SIGHT_EXPECT_VALUE) &&
          step.value == NULL)
        {
          g_message ("the picked element has no %s to assert (a secure field's value is "
                     "never read)", assertion);
          return;
        }
    }

  text = sight_direct_step_to_text (&step);
  json_object_set_string_member (out, "do", text);
  if (descriptor != NULL)
    json_object_set_object_member (out, "target", json_object_ref (descriptor));

  /* Typing into the same field again replaces the fill: one fill per field. */
  if (step.verb == SIGHT_DIRECT_FILL && ref != NULL && g_strcmp0 (ref, self->last_fill_ref) == 0 &&
      json_array_get_length (self->steps) > 0)
    json_array_remove_element (self->steps, json_array_get_length (self->steps) - 1);
  g_free (self->last_fill_ref);
  self->last_fill_ref = step.verb == SIGHT_DIRECT_FILL ? g_strdup (ref) : NULL;

  if (step.verb != SIGHT_DIRECT_EXPECT)
    self->last_action_time = g_get_monotonic_time ();
  if (step.verb == SIGHT_DIRECT_FILL && step.param != NULL && self->offer_credentials)
    offer_typed_value (self, out, step.param, message);
  else if (json_object_has_member (message, "value") &&
           json_object_get_boolean_member_with_default (message, "secure", FALSE))
    {
      /* not asked for: dropped unread */
      const char *value = json_object_get_string_member (message, "value");

      if (value != NULL)
        memset ((char *) value, 0, strlen (value));
    }
  add_step (self, out);
  if (self->offer_step == out)
    g_signal_emit (self, signals[CREDENTIAL_OFFERED], 0, self->offer_name,
                   self->offer_origin, self->offer_purpose);
}

static void
script_message_cb (WebKitUserContentManager *manager,
                   JSCValue                 *value,
                   gpointer                  user_data)
{
  SightRecorder *self = user_data;
  g_autofree char *json = NULL;
  g_autoptr(JsonNode) message = NULL;

  if (!self->recording || !jsc_value_is_string (value))
    return;
  json = jsc_value_to_string (value);
  message = sight_json_parse (json, -1, SIGHT_JSON_MAX_DEPTH, NULL);
  /* it may hold a secure field's value (credential offers) */
  memset (json, 0, strlen (json));
  if (message == NULL || !JSON_NODE_HOLDS_OBJECT (message))
    return;
  handle_message (self, json_node_get_object (message));
}

static void
load_changed_cb (WebKitWebView   *view,
                 WebKitLoadEvent  event,
                 gpointer         user_data)
{
  SightRecorder *self = user_data;
  const char *uri;
  gint64 since_ms;
  g_autoptr(JsonObject) out = NULL;
  g_autofree char *text = NULL;

  if (event != WEBKIT_LOAD_COMMITTED || !self->recording)
    return;
  uri = webkit_web_view_get_uri (view);
  if (uri == NULL || g_str_has_prefix (uri, "about:"))
    return;
  if (self->start_url == NULL)
    {
      self->start_url = g_strdup (uri);
      return;
    }
  since_ms = (g_get_monotonic_time () - self->last_action_time) / 1000;
  g_debug ("navigation to %s, %" G_GINT64_FORMAT " ms after the last action", uri, since_ms);
  if (self->last_action_time != 0 && since_ms <= self->navigation_window_ms)
    return;  /* the click or the key did it */

  text = g_strdup_printf ("go to %s", uri);
  out = json_object_new ();
  json_object_set_string_member (out, "do", text);
  g_clear_pointer (&self->last_fill_ref, g_free);
  self->last_action_time = g_get_monotonic_time ();
  add_step (self, out);
}

static void
evaluate_cb (GObject      *source,
             GAsyncResult *result,
             gpointer      user_data)
{
  g_autoptr(JSCValue) value = NULL;
  g_autoptr(GError) error = NULL;

  value = webkit_web_view_evaluate_javascript_finish (WEBKIT_WEB_VIEW (source), result, &error);
  if (value == NULL)
    g_debug ("recorder script: %s", error->message);
}

static void
run_in_world (SightRecorder *self,
              const char    *script)
{
  if (self->view == NULL)
    return;
  webkit_web_view_evaluate_javascript (self->view, script, -1, SIGHT_SCRIPT_WORLD, NULL, NULL,
                                       evaluate_cb, NULL);
}

void
sight_recorder_start (SightRecorder *self)
{
  WebKitUserContentManager *manager;
  const char *uri;

  g_return_if_fail (SIGHT_IS_RECORDER (self));
  g_return_if_fail (self->view != NULL);

  if (self->recording)
    return;
  self->recording = TRUE;
  manager = webkit_web_view_get_user_content_manager (self->view);
  webkit_user_content_manager_register_script_message_handler (manager, HANDLER_NAME,
                                                               SIGHT_SCRIPT_WORLD);
  self->message_id = g_signal_connect (manager, "script-message-received::" HANDLER_NAME,
                                       G_CALLBACK (script_message_cb), self);
  g_autofree char *source = g_strdup_printf ("globalThis.__sightRecorderOffersCredentials = %s;\n%s",
                                             self->offer_credentials ? "true" : "false",
                                             recorder_script ());

  self->script = webkit_user_script_new_for_world (source,
                                                   WEBKIT_USER_CONTENT_INJECT_TOP_FRAME,
                                                   WEBKIT_USER_SCRIPT_INJECT_AT_DOCUMENT_END,
                                                   SIGHT_SCRIPT_WORLD, NULL, NULL);
  webkit_user_content_manager_add_script (manager, self->script);
  self->load_id = g_signal_connect (self->view, "load-changed", G_CALLBACK (load_changed_cb), self);

  uri = webkit_web_view_get_uri (self->view);
  if (uri != NULL && !g_str_has_prefix (uri, "about:"))
    {
      g_free (self->start_url);
      self->start_url = g_strdup (uri);
      run_in_world (self, source);
    }
}

void
sight_recorder_stop (SightRecorder *self)
{
  WebKitUserContentManager *manager;

  g_return_if_fail (SIGHT_IS_RECORDER (self));

  if (!self->recording || self->view == NULL)
    {
      self->recording = FALSE;
      return;
    }
  run_in_world (self, "if (globalThis.__sight && __sight.recorder) __sight.recorder.flush ();");
  self->recording = FALSE;
  manager = webkit_web_view_get_user_content_manager (self->view);
  if (self->script != NULL)
    webkit_user_content_manager_remove_script (manager, self->script);
  g_clear_pointer (&self->script, webkit_user_script_unref);
  g_clear_signal_handler (&self->message_id, manager);
  g_clear_signal_handler (&self->load_id, self->view);
  webkit_user_content_manager_unregister_script_message_handler (manager, HANDLER_NAME,
                                                                 SIGHT_SCRIPT_WORLD);
}

gboolean
sight_recorder_is_recording (SightRecorder *self)
{
  g_return_val_if_fail (SIGHT_IS_RECORDER (self), FALSE);
  return self->recording;
}

void
sight_recorder_pick (SightRecorder *self,
                     SightPickKind  kind)
{
  g_autofree char *script = NULL;

  g_return_if_fail (SIGHT_IS_RECORDER (self));
  g_return_if_fail (kind >= SIGHT_PICK_VISIBLE && kind <= SIGHT_PICK_CHECKED);

  /* recorder.js takes the kind by its nick */
  script = g_strdup_printf ("if (globalThis.__sight && __sight.recorder) "
                            "__sight.recorder.pick ('%s');",
                            sight_enum_to_nick (SIGHT_TYPE_PICK_KIND, kind));
  run_in_world (self, script);
}

void
sight_recorder_set_credential_name (SightRecorder *self,
                                    const char    *name)
{
  g_return_if_fail (SIGHT_IS_RECORDER (self));
  g_return_if_fail (name != NULL && *name != '\0');

  g_free (self->credential_name);
  self->credential_name = g_strdup (name);
}

void
sight_recorder_set_offer_credentials (SightRecorder *self,
                                      gboolean       offer)
{
  g_return_if_fail (SIGHT_IS_RECORDER (self));
  self->offer_credentials = offer;
  if (!offer)
    offer_clear (self);
}

gboolean
sight_recorder_get_credential_offer (SightRecorder  *self,
                                     const char    **name,
                                     const char    **origin,
                                     const char    **purpose)
{
  g_return_val_if_fail (SIGHT_IS_RECORDER (self), FALSE);

  if (self->offer_step == NULL)
    return FALSE;
  if (name != NULL)
    *name = self->offer_name;
  if (origin != NULL)
    *origin = self->offer_origin;
  if (purpose != NULL)
    *purpose = self->offer_purpose;
  return TRUE;
}

char *
sight_recorder_accept_credential (SightRecorder *self,
                                  const char    *name)
{
  JsonObject *params, *secret;
  char *value;

  g_return_val_if_fail (SIGHT_IS_RECORDER (self), NULL);
  g_return_val_if_fail (name != NULL && *name != '\0', NULL);

  if (self->offer_step == NULL)
    return NULL;
  params = json_object_get_object_member (self->offer_step, "params");
  secret = params != NULL ? json_object_get_object_member (params, self->offer_param) : NULL;
  if (secret != NULL)
    json_object_set_string_member (secret, "secret", name);
  sight_secrets_register_value (name, self->offer_value);
  value = g_steal_pointer (&self->offer_value);
  offer_clear (self);
  return value;
}

void
sight_recorder_decline_credential (SightRecorder *self)
{
  g_return_if_fail (SIGHT_IS_RECORDER (self));
  offer_clear (self);
}

void
sight_recorder_set_navigation_window (SightRecorder *self,
                                      guint          window_ms)
{
  g_return_if_fail (SIGHT_IS_RECORDER (self));
  self->navigation_window_ms = window_ms;
}

const char *
sight_recorder_get_start_url (SightRecorder *self)
{
  g_return_val_if_fail (SIGHT_IS_RECORDER (self), NULL);
  return self->start_url;
}

JsonNode *
sight_recorder_get_steps (SightRecorder *self)
{
  JsonNode *node;

  g_return_val_if_fail (SIGHT_IS_RECORDER (self), NULL);

  /* a deep copy: later steps do not change what the caller holds */
  {
    g_autoptr(JsonNode) live = json_node_new (JSON_NODE_ARRAY);
    g_autofree char *text = NULL;

    json_node_set_array (live, self->steps);
    text = json_to_string (live, FALSE);
    node = json_from_string (text, NULL);
  }
  return node;
}

JsonNode *
sight_recorder_to_test_file (SightRecorder *self,
                             const char    *name)
{
  g_autoptr(JsonObject) file = json_object_new ();
  JsonNode *node;

  g_return_val_if_fail (SIGHT_IS_RECORDER (self), NULL);

  json_object_set_string_member (file, "name", name != NULL ? name : "Recorded test");
  if (self->start_url != NULL)
    json_object_set_string_member (file, "url", self->start_url);
  json_object_set_member (file, "steps", sight_recorder_get_steps (self));
  node = json_node_new (JSON_NODE_OBJECT);
  json_node_set_object (node, file);
  return node;
}

static void
sight_recorder_dispose (GObject *object)
{
  SightRecorder *self = SIGHT_RECORDER (object);

  sight_recorder_stop (self);
  g_clear_weak_pointer (&self->view);
  G_OBJECT_CLASS (sight_recorder_parent_class)->dispose (object);
}

static void
sight_recorder_finalize (GObject *object)
{
  SightRecorder *self = SIGHT_RECORDER (object);

  g_clear_pointer (&self->steps, json_array_unref);
  g_free (self->start_url);
  g_free (self->credential_name);
  g_free (self->last_fill_ref);
  g_free (self->last_user);
  offer_clear (self);
  G_OBJECT_CLASS (sight_recorder_parent_class)->finalize (object);
}

static void
sight_recorder_class_init (SightRecorderClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = sight_recorder_dispose;
  object_class->finalize = sight_recorder_finalize;

  /* A step was recorded (a test-file step object in a JsonNode). */
  signals[STEP_ADDED] = g_signal_new ("step-added", G_TYPE_FROM_CLASS (klass),
                                      G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                      G_TYPE_NONE, 1, JSON_TYPE_NODE);
  /* A value typed into a secure field may be saved as a credential
   * (sight_recorder_set_offer_credentials): the name proposed, the
   * page's origin (or NULL), the purpose. Emitted after its step-added. */
  signals[CREDENTIAL_OFFERED] = g_signal_new ("credential-offered", G_TYPE_FROM_CLASS (klass),
                                              G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                              G_TYPE_NONE, 3, G_TYPE_STRING, G_TYPE_STRING,
                                              G_TYPE_STRING);
}

static void
sight_recorder_init (SightRecorder *self)
{
  self->steps = json_array_new ();
  self->credential_name = g_strdup ("password");
  self->navigation_window_ms = 3000;
}

SightRecorder *
sight_recorder_new (WebKitWebView *view)
{
  SightRecorder *self;

  g_return_val_if_fail (WEBKIT_IS_WEB_VIEW (view), NULL);

  self = g_object_new (SIGHT_TYPE_RECORDER, NULL);
  g_set_weak_pointer (&self->view, view);
  return self;
}
