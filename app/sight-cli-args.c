/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-cli-args"

#include "config.h"

#include "sight-cli-args.h"

#include <glib/gi18n.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sight-cli.h"

void
sight_args_clear (SightArgs *args)
{
  g_clear_pointer (&args->args, json_object_unref);
  g_clear_pointer (&args->positional, g_strfreev);
  g_clear_pointer (&args->output, g_free);
}

static void
print_usage (const char         *command,
             const char         *usage,
             const SightArgSpec *specs,
             gboolean            takes_output)
{
  g_print ("%s\n  sightline %s %s\n\n%s\n", _("Usage:"), command, usage, _("Options:"));
  for (const SightArgSpec *s = specs; s->flag != NULL; s++)
    {
      g_autofree char *left = NULL;

      switch (s->type)
        {
        case SIGHT_ARG_BOOL:
          left = g_strdup_printf ("--[no-]%s", s->flag);
          break;
        case SIGHT_ARG_INT:
          left = g_strdup_printf ("--%s N", s->flag);
          break;
        case SIGHT_ARG_LIST:
          left = g_strdup_printf ("--%s A,B", s->flag);
          break;
        case SIGHT_ARG_REPEAT:
          left = g_strdup_printf ("--%s TEXT…", s->flag);
          break;
        case SIGHT_ARG_STRING:
        default:
          left = g_strdup_printf ("--%s VALUE", s->flag);
          break;
        }
      g_print ("  %-26s %s\n", left, _(s->help));
    }
  if (takes_output)
    g_print ("  %-26s %s\n", "--output FILE", _("Write the result to FILE"));
  g_print ("  %-26s %s\n", "--json", _("Print the result as JSON"));
}

static gboolean
set_value (const SightArgSpec *spec,
           const char         *value,
           JsonObject         *args,
           GError            **error)
{
  switch (spec->type)
    {
    case SIGHT_ARG_STRING:
      json_object_set_string_member (args, spec->name, value);
      return TRUE;

    case SIGHT_ARG_INT:
      {
        char *end = NULL;
        gint64 n;

        errno = 0;
        n = g_ascii_strtoll (value, &end, 10);
        if (errno != 0 || end == value || *end != '\0')
          {
            g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                         _("--%s takes a whole number, not “%s”"), spec->flag, value);
            return FALSE;
          }
        json_object_set_int_member (args, spec->name, n);
        return TRUE;
      }

    case SIGHT_ARG_BOOL:
      if (g_ascii_strcasecmp (value, "true") == 0 || g_str_equal (value, "1"))
        json_object_set_boolean_member (args, spec->name, TRUE);
      else if (g_ascii_strcasecmp (value, "false") == 0 || g_str_equal (value, "0"))
        json_object_set_boolean_member (args, spec->name, FALSE);
      else
        {
          g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                       _("--%s takes true or false, not “%s”"), spec->flag, value);
          return FALSE;
        }
      return TRUE;

    case SIGHT_ARG_LIST:
      {
        JsonArray *array;
        g_auto(GStrv) parts = g_strsplit (value, ",", -1);

        if (!json_object_has_member (args, spec->name))
          json_object_set_array_member (args, spec->name, json_array_new ());
        array = json_object_get_array_member (args, spec->name);
        for (char **p = parts; *p != NULL; p++)
          if (**p != '\0')
            json_array_add_string_element (array, g_strstrip (*p));
        return TRUE;
      }

    case SIGHT_ARG_REPEAT:
      if (!json_object_has_member (args, spec->name))
        json_object_set_array_member (args, spec->name, json_array_new ());
      json_array_add_string_element (json_object_get_array_member (args, spec->name), value);
      return TRUE;

    default:
      g_assert_not_reached ();
    }
}

gboolean
sight_args_parse (const char         *command,
                  const char         *usage,
                  const SightArgSpec *specs,
                  gboolean            takes_output,
                  int                 argc,
                  char              **argv,
                  SightArgs          *out,
                  int                *exit_status)
{
  g_autoptr(GStrvBuilder) positional = g_strv_builder_new ();
  g_autoptr(GError) error = NULL;

  out->args = json_object_new ();
  *exit_status = 0;

  for (int i = 1; i < argc; i++)
    {
      const char *arg = argv[i];
      g_autofree char *flag = NULL;
      const char *value = NULL;
      const char *eq;
      gboolean negated = FALSE;
      const SightArgSpec *spec = NULL;

      if (g_str_equal (arg, "--"))
        {
          for (i++; i < argc; i++)
            g_strv_builder_add (positional, argv[i]);
          break;
        }
      if (!g_str_has_prefix (arg, "--"))
        {
          if (arg[0] == '-' && arg[1] != '\0')
            {
              if (g_str_equal (arg, "-h"))
                {
                  print_usage (command, usage, specs, takes_output);
                  return FALSE;
                }
              *exit_status = sight_cli_usage_error (command, _("unknown option %s"), arg);
              return FALSE;
            }
          g_strv_builder_add (positional, arg);
          continue;
        }

      eq = strchr (arg, '=');
      flag = eq ? g_strndup (arg + 2, eq - arg - 2) : g_strdup (arg + 2);
      if (eq != NULL)
        value = eq + 1;

      if (g_str_equal (flag, "help"))
        {
          print_usage (command, usage, specs, takes_output);
          return FALSE;
        }
      if (g_str_equal (flag, "json") && value == NULL)
        {
          out->json = TRUE;
          continue;
        }
      if (takes_output && g_str_equal (flag, "output"))
        {
          if (value == NULL && i + 1 < argc)
            value = argv[++i];
          if (value == NULL || *value == '\0')
            {
              *exit_status = sight_cli_usage_error (command, _("--output needs a file name"));
              return FALSE;
            }
          g_free (out->output);
          out->output = g_strdup (value);
          continue;
        }

      for (const SightArgSpec *s = specs; s->flag != NULL; s++)
        {
          if (g_str_equal (s->flag, flag))
            spec = s;
          else if (s->type == SIGHT_ARG_BOOL && g_str_has_prefix (flag, "no-") &&
                   g_str_equal (s->flag, flag + 3))
            {
              spec = s;
              negated = TRUE;
            }
        }
      if (spec == NULL)
        {
          *exit_status = sight_cli_usage_error (command, _("unknown option --%s"), flag);
          return FALSE;
        }

      if (spec->type == SIGHT_ARG_BOOL && value == NULL)
        value = negated ? "false" : "true";
      else if (value == NULL)
        {
          if (i + 1 >= argc)
            {
              *exit_status = sight_cli_usage_error (command, _("--%s needs a value"), flag);
              return FALSE;
            }
          value = argv[++i];
        }
      if (!set_value (spec, value, out->args, &error))
        {
          *exit_status = sight_cli_usage_error (command, "%s", error->message);
          return FALSE;
        }
    }

  out->positional = g_strv_builder_end (positional);
  return TRUE;
}

/* A command's one top-level loop, while it runs. */
static GMainLoop *top_loop;

void
sight_cli_run_until (SightCliDoneFunc done,
                     gpointer         user_data)
{
  /* Never from inside a callback: that would be a nested loop. */
  g_return_if_fail (top_loop == NULL);
  g_return_if_fail (g_main_depth () == 0);

  top_loop = g_main_loop_new (NULL, FALSE);
  while (!done (user_data))
    g_main_loop_run (top_loop);
  g_clear_pointer (&top_loop, g_main_loop_unref);
}

void
sight_cli_wake (void)
{
  if (top_loop != NULL)
    g_main_loop_quit (top_loop);
}

void
sight_cli_result_cb (GObject      *source,
                     GAsyncResult *result,
                     gpointer      user_data)
{
  *(GAsyncResult **) user_data = g_object_ref (result);
  sight_cli_wake ();
}

static gboolean
result_set (gpointer user_data)
{
  return *(GAsyncResult **) user_data != NULL;
}

GAsyncResult *
sight_cli_wait (GAsyncResult **result)
{
  if (*result == NULL)
    sight_cli_run_until (result_set, result);
  return *result;
}

gboolean
sight_cli_write_file (const char  *path,
                      GBytes      *bytes,
                      GError     **error)
{
  /* g_file_set_contents writes a temporary file in the same folder and
   * renames it over @path, so a failure leaves no partial file. */
  return g_file_set_contents_full (path, g_bytes_get_data (bytes, NULL),
                                   g_bytes_get_size (bytes),
                                   G_FILE_SET_CONTENTS_CONSISTENT, 0644, error);
}

char *
sight_cli_json_text (JsonNode *node)
{
  g_autoptr(JsonGenerator) generator = json_generator_new ();

  json_generator_set_pretty (generator, TRUE);
  json_generator_set_root (generator, node);
  return json_generator_to_data (generator, NULL);
}

gboolean
sight_cli_emit_text (const char  *output,
                     const char  *text,
                     GError     **error)
{
  g_autoptr(GBytes) bytes = NULL;

  if (output == NULL)
    {
      g_print ("%s\n", text);
      return TRUE;
    }
  bytes = g_bytes_new_static (text, strlen (text));
  return sight_cli_write_file (output, bytes, error);
}
