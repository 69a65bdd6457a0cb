/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-headless"

#include "config.h"

#include "sight-headless.h"

#include <errno.h>
#include <fcntl.h>
#include <glib-unix.h>
#include <gtk/gtk.h>
#include <stdio.h>
#include <string.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sight-error.h"

static GPid xvfb_pid;

static void
stop_xvfb (void)
{
  if (xvfb_pid > 0)
    {
      kill (xvfb_pid, SIGTERM);
      waitpid (xvfb_pid, NULL, 0);
      xvfb_pid = 0;
    }
}

static void
stop_on_signal (int signum)
{
  if (xvfb_pid > 0)
    kill (xvfb_pid, SIGTERM);
  signal (signum, SIG_DFL);
  raise (signum);
}

gboolean
sight_headless_ensure_display (GError **error)
{
  g_autofree char *xvfb = NULL;
  int fds[2];
  char buf[32] = { 0 };
  gsize got = 0;
  gint64 deadline;
  g_autofree char *display = NULL;
  g_autofree char *fd_arg = NULL;

  if (g_getenv ("DISPLAY") != NULL || g_getenv ("WAYLAND_DISPLAY") != NULL)
    return TRUE;

  xvfb = g_find_program_in_path ("Xvfb");
  if (xvfb == NULL)
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
                   "No display is set and Xvfb is not installed (install the xvfb package)");
      return FALSE;
    }

  if (!g_unix_open_pipe (fds, FD_CLOEXEC, error))
    return FALSE;

  /* Xvfb writes the display number it picked to -displayfd, which avoids
   * racing other servers for a free number. */
  fd_arg = g_strdup_printf ("%d", fds[1]);
  {
    const char *argv[] = { xvfb, "-displayfd", fd_arg, "-screen", "0", "1920x1080x24",
                           "-nolisten", "tcp", "-noreset", NULL };
    GPid pid = fork ();

    if (pid < 0)
      {
        close (fds[0]);
        close (fds[1]);
        g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
                     "Could not start Xvfb: %s", g_strerror (errno));
        return FALSE;
      }
    if (pid == 0)
      {
        int devnull = open ("/dev/null", O_RDWR);

        fcntl (fds[1], F_SETFD, 0);
        if (devnull >= 0)
          {
            dup2 (devnull, STDIN_FILENO);
            dup2 (devnull, STDOUT_FILENO);
            dup2 (devnull, STDERR_FILENO);
          }
        execv (argv[0], (char **) argv);
        _exit (127);
      }
    xvfb_pid = pid;
  }
  close (fds[1]);

  deadline = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;
  while (got < sizeof buf - 1 && g_get_monotonic_time () < deadline)
    {
      GPollFD pfd = { fds[0], G_IO_IN | G_IO_HUP, 0 };
      int remaining_ms = (deadline - g_get_monotonic_time ()) / 1000;
      ssize_t n;

      if (g_poll (&pfd, 1, MAX (remaining_ms, 1)) <= 0)
        continue;
      n = read (fds[0], buf + got, sizeof buf - 1 - got);

      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        break;
      got += n;
      if (memchr (buf, '\n', got) != NULL)
        break;
    }
  close (fds[0]);

  if (got == 0 || memchr (buf, '\n', got) == NULL)
    {
      stop_xvfb ();
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
                   "Xvfb did not start a display");
      return FALSE;
    }

  display = g_strdup_printf (":%d", atoi (buf));
  g_setenv ("DISPLAY", display, TRUE);
  g_setenv ("GDK_BACKEND", "x11", TRUE);
  atexit (stop_xvfb);
  signal (SIGINT, stop_on_signal);
  signal (SIGTERM, stop_on_signal);
  signal (SIGHUP, stop_on_signal);
  return TRUE;
}

/* WebKit's helper processes inherit descriptor 1 and may print to it (GLib
 * debug output, warnings of their libraries), which would corrupt what a
 * command prints (--json, a report on stdout). The command's own stdout moves
 * to a private copy of the descriptor; descriptor 1, which children inherit,
 * becomes stderr. */
static void
keep_output_from_children (void)
{
  int fd;
  FILE *out;

  fflush (stdout);
  fd = dup (STDOUT_FILENO);
  if (fd < 0)
    return;
  out = fdopen (fd, "w");
  if (out == NULL || dup2 (STDERR_FILENO, STDOUT_FILENO) < 0)
    {
      if (out != NULL)
        fclose (out);
      else
        close (fd);
      return;
    }
  stdout = out;
}

gboolean
sight_headless_start (GError **error)
{
  if (!sight_headless_ensure_display (error))
    return FALSE;
  keep_output_from_children ();
  gtk_init ();
  return TRUE;
}
