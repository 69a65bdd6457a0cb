/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The WebKit web processes a test program started, found in /proc: its
 * descendants (through bubblewrap, when the sandbox is on) whose command name
 * is WebKitWebProcess. */
#pragma once

#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include <glib.h>

/* The parent of @pid and its command name (@comm: 16 bytes), from
 * /proc/PID/stat; FALSE when it is gone. */
G_GNUC_UNUSED static gboolean
proc_stat (pid_t  pid,
           pid_t *ppid,
           char   comm[16])
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/stat", (int) pid);
  g_autofree char *text = NULL;
  const char *open, *close;
  gsize n;

  if (!g_file_get_contents (path, &text, NULL, NULL))
    return FALSE;
  /* "PID (COMM) STATE PPID …"; COMM may hold spaces and parentheses. */
  open = strchr (text, '(');
  close = strrchr (text, ')');
  if (open == NULL || close == NULL || close < open)
    return FALSE;
  n = MIN ((gsize) (close - open - 1), (gsize) 15);
  memcpy (comm, open + 1, n);
  comm[n] = '\0';
  if (close[1] != ' ' || close[2] == '\0' || close[3] != ' ')
    return FALSE;
  /* A zombie has ended already. */
  if (close[2] == 'Z')
    return FALSE;
  *ppid = (pid_t) strtol (close + 4, NULL, 10);
  return TRUE;
}

/* The live WebKitWebProcess descendants of this process (pid_t). */
G_GNUC_UNUSED static GArray *
web_processes (void)
{
  g_autoptr(GHashTable) parent = g_hash_table_new (NULL, NULL);
  g_autoptr(GHashTable) names = g_hash_table_new_full (NULL, NULL, NULL, g_free);
  g_autoptr(GDir) dir = g_dir_open ("/proc", 0, NULL);
  GArray *found = g_array_new (FALSE, FALSE, sizeof (pid_t));
  const char *entry;
  pid_t self = getpid ();

  while (dir != NULL && (entry = g_dir_read_name (dir)) != NULL)
    {
      pid_t pid = (pid_t) strtol (entry, NULL, 10);
      pid_t ppid;
      char comm[16];

      if (pid <= 0 || !proc_stat (pid, &ppid, comm))
        continue;
      g_hash_table_insert (parent, GINT_TO_POINTER (pid), GINT_TO_POINTER (ppid));
      g_hash_table_insert (names, GINT_TO_POINTER (pid), g_strdup (comm));
    }
  {
    GHashTableIter iter;
    gpointer key, value;

    g_hash_table_iter_init (&iter, names);
    while (g_hash_table_iter_next (&iter, &key, &value))
      {
        pid_t pid = GPOINTER_TO_INT (key);

        /* /proc truncates command names to 15 bytes. */
        if (!g_str_has_prefix (value, "WebKitWebProces"))
          continue;
        for (pid_t p = pid; p > 1; p = GPOINTER_TO_INT (g_hash_table_lookup (parent, GINT_TO_POINTER (p))))
          if (p == self)
            {
              g_array_append_val (found, pid);
              break;
            }
      }
  }
  return found;
}

G_GNUC_UNUSED static guint
count_web_processes (void)
{
  g_autoptr(GArray) pids = web_processes ();

  return pids->len;
}
