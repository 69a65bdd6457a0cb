/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-web-page"

#include "config.h"

#include "sight-web-page.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sight-error.h"
#include "sight-json.h"
#include "sight-web-page-private.h"

/* ----------------------------------------------------------------------- */
/* The process-wide web context                                            */

guint
sight_web_page_get_memory_limit (void)
{
  const char *env = g_getenv ("SIGHTLINE_PAGE_MEMORY_LIMIT_MB");
  guint64 mb;

  if (env != NULL && g_ascii_string_to_unsigned (env, 10, SIGHT_PAGE_MEMORY_LIMIT_MIN,
                                                 SIGHT_PAGE_MEMORY_LIMIT_MAX, &mb, NULL))
    return (guint) mb;
  return SIGHT_PAGE_MEMORY_LIMIT_DEFAULT;
}

WebKitWebContext *
_sight_web_page_get_web_context (void)
{
  static WebKitWebContext *context;

  /* GTK and WebKit live on the main thread only. */
  if (context == NULL)
    {
      g_autoptr(WebKitMemoryPressureSettings) memory = webkit_memory_pressure_settings_new ();

      /* WebKit's default never kills a web process, so a page that allocates
       * without bound takes the machine down with it. Past the limit it is
       * ended (EXCEEDED_MEMORY_LIMIT), checked every second. */
      webkit_memory_pressure_settings_set_memory_limit (memory, sight_web_page_get_memory_limit ());
      webkit_memory_pressure_settings_set_kill_threshold (memory, 1.0);
      webkit_memory_pressure_settings_set_poll_interval (memory, 1.0);
      context = g_object_new (WEBKIT_TYPE_WEB_CONTEXT,
                              "memory-pressure-settings", memory,
                              NULL);
      webkit_web_context_set_cache_model (context, WEBKIT_CACHE_MODEL_DOCUMENT_VIEWER);
    }
  return context;
}

/* ----------------------------------------------------------------------- */
/* The sandbox probe                                                       */

/* WebKit runs each web process inside bubblewrap. Where bubblewrap cannot
 * set up its namespaces (a container without user namespaces, a seccomp
 * profile that forbids them), WebKit aborts the whole program with SIGTRAP
 * when it first launches one ("Failed to fully launch dbus-proxy"), before
 * any error can be reported. So the sandbox is tried once, the way WebKit
 * uses it, before the first load: the load waits for the probe's answer on
 * the main context, under the probe's own deadline. */
#define SANDBOX_PROBE_TIMEOUT_MS 10000

static struct {
  gboolean      probed;
  char         *failure;      /* NULL when the sandbox works, else why not */
  char         *bwrap;        /* the bubblewrap tried */
  GPtrArray    *waiters;      /* GTask, while the probe runs */
  GCancellable *cancellable;  /* cancelled at the probe's deadline */
  guint         timeout;
} sandbox;

/* The person turned the sandbox off (WebKit then runs no bubblewrap), or
 * Flatpak provides it (through flatpak-spawn, not bubblewrap). */
static gboolean
sandbox_needs_probe (void)
{
  return g_getenv ("WEBKIT_DISABLE_SANDBOX_THIS_IS_DANGEROUS") == NULL &&
         !g_file_test ("/.flatpak-info", G_FILE_TEST_EXISTS);
}

static void
probe_settle (const char *why)
{
  g_autoptr(GPtrArray) waiters = g_steal_pointer (&sandbox.waiters);

  g_clear_handle_id (&sandbox.timeout, g_source_remove);
  g_clear_object (&sandbox.cancellable);
  sandbox.probed = TRUE;
  if (why != NULL)
    {
      sandbox.failure =
        g_strdup_printf ("The browser engine's sandbox cannot start here: bubblewrap (%s) "
                         "failed: %s. Sightline opens pages only inside WebKit's sandbox. In a "
                         "container, allow it to create user namespaces (for example a "
                         "seccomp profile that permits them); only where you trust every page "
                         "you open, set WEBKIT_DISABLE_SANDBOX_THIS_IS_DANGEROUS=1 yourself",
                         sandbox.bwrap, why);
      g_debug ("%s", sandbox.failure);
    }
  for (guint i = 0; waiters != NULL && i < waiters->len; i++)
    {
      g_autoptr(GTask) task = g_ptr_array_index (waiters, i);

      g_task_return_boolean (task, TRUE);
    }
}

static gboolean
probe_timeout_cb (gpointer data)
{
  sandbox.timeout = 0;
  g_cancellable_cancel (sandbox.cancellable);
  return G_SOURCE_REMOVE;
}

static void
probe_done_cb (GObject      *source,
               GAsyncResult *result,
               gpointer      data)
{
  GSubprocess *probe = G_SUBPROCESS (source);
  g_autoptr(GError) error = NULL;
  g_autofree char *why = NULL;
  GInputStream *err;
  char buffer[512] = "";
  gssize n;

  if (!g_subprocess_wait_finish (probe, result, &error))
    {
      g_subprocess_force_exit (probe);
      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        why = g_strdup_printf ("it did not start within %d s", SANDBOX_PROBE_TIMEOUT_MS / 1000);
      else
        why = g_strdup (error->message);
    }
  else if (!g_subprocess_get_successful (probe))
    {
      /* It has exited: what it said is all in the pipe. */
      err = g_subprocess_get_stderr_pipe (probe);
      n = g_input_stream_read (err, buffer, sizeof buffer - 1, NULL, NULL);
      buffer[MAX (n, 0)] = '\0';
      g_strstrip (buffer);
      buffer[strcspn (buffer, "\n")] = '\0';
      why = buffer[0] != '\0' ? sight_text_sanitize (buffer, 300) : g_strdup ("it failed");
    }
  probe_settle (why);
}

static void
probe_start (void)
{
  g_autoptr(GSubprocess) probe = NULL;
  g_autoptr(GError) error = NULL;

  sandbox.bwrap = g_find_program_in_path ("bwrap");
  if (sandbox.bwrap == NULL)
    sandbox.bwrap = g_strdup ("/usr/bin/bwrap");
  probe = g_subprocess_new (G_SUBPROCESS_FLAGS_STDOUT_SILENCE | G_SUBPROCESS_FLAGS_STDERR_PIPE,
                            &error, sandbox.bwrap, "--ro-bind", "/", "/", "--unshare-user-try",
                            "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-net",
                            "--die-with-parent", "--", "true", NULL);
  if (probe == NULL)
    {
      probe_settle (error->message);
      return;
    }
  sandbox.cancellable = g_cancellable_new ();
  sandbox.timeout = g_timeout_add (SANDBOX_PROBE_TIMEOUT_MS, probe_timeout_cb, NULL);
  g_subprocess_wait_async (probe, sandbox.cancellable, probe_done_cb, NULL);
}

/* Whether the probe has answered (or none is needed). */
gboolean
_sight_web_page_sandbox_probed (void)
{
  if (!sandbox.probed && sandbox.waiters == NULL && !sandbox_needs_probe ())
    sandbox.probed = TRUE;
  return sandbox.probed;
}

/* Runs the probe once per process; @callback is called on the main context
 * when it has answered (finish with g_task_propagate_boolean ()). */
void
_sight_web_page_probe_sandbox_async (GAsyncReadyCallback callback,
                                     gpointer            user_data)
{
  g_autoptr(GTask) task = g_task_new (NULL, NULL, callback, user_data);

  g_task_set_source_tag (task, _sight_web_page_probe_sandbox_async);
  if (_sight_web_page_sandbox_probed ())
    {
      g_task_return_boolean (task, TRUE);
      return;
    }
  if (sandbox.waiters == NULL)
    {
      sandbox.waiters = g_ptr_array_new ();
      g_ptr_array_add (sandbox.waiters, g_steal_pointer (&task));
      probe_start ();
      return;
    }
  g_ptr_array_add (sandbox.waiters, g_steal_pointer (&task));
}

/* FALSE, with ENVIRONMENT_UNAVAILABLE and a hint, where the web process
 * sandbox cannot start; only once the probe has answered. */
gboolean
_sight_web_page_sandbox_usable (GError **error)
{
  g_return_val_if_fail (sandbox.probed, FALSE);

  if (sandbox.failure == NULL)
    return TRUE;
  g_set_error_literal (error, SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE, sandbox.failure);
  return FALSE;
}

/* ----------------------------------------------------------------------- */
/* Hangs: a deadline passed, or the web process stopped answering          */

static void
ping_answered_cb (GObject      *source,
                  GAsyncResult *result,
                  gpointer      user_data)
{
  Ping *ping = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(JSCValue) value =
    webkit_web_view_call_async_javascript_function_finish (WEBKIT_WEB_VIEW (source), result,
                                                           &error);

  /* An error other than a script's own means the process went away: the
   * termination fails the op, not this answer. */
  gboolean answered = value != NULL;

  if (!answered)
    g_debug ("ping failed: %s", error->message);
  if (answered && ping->op != NULL && !ping->op->done && ping->op->timeout_error != NULL)
    {
      SightPageOp *op = ping->op;
      SightWebPage *self = op->page;
      gboolean is_load = op->wait_until_set;

      /* Frees a load op, which clears ping->op. */
      _sight_page_op_complete (op, g_steal_pointer (&op->timeout_error), NULL, NULL);
      /* A load that ran out of time stops, so it can't change the page later. */
      if (self != NULL && is_load && self->load_op == NULL)
        webkit_web_view_stop_loading (self->view);
    }
  _sight_ping_unref (ping);
}

static gboolean
ping_timeout_cb (gpointer user_data)
{
  SightPageOp *op = user_data;
  SightWebPage *self = op->page;
  g_autofree char *reason = NULL;

  op->ping_source = 0;
  if (self == NULL || op->done)
    return G_SOURCE_REMOVE;
  if (op->timeout_ms > 0)
    reason = g_strdup_printf ("The page stopped responding (no answer for %u ms after a %u ms "
                              "deadline); its web process was terminated",
                              self->hang_timeout_ms, op->timeout_ms);
  else
    reason = g_strdup_printf ("The page stopped responding (no answer for %u ms); its web "
                              "process was terminated", self->hang_timeout_ms);
  g_debug ("%s", reason);
  /* Fail the op first: terminating finishes the engine call it wraps, whose
   * callback may free it before terminate returns. */
  _sight_page_op_complete (op, g_error_new_literal (SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
                                             reason),
                           NULL, NULL);
  sight_web_page_terminate_web_process (self, reason);
  return G_SOURCE_REMOVE;
}

/* @op ran past its deadline. A page whose main thread is stuck (a script in
 * an endless loop) also makes our scripts wait forever, and WebKit only
 * notices unresponsiveness when input is sent, so ask the web process
 * directly: an answer means a plain timeout (@error); none within the hang
 * timeout means a hang, and the web process is terminated. */
void
_sight_page_op_timed_out (SightPageOp *op,
                          GError      *error)
{
  SightWebPage *self = op->page;
  Ping *ping;

  g_clear_error (&op->timeout_error);
  op->timeout_error = error;
  ping = g_new0 (Ping, 1);
  ping->ref_count = 2;
  ping->op = op;
  op->ping = ping;
  op->ping_source = g_timeout_add (self->hang_timeout_ms, ping_timeout_cb, op);
  webkit_web_view_call_async_javascript_function (self->view, "return 1;", -1, NULL, NULL, NULL,
                                                  NULL, ping_answered_cb, ping);
}

static gboolean
hang_timeout_cb (gpointer user_data)
{
  SightWebPage *self = user_data;
  g_autofree char *reason = NULL;

  self->hang_source = 0;
  if (webkit_web_view_get_is_web_process_responsive (self->view))
    return G_SOURCE_REMOVE;
  reason = g_strdup_printf ("The page stopped responding for %u ms; its web process was "
                            "terminated", self->hang_timeout_ms);
  g_debug ("%s", reason);
  sight_web_page_terminate_web_process (self, reason);
  return G_SOURCE_REMOVE;
}

void
_sight_web_page_responsive_changed_cb (WebKitWebView *view,
                                       GParamSpec    *pspec,
                                       SightWebPage  *self)
{
  if (webkit_web_view_get_is_web_process_responsive (view))
    g_clear_handle_id (&self->hang_source, g_source_remove);
  else if (self->hang_source == 0)
    self->hang_source = g_timeout_add (self->hang_timeout_ms, hang_timeout_cb, self);
}

void
sight_web_page_set_hang_timeout (SightWebPage *self,
                                 guint         timeout_ms)
{
  g_return_if_fail (SIGHT_IS_WEB_PAGE (self));
  self->hang_timeout_ms = MAX (timeout_ms, 100);
}

/* ----------------------------------------------------------------------- */
/* Crashes and terminations                                                */

static void
web_process_lost (SightWebPage *self,
                  const char   *reason)
{
  g_clear_handle_id (&self->hang_source, g_source_remove);
  self->generation++;
  g_free (self->lost_reason);
  self->lost_reason = g_strdup (reason);
  g_free (self->last_loss);
  self->last_loss = g_strdup (reason);
  g_hash_table_remove_all (self->in_flight);
  _sight_web_page_fail_pending_ops (self, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE, reason);
  g_signal_emit (self, _sight_web_page_signals[WEB_PROCESS_LOST], 0, reason);
}

void
_sight_web_page_web_process_terminated_cb (WebKitWebView                     *view,
                                           WebKitWebProcessTerminationReason  reason,
                                           SightWebPage                      *self)
{
  g_autofree char *requested = g_steal_pointer (&self->terminate_reason);
  const char *message;

  switch (reason)
    {
    case WEBKIT_WEB_PROCESS_CRASHED:
      message = "The page’s web process crashed";
      break;
    case WEBKIT_WEB_PROCESS_EXCEEDED_MEMORY_LIMIT:
      g_free (requested);
      requested = g_strdup_printf ("EXCEEDED_MEMORY_LIMIT: the page’s web process went over "
                                   "its memory limit (%u MB) and was stopped",
                                   sight_web_page_get_memory_limit ());
      message = requested;
      _sight_web_page_add_log_entry (self, SIGHT_LOG_PAGE_ERROR, "error", message,
                                     webkit_web_view_get_uri (view), 0);
      break;
    case WEBKIT_WEB_PROCESS_TERMINATED_BY_API:
    default:
      message = requested != NULL ? requested : "The page’s web process was terminated";
      break;
    }
  g_debug ("web process terminated: %s", message);
  web_process_lost (self, message);
}

void
sight_web_page_terminate_web_process (SightWebPage *self,
                                      const char   *reason)
{
  g_return_if_fail (SIGHT_IS_WEB_PAGE (self));

  g_free (self->terminate_reason);
  self->terminate_reason = g_strdup (reason);
  webkit_web_view_terminate_web_process (self->view);
}

guint
sight_web_page_get_process_mark (SightWebPage *self)
{
  g_return_val_if_fail (SIGHT_IS_WEB_PAGE (self), 0);
  return self->generation;
}

/* FALSE, with why, when the web process went away since @mark or the page
 * is still blank after it did. */
static gboolean
process_kept (SightWebPage *self,
              guint         mark,
              GError      **error)
{
  if (self->lost_reason != NULL)
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
                   "%s; the page is blank until it loads again", self->lost_reason);
      return FALSE;
    }
  if (self->generation != mark)
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
                   "%s during the step; the page was loaded again since", self->last_loss);
      return FALSE;
    }
  return TRUE;
}

static void
check_answered_cb (GObject      *source,
                   GAsyncResult *result,
                   gpointer      user_data)
{
  Ping *ping = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(JSCValue) value =
    webkit_web_view_call_async_javascript_function_finish (WEBKIT_WEB_VIEW (source), result,
                                                           &error);

  /* Any answer, an error too (a document being replaced in a process swap),
   * means the process is there; a crash fails the op through its
   * termination, and silence through the hang timeout. */
  if (value == NULL)
    g_debug ("check: %s", error->message);
  if (ping->op != NULL && !ping->op->done)
    _sight_page_op_complete (ping->op, NULL, GINT_TO_POINTER (TRUE), NULL);
  _sight_ping_unref (ping);
}

void
sight_web_page_check_process_async (SightWebPage        *self,
                                    guint                mark,
                                    GCancellable        *cancellable,
                                    GAsyncReadyCallback  callback,
                                    gpointer             user_data)
{
  sight_web_page_check_process_since_async (self, mark, G_MAXINT64, cancellable, callback,
                                            user_data);
}

void
sight_web_page_check_process_since_async (SightWebPage        *self,
                                          guint                mark,
                                          gint64               since,
                                          GCancellable        *cancellable,
                                          GAsyncReadyCallback  callback,
                                          gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;
  g_autoptr(GError) error = NULL;
  SightPageOp *op;
  Ping *ping;

  g_return_if_fail (SIGHT_IS_WEB_PAGE (self));

  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, sight_web_page_check_process_async);
  if (!process_kept (self, mark, &error))
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  /* A page that never loaded has no web process to ask; one that just
   * answered is not stuck. */
  if (self->navigation_count == 0 || self->last_answer >= since)
    {
      g_task_return_pointer (task, GINT_TO_POINTER (TRUE), NULL);
      return;
    }
  /* WebKit only notices a stuck web process when input is sent to it, so ask
   * it to answer, within the hang timeout; ping_timeout_cb ends a silent one. */
  op = _sight_page_op_new (self, task, 0, cancellable);
  ping = g_new0 (Ping, 1);
  ping->ref_count = 2;
  ping->op = op;
  op->ping = ping;
  op->ping_source = g_timeout_add (self->hang_timeout_ms, ping_timeout_cb, op);
  webkit_web_view_call_async_javascript_function (self->view, "return 1;", -1, NULL, NULL, NULL,
                                                  NULL, check_answered_cb, ping);
}

gboolean
sight_web_page_check_process_finish (SightWebPage  *self,
                                     GAsyncResult  *result,
                                     GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);
  return g_task_propagate_pointer (G_TASK (result), error) != NULL;
}

/* ----------------------------------------------------------------------- */
/* At exit: the engine's processes end with the command                    */

typedef struct {
  int     pid;
  int     ppid;
  guint64 start;  /* since boot, in clock ticks: a reused pid is another process */
  char    state;
  char    comm[17];
} ProcEntry;

/* One line of /proc/PID/stat; FALSE for a process that is gone. */
static gboolean
proc_entry_read (int        pid,
                 ProcEntry *entry)
{
  char path[64];
  g_autofree char *text = NULL;
  g_auto(GStrv) fields = NULL;
  const char *open, *close;

  g_snprintf (path, sizeof path, "/proc/%d/stat", pid);
  if (!g_file_get_contents (path, &text, NULL, NULL))
    return FALSE;
  /* "pid (comm) state ppid … starttime": comm may hold spaces and ')'. */
  open = strchr (text, '(');
  close = strrchr (text, ')');
  if (open == NULL || close == NULL || close < open)
    return FALSE;
  fields = g_strsplit (close + 2, " ", 21);
  if (g_strv_length (fields) < 21)
    return FALSE;
  entry->pid = pid;
  g_strlcpy (entry->comm, open + 1, MIN ((gsize) (close - open), sizeof entry->comm));
  entry->state = fields[0][0];
  entry->ppid = atoi (fields[1]);
  entry->start = g_ascii_strtoull (fields[19], NULL, 10);
  return TRUE;
}

static GArray *
proc_list (void)
{
  GArray *list = g_array_new (FALSE, FALSE, sizeof (ProcEntry));
  g_autoptr(GDir) dir = g_dir_open ("/proc", 0, NULL);
  const char *name;

  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      ProcEntry entry;

      if (g_ascii_isdigit (name[0]) && proc_entry_read (atoi (name), &entry))
        g_array_append_val (list, entry);
    }
  return list;
}

/* A child WebKit started: a sandbox (bubblewrap and what runs in it), its
 * D-Bus proxy, or an unsandboxed web, network or GPU process. */
static gboolean
is_engine_child (const ProcEntry *entry)
{
  return g_str_equal (entry->comm, "bwrap") || g_str_equal (entry->comm, "xdg-dbus-proxy") ||
         g_str_has_prefix (entry->comm, "WebKit");
}

/* The engine's children of this process and everything under them. */
static GArray *
engine_processes (void)
{
  g_autoptr(GArray) all = proc_list ();
  GArray *found = g_array_new (FALSE, FALSE, sizeof (ProcEntry));
  int self = getpid ();
  gboolean grew = TRUE;

  for (guint i = 0; i < all->len; i++)
    {
      ProcEntry *entry = &g_array_index (all, ProcEntry, i);

      if (entry->ppid == self && is_engine_child (entry))
        g_array_append_val (found, *entry);
    }
  /* Descendants, to a fixed point (the list is not ordered by parent). */
  while (grew)
    {
      grew = FALSE;
      for (guint i = 0; i < all->len; i++)
        {
          ProcEntry *entry = &g_array_index (all, ProcEntry, i);
          gboolean known = FALSE, parent = FALSE;

          for (guint j = 0; j < found->len && !known; j++)
            {
              known = g_array_index (found, ProcEntry, j).pid == entry->pid;
              parent |= g_array_index (found, ProcEntry, j).pid == entry->ppid;
            }
          if (!known && parent)
            {
              g_array_append_val (found, *entry);
              grew = TRUE;
            }
        }
    }
  return found;
}

/* Exited: gone, a zombie (it holds no files, mounts or memory any more), or
 * its pid taken by another process. */
static gboolean
proc_exited (const ProcEntry *entry)
{
  ProcEntry now;

  return !proc_entry_read (entry->pid, &now) || now.start != entry->start ||
         now.state == 'Z' || now.state == 'X';
}

gboolean
sight_web_page_process_wait_exit (gint64 deadline)
{
  g_autoptr(GArray) processes = engine_processes ();
  gboolean all_exited = FALSE;

  /* WebKit's processes end only when they see this one gone, a moment after
   * it exits, each sandbox still holding its mounts (a data folder on a disk
   * to unmount) meanwhile. So they are ended here: SIGTERM to every process
   * WebKit started and all they started (a sandbox's own init and the web
   * process in it outlive the outer bubblewrap that SIGTERM ends), SIGKILL at
   * the deadline. */
  for (guint i = 0; i < processes->len; i++)
    {
      ProcEntry *entry = &g_array_index (processes, ProcEntry, i);

      if (!proc_exited (entry))
        kill (entry->pid, SIGTERM);
    }
  while (!all_exited)
    {
      all_exited = TRUE;
      for (guint i = 0; i < processes->len && all_exited; i++)
        all_exited = proc_exited (&g_array_index (processes, ProcEntry, i));
      if (all_exited || g_get_monotonic_time () >= deadline)
        break;
      g_usleep (5000);
    }
  if (!all_exited)
    for (guint i = 0; i < processes->len; i++)
      {
        ProcEntry *entry = &g_array_index (processes, ProcEntry, i);

        if (!proc_exited (entry))
          {
            g_debug ("%s (%d) did not end in time: killed", entry->comm, entry->pid);
            kill (entry->pid, SIGKILL);
          }
      }
  return all_exited;
}
