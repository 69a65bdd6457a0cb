/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/* Reading a tool's arguments (the MCP tools' camelCase names; the command
 * line maps its kebab-case flags onto the same object). Each getter fails
 * with INVALID_ARGUMENT naming the argument and its valid range. */

gboolean sight_tool_args_check_known   (JsonObject          *args,
                                        const char * const  *known,
                                        GError             **error);
gboolean sight_tool_args_get_int       (JsonObject          *args,
                                        const char          *name,
                                        gint64               fallback,
                                        gint64               min,
                                        gint64               max,
                                        gint64              *out,
                                        GError             **error);
gboolean sight_tool_args_get_bool      (JsonObject          *args,
                                        const char          *name,
                                        gboolean             fallback,
                                        gboolean            *out,
                                        GError             **error);
/* A string of at most @max_chars characters; NULL when absent. */
gboolean sight_tool_args_get_string    (JsonObject          *args,
                                        const char          *name,
                                        gsize                max_chars,
                                        const char         **out,
                                        GError             **error);
/* A string that is one of @choices (NULL-terminated); @fallback when absent. */
gboolean sight_tool_args_get_choice    (JsonObject          *args,
                                        const char          *name,
                                        const char * const  *choices,
                                        const char          *fallback,
                                        const char         **out,
                                        GError             **error);
/* An array of strings, each one of @choices when given, at most @max_items;
 * returns a new NULL-terminated vector (@fallback copied when absent). */
gboolean sight_tool_args_get_strv      (JsonObject          *args,
                                        const char          *name,
                                        const char * const  *choices,
                                        guint                max_items,
                                        gsize                max_chars,
                                        const char * const  *fallback,
                                        char              ***out,
                                        GError             **error);
/* An http(s) URL of at most 2048 characters; required when @required. */
gboolean sight_tool_args_get_url       (JsonObject          *args,
                                        const char          *name,
                                        gboolean             required,
                                        const char         **out,
                                        GError             **error);

/* Checks that @url is an absolute http or https URL of at most 2048 characters. */
gboolean sight_url_validate            (const char          *url,
                                        const char          *argument,
                                        GError             **error);

G_END_DECLS
