/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-cmd-skills"

#include "config.h"

#include <glib/gi18n.h>
#include <json-glib/json-glib.h>

#include "sight-cli.h"
#include "sight-cli-args.h"
#include "sight-commands.h"
#include "sight-error.h"
#include "sight-skill.h"

/* The skills list_skills offers, and where user skills are read from. */
int
sight_cmd_skills (int    argc,
                  char **argv)
{
  g_autoptr(GPtrArray) skills = NULL;
  g_auto(GStrv) dirs = NULL;
  gboolean json = FALSE;
  int status = 0;
  GOptionEntry entries[] = {
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, N_("Print JSON, as list_skills answers"), NULL },
    { NULL }
  };

  if (!sight_cli_parse ("skills", _("— list the skills that run_skill and the skill tools run"),
                        entries, &argc, &argv, &status))
    return status;
  if (argc != 1)
    return sight_cli_usage_error ("skills", _("takes no arguments"));

  skills = sight_skill_list ();
  if (json)
    {
      g_autoptr(JsonArray) list = json_array_new ();
      g_autoptr(JsonObject) root = json_object_new ();
      g_autoptr(JsonNode) node = json_node_new (JSON_NODE_OBJECT);
      g_autofree char *text = NULL;

      for (guint i = 0; i < skills->len; i++)
        json_array_add_element (list, sight_skill_to_json (g_ptr_array_index (skills, i)));
      json_object_set_array_member (root, "skills", g_steal_pointer (&list));
      json_node_set_object (node, root);
      text = sight_cli_json_text (node);
      g_print ("%s\n", text);
      return 0;
    }

  for (guint i = 0; i < skills->len; i++)
    {
      SightSkill *skill = g_ptr_array_index (skills, i);
      g_autofree char *tool = sight_skill_tool_name (skill);
      g_autofree char *description = sight_text_sanitize (sight_skill_get_description (skill), 200);

      g_print ("%-24s %-10s %-28s %s\n", sight_skill_get_name (skill),
               sight_skill_get_version (skill), tool, description);
    }
  dirs = sight_skill_dirs ();
  g_print ("\n%s\n", _("User skills are JSON files in:"));
  for (guint i = 0; dirs[i] != NULL; i++)
    g_print ("  %s\n", dirs[i]);
  return 0;
}
