/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-headless"

#include "config.h"

#include "sight-headless.h"

#include <errno.h>
#include <fcntl.h>
#include <gio/gio.h>
#include <glib-unix.h>
#include <glib/gstdio.h>
#include <gtk/gtk.h>
#include <stdio.h>
#include <string.h>
#include <signal.h>
#include <stdlib.h>
#include <linux/close_range.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sight-error.h"

/* How long a helper gets to report its address, and to end when asked
 * (at exit: within the second an MCP client gives the server after its
 * input ends). */
#define HELPER_START_SECONDS 10
#define HELPER_STOP_MS       500

/* A program the command starts for itself and ends when it ends. */
typedef struct {
  const char *name;
  GPid        pid;
} Helper;

static Helper xvfb = { "Xvfb", 0 };
static Helper bus = { "dbus-daemon", 0 };
/* GLib's shared connection to the private bus, held from its start: see
 * start_private_bus. */
static GDBusConnection *bus_connection;
static gboolean stop_registered;

static gboolean
reaped (Helper *helper)
{
  if (helper->pid > 0 && waitpid (helper->pid, NULL, WNOHANG) != 0)
    helper->pid = 0;
  return helper->pid <= 0;
}

/* Asks @helpers to end (SIGTERM, so that Xvfb removes its lock and socket),
 * waits for them together up to HELPER_STOP_MS, then kills what is left. */
static void
stop_helpers_now (Helper **helpers,
                  guint    n_helpers)
{
  gint64 deadline = g_get_monotonic_time () + HELPER_STOP_MS * 1000;
  gboolean all_reaped;

  for (guint i = 0; i < n_helpers; i++)
    if (helpers[i]->pid > 0)
      kill (helpers[i]->pid, SIGTERM);
  do
    {
      all_reaped = TRUE;
      for (guint i = 0; i < n_helpers; i++)
        all_reaped &= reaped (helpers[i]);
      if (!all_reaped)
        g_usleep (5000);
    }
  while (!all_reaped && g_get_monotonic_time () < deadline);
  for (guint i = 0; i < n_helpers; i++)
    if (helpers[i]->pid > 0)
      {
        kill (helpers[i]->pid, SIGKILL);
        waitpid (helpers[i]->pid, NULL, 0);
        helpers[i]->pid = 0;
      }
}

static void
stop_helper (Helper *helper)
{
  stop_helpers_now (&helper, 1);
}

/* At exit, whoever called it: a helper is gone when the command is. */
static void
stop_helpers (void)
{
  Helper *helpers[] = { &xvfb, &bus };

  stop_helpers_now (helpers, G_N_ELEMENTS (helpers));
}

/* Starts @argv with its standard streams on /dev/null and @report_fd open
 * for it to write its address to. The helper gets SIGTERM when the command
 * ends however it ends (SIGKILL included); a command that died between the
 * fork and the prctl is caught by comparing the parent. */
static gboolean
spawn_helper (Helper             *helper,
              const char * const *argv,
              int                 report_fd,
              GError            **error)
{
  pid_t parent = getpid ();
  GPid pid = fork ();

  if (pid < 0)
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
                   "Could not start %s: %s", helper->name, g_strerror (errno));
      return FALSE;
    }
  if (pid == 0)
    {
      int devnull;

      if (prctl (PR_SET_PDEATHSIG, SIGTERM) != 0 || getppid () != parent)
        _exit (127);
      /* The helper keeps none of the command's descriptors but its report
       * pipe: holding a copy of the command's stdout (MCP's protocol pipe,
       * a pipe to `head`) would keep the reader from seeing its end. */
      syscall (SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC);
      devnull = open ("/dev/null", O_RDWR);
      fcntl (report_fd, F_SETFD, 0);
      if (devnull >= 0)
        {
          dup2 (devnull, STDIN_FILENO);
          dup2 (devnull, STDOUT_FILENO);
          dup2 (devnull, STDERR_FILENO);
          if (devnull > STDERR_FILENO)
            close (devnull);
        }
      execv (argv[0], (char **) argv);
      _exit (127);
    }
  helper->pid = pid;
  if (!stop_registered)
    {
      atexit (stop_helpers);
      stop_registered = TRUE;
    }
  return TRUE;
}

/* The first line @fd gives within the start deadline, without its newline;
 * NULL when the helper wrote none. */
static char *
read_report (int fd)
{
  char buf[512] = { 0 };
  gsize got = 0;
  gint64 deadline = g_get_monotonic_time () + HELPER_START_SECONDS * G_USEC_PER_SEC;
  char *newline;

  while (got < sizeof buf - 1 && g_get_monotonic_time () < deadline)
    {
      GPollFD pfd = { fd, G_IO_IN | G_IO_HUP, 0 };
      int remaining_ms = (deadline - g_get_monotonic_time ()) / 1000;
      ssize_t n;

      if (g_poll (&pfd, 1, MAX (remaining_ms, 1)) <= 0)
        continue;
      n = read (fd, buf + got, sizeof buf - 1 - got);

      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        break;
      got += n;
      if (memchr (buf, '\n', got) != NULL)
        break;
    }
  newline = memchr (buf, '\n', got);
  if (newline == NULL)
    return NULL;
  return g_strndup (buf, newline - buf);
}

/* Starts @argv, which writes one line to the descriptor named by its
 * "%d" argument; returns the descriptor to read that line from (with
 * finish_helper ()), or -1. */
static int
launch_helper (Helper      *helper,
               const char  *program,
               const char **argv,
               GError     **error)
{
  g_autofree char *fd_arg = NULL;
  g_autofree char *path = g_find_program_in_path (program);
  int fds[2];

  if (path == NULL)
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
                   "%s is not installed", program);
      return -1;
    }
  if (!g_unix_open_pipe (fds, FD_CLOEXEC, error))
    return -1;
  fd_arg = g_strdup_printf ("%d", fds[1]);
  argv[0] = path;
  for (guint i = 1; argv[i] != NULL; i++)
    if (g_str_equal (argv[i], "%d"))
      argv[i] = fd_arg;
  if (!spawn_helper (helper, (const char * const *) argv, fds[1], error))
    {
      close (fds[0]);
      close (fds[1]);
      return -1;
    }
  close (fds[1]);
  return fds[0];
}

/* The line @helper, launched with @fd, reports, within the start deadline;
 * NULL, with the helper stopped, when it wrote none. */
static char *
finish_helper (Helper      *helper,
               const char  *program,
               int          fd,
               GError     **error)
{
  char *report = read_report (fd);

  close (fd);
  if (report == NULL || *report == '\0')
    {
      g_free (report);
      stop_helper (helper);
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
                   "%s did not start", program);
      return NULL;
    }
  return report;
}

static char *
start_helper (Helper      *helper,
              const char  *program,
              const char **argv,
              GError     **error)
{
  int fd = launch_helper (helper, program, argv, error);

  return fd >= 0 ? finish_helper (helper, program, fd, error) : NULL;
}

gboolean
sight_headless_session_bus_exists (void)
{
  g_autofree char *socket = NULL;

  if (g_getenv ("DBUS_SESSION_BUS_ADDRESS") != NULL)
    return TRUE;
  socket = g_build_filename (g_get_user_runtime_dir (), "bus", NULL);
  return g_file_test (socket, G_FILE_TEST_EXISTS);
}

/* With no session bus to find, GLib would autolaunch one (dbus-launch, tied
 * to the display, outliving the command, and taking the command down with
 * SIGTERM when it dies with a private display first, as GDBus's shared
 * connection exits on close). A bus of the command's own instead: started
 * here, before anything touches the bus, and ended with the command. */
static gboolean
start_private_bus (GError **error)
{
  /* The session bus's configuration without its service directories: the
   * bus starts no service, so what asks for one (the accessibility bus that
   * WebKit looks up, a portal, a keyring) learns at once that none is there,
   * and nothing outlives the bus. */
  static const char config_format[] =
    "<!DOCTYPE busconfig PUBLIC \"-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN\"\n"
    " \"http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd\">\n"
    "<busconfig>\n"
    "  <type>session</type>\n"
    "  <listen>unix:tmpdir=%s</listen>\n"
    "  <auth>EXTERNAL</auth>\n"
    "  <policy context=\"default\">\n"
    "    <allow send_destination=\"*\" eavesdrop=\"true\"/>\n"
    "    <allow eavesdrop=\"true\"/>\n"
    "    <allow own=\"*\"/>\n"
    "  </policy>\n"
    "</busconfig>\n";
  g_autofree char *escaped_tmp = NULL;
  g_autofree char *config = NULL;
  g_autofree char *config_path = NULL;
  g_autofree char *config_arg = NULL;
  g_autofree char *address = NULL;
  int config_fd;

  if (sight_headless_session_bus_exists ())
    return TRUE;
  escaped_tmp = g_markup_escape_text (g_get_tmp_dir (), -1);
  config = g_strdup_printf (config_format, escaped_tmp);
  config_fd = g_file_open_tmp ("sightline-bus-XXXXXX.conf", &config_path, error);
  if (config_fd < 0)
    return FALSE;
  close (config_fd);
  if (!g_file_set_contents (config_path, config, -1, error))
    {
      g_unlink (config_path);
      return FALSE;
    }
  config_arg = g_strconcat ("--config-file=", config_path, NULL);
  {
    const char *argv[] = { NULL, config_arg, "--nofork", "--nopidfile", "--print-address", "%d",
                           NULL };

    address = start_helper (&bus, "dbus-daemon", argv, error);
  }
  /* Read once, at its start. */
  g_unlink (config_path);
  if (address == NULL)
    {
      g_prefix_error (error, "No session bus is set and none could be started (install the "
                             "dbus-daemon package): ");
      return FALSE;
    }
  g_setenv ("DBUS_SESSION_BUS_ADDRESS", address, TRUE);
  /* The bus ends at exit while threads (dconf's, WebKit's) may still hold
   * the shared connection: its closing must not end the command. */
  bus_connection = g_bus_get_sync (G_BUS_TYPE_SESSION, NULL, error);
  if (bus_connection == NULL)
    {
      stop_helper (&bus);
      g_unsetenv ("DBUS_SESSION_BUS_ADDRESS");
      return FALSE;
    }
  g_dbus_connection_set_exit_on_close (bus_connection, FALSE);
  return TRUE;
}

/* Launches the private display where there is none (*@fd is then the
 * descriptor its report comes on, read by finish_private_display (), so the
 * display starts while the bus does; -1 where a display is there). */
static gboolean
launch_private_display (int     *fd,
                        GError **error)
{
  /* No GLX: a headless command never draws on this display (pages paint
   * in software, snapshots come from WebKit), and GLX loads Mesa's drivers
   * into Xvfb: 69 MB of PSS against 16 MB without. */
  const char *argv[] = { NULL, "-displayfd", "%d", "-screen", "0", "1920x1080x24",
                         "-nolisten", "tcp", "-noreset", "-extension", "GLX", NULL };

  *fd = -1;
  if (g_getenv ("DISPLAY") != NULL || g_getenv ("WAYLAND_DISPLAY") != NULL)
    return TRUE;
  /* Xvfb writes the display number it picked to -displayfd, which avoids
   * racing other servers for a free number. */
  *fd = launch_helper (&xvfb, "Xvfb", argv, error);
  return *fd >= 0;
}

static gboolean
finish_private_display (int      fd,
                        GError **error)
{
  g_autofree char *number = NULL;
  g_autofree char *display = NULL;

  if (fd < 0)
    return TRUE;
  number = finish_helper (&xvfb, "Xvfb", fd, error);
  if (number == NULL)
    return FALSE;
  display = g_strdup_printf (":%d", atoi (number));
  g_setenv ("DISPLAY", display, TRUE);
  g_setenv ("GDK_BACKEND", "x11", TRUE);
  /* Without GLX, GTK draws what it draws with cairo. */
  g_setenv ("GSK_RENDERER", "cairo", FALSE);
  return TRUE;
}

gboolean
sight_headless_ensure_display (GError **error)
{
  int display;

  /* Nothing a headless command shows is for an assistive technology (its
   * observations come from the page's own tree): no accessibility bus, and
   * its launcher and second daemon, for GTK or for the web processes (set
   * and empty, WebKit's address keeps them from looking one up). */
  g_setenv ("GTK_A11Y", "none", FALSE);
  g_setenv ("NO_AT_BRIDGE", "1", FALSE);
  g_setenv ("WEBKIT_A11Y_BUS_ADDRESS", "", FALSE);
  if (!launch_private_display (&display, error))
    goto failed;
  sight_headless_ensure_session_bus ();
  if (!finish_private_display (display, error))
    goto failed;
  return TRUE;

failed:
  g_prefix_error (error, "No display is set and none could be started (install the xvfb "
                         "package): ");
  return FALSE;
}

void
sight_headless_ensure_session_bus (void)
{
  g_autoptr(GError) error = NULL;

  /* Without a bus the program still runs: what would use one (settings'
   * change notification, a keyring) goes without. */
  if (!start_private_bus (&error))
    g_warning ("%s", error->message);
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
  /* Close-on-exec: no child may hold the command's output open. */
  fd = fcntl (STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
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
