/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-action"

#include "config.h"

#include "sight-action.h"

#include <string.h>

#include "sight-engine-enums.h"
#include "sight-enum.h"

const char *
sight_action_kind_to_nick (SightActionKind kind)
{
  return sight_enum_to_nick (SIGHT_TYPE_ACTION_KIND, kind);
}

gboolean
sight_action_kind_from_nick (const char      *name,
                             SightActionKind *out_kind)
{
  int value;

  if (!sight_enum_from_nick (SIGHT_TYPE_ACTION_KIND, name, &value))
    return FALSE;
  if (out_kind != NULL)
    *out_kind = value;
  return TRUE;
}

static const char * const control_roles[] = {
  "button", "link", "checkbox", "radio", "switch", "tab", "menuitem", "menuitemcheckbox",
  "menuitemradio", "option", "combobox", "listbox", "textbox", "searchbox", "spinbutton",
  "slider", "treeitem", "gridcell", "columnheader", "row", NULL,
};

const char * const *
sight_action_control_roles (void)
{
  return control_roles;
}

const char *
_sight_action_roles_script (void)
{
  static gsize init;
  static char *script;

  if (g_once_init_enter (&init))
    {
      g_autoptr(JsonBuilder) builder = json_builder_new ();
      g_autoptr(JsonNode) roles = NULL;
      g_autofree char *json = NULL;

      json_builder_begin_array (builder);
      for (guint i = 0; control_roles[i] != NULL; i++)
        json_builder_add_string_value (builder, control_roles[i]);
      json_builder_end_array (builder);
      roles = json_builder_get_root (builder);
      json = json_to_string (roles, FALSE);
      script = g_strdup_printf ("globalThis.__sight = globalThis.__sight || {};\n"
                                "globalThis.__sight.controlRoles = %s;", json);
      g_once_init_leave (&init, 1);
    }
  return script;
}

gboolean
sight_action_kind_is_page_action (SightActionKind kind)
{
  return kind <= SIGHT_ACTION_TAP_AT;
}

void
sight_action_init (SightAction     *action,
                   SightActionKind  kind)
{
  g_return_if_fail (action != NULL);

  memset (action, 0, sizeof *action);
  action->kind = kind;
}

void
sight_action_clear (SightAction *action)
{
  g_return_if_fail (action != NULL);

  if (action->value != NULL)
    memset (action->value, 0, strlen (action->value));
  g_clear_pointer (&action->value, g_free);
  g_clear_pointer (&action->ref, g_free);
  g_clear_pointer (&action->param, g_free);
  g_clear_pointer (&action->descriptor, json_object_unref);
}

static void
set_one_string (JsonObject *object,
                const char *member,
                const char *value)
{
  JsonArray *values = json_array_new ();

  json_array_add_string_element (values, value != NULL ? value : "");
  json_object_set_array_member (object, member, values);
}

/* A page scroll: "down", "up", "top", "bottom" or a pixel count. */
static void
set_page_scroll (JsonObject *engine,
                 const char *how)
{
  if (how == NULL)
    how = "down";
  if (g_str_equal (how, "up"))
    json_object_set_int_member (engine, "pages", -1);
  else if (g_str_equal (how, "top"))
    json_object_set_int_member (engine, "dy", -G_MAXINT32);
  else if (g_str_equal (how, "bottom"))
    json_object_set_int_member (engine, "dy", G_MAXINT32);
  else if (g_ascii_isdigit (how[0]) || how[0] == '-')
    json_object_set_int_member (engine, "dy", g_ascii_strtoll (how, NULL, 10));
  else
    json_object_set_int_member (engine, "pages", 1);
}

JsonObject *
sight_action_to_engine (const SightAction *action)
{
  JsonObject *engine;
  const char *type;
  const char *value;

  g_return_val_if_fail (action != NULL, NULL);

  if (!sight_action_kind_is_page_action (action->kind))
    return NULL;
  engine = json_object_new ();
  value = action->value;
  type = sight_action_kind_to_nick (action->kind);
  switch (action->kind)
    {
    case SIGHT_ACTION_DOUBLE_CLICK:
      type = "click";
      json_object_set_int_member (engine, "clickCount", 2);
      break;
    case SIGHT_ACTION_TAP_AT:
      /* the node found at the point */
      type = "click";
      break;
    case SIGHT_ACTION_FILL:
      json_object_set_string_member (engine, "value", value != NULL ? value : "");
      break;
    case SIGHT_ACTION_PRESS:
      json_object_set_string_member (engine, "keys", value != NULL && *value ? value : "Enter");
      break;
    case SIGHT_ACTION_SELECT:
      set_one_string (engine, "values", value);
      break;
    case SIGHT_ACTION_UPLOAD:
      type = "setFiles";
      set_one_string (engine, "files", value);
      break;
    case SIGHT_ACTION_SCROLL:
      if (action->ref != NULL)
        type = "scrollIntoView";
      else
        set_page_scroll (engine, value);
      break;
    default:
      /* the type alone */
      break;
    }
  json_object_set_string_member (engine, "type", type);
  return engine;
}

JsonObject *
sight_action_to_tool_call (const SightAction  *action,
                           const char        **out_tool)
{
  JsonObject *args;

  g_return_val_if_fail (action != NULL, NULL);

  if (action->kind == SIGHT_ACTION_UPLOAD || action->kind == SIGHT_ACTION_DONE)
    return NULL;
  args = json_object_new ();
  *out_tool = sight_action_kind_to_nick (action->kind);
  if (action->ref != NULL && action->kind != SIGHT_ACTION_TAP_AT)
    json_object_set_string_member (args, "ref", action->ref);
  switch (action->kind)
    {
    case SIGHT_ACTION_FILL:
    case SIGHT_ACTION_SELECT:
      if (action->param != NULL)
        json_object_set_string_member (args, "param", action->param);
      else
        json_object_set_string_member (args, action->kind == SIGHT_ACTION_FILL ? "value" : "option",
                                       action->value);
      break;
    case SIGHT_ACTION_PRESS:
      json_object_set_string_member (args, "key", action->value);
      break;
    case SIGHT_ACTION_CHECK:
    case SIGHT_ACTION_UNCHECK:
      *out_tool = sight_action_kind_to_nick (SIGHT_ACTION_CHECK);
      json_object_set_boolean_member (args, "checked", action->kind == SIGHT_ACTION_CHECK);
      break;
    case SIGHT_ACTION_SCROLL:
      if (action->ref == NULL)
        json_object_set_string_member (args, "direction", action->value);
      break;
    case SIGHT_ACTION_TAP_AT:
      json_object_set_double_member (args, "x", action->x);
      json_object_set_double_member (args, "y", action->y);
      break;
    case SIGHT_ACTION_NAVIGATE:
      json_object_set_string_member (args, "url", action->value);
      break;
    case SIGHT_ACTION_WAIT:
      json_object_set_int_member (args, "ms",
                                  action->value != NULL ? g_ascii_strtoll (action->value, NULL, 10)
                                                        : 0);
      break;
    default:
      /* the ref, or nothing */
      break;
    }
  return args;
}

static char *
string_arg (JsonObject *args,
            const char *member)
{
  JsonNode *node = args != NULL ? json_object_get_member (args, member) : NULL;

  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node) ||
      json_node_get_value_type (node) != G_TYPE_STRING)
    return NULL;
  return g_strdup (json_node_get_string (node));
}

gboolean
sight_action_from_tool_call (SightAction *action,
                             const char  *tool,
                             JsonObject  *args)
{
  SightActionKind kind;

  g_return_val_if_fail (action != NULL, FALSE);

  if (g_strcmp0 (tool, "tap") == 0)
    kind = SIGHT_ACTION_TAP_AT;
  else if (!sight_action_kind_from_nick (tool, &kind))
    return FALSE;
  if (kind == SIGHT_ACTION_CHECK && args != NULL &&
      !json_object_get_boolean_member_with_default (args, "checked", TRUE))
    kind = SIGHT_ACTION_UNCHECK;

  sight_action_init (action, kind);
  action->ref = string_arg (args, "ref");
  action->param = string_arg (args, "param");
  switch (kind)
    {
    case SIGHT_ACTION_FILL:
    case SIGHT_ACTION_SELECT:
      action->value = string_arg (args, "value");
      if (action->value == NULL)
        action->value = string_arg (args, "option");
      break;
    case SIGHT_ACTION_PRESS:
      action->value = string_arg (args, "key");
      break;
    case SIGHT_ACTION_SCROLL:
      action->value = string_arg (args, "direction");
      break;
    case SIGHT_ACTION_NAVIGATE:
      action->value = string_arg (args, "url");
      break;
    case SIGHT_ACTION_WAIT:
      action->value = g_strdup_printf ("%" G_GINT64_FORMAT,
                                       args != NULL
                                         ? json_object_get_int_member_with_default (args, "ms", 0)
                                         : 0);
      break;
    case SIGHT_ACTION_TAP_AT:
      if (args != NULL)
        {
          action->x = json_object_get_double_member_with_default (args, "x", 0);
          action->y = json_object_get_double_member_with_default (args, "y", 0);
        }
      break;
    default:
      /* a ref at most */
      break;
    }
  return TRUE;
}
