/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-pdf"

#include "config.h"

#include "sight-pdf.h"

#include <glib/gstdio.h>
#include <string.h>

#include "sight-error.h"
#include "sight-scrape.h"
#include "sight-tool-args.h"
#include "sight-web-page.h"

static const char * const pdf_args[] = {
  "url", "paper", "landscape", "printBackground", "waitUntil", "waitForText", "timeoutMs", NULL
};
static const char * const papers[] = { "A4", "Letter", "Legal", NULL };
static const char * const wait_untils[] = { "domcontentloaded", "load", "networkidle", NULL };

typedef struct {
  SightWebPage        *page;
  WebKitPrintOperation *print;
  char                *paper;
  gboolean             landscape;
  char                *wait_for_text;
  gint64               deadline;
  char                *dir;
  char                *path;
  guint                timeout_id;
  gulong               finished_id;
  gulong               failed_id;
  GError              *print_error;
} PdfState;

static void
pdf_state_free (PdfState *state)
{
  g_clear_handle_id (&state->timeout_id, g_source_remove);
  if (state->print != NULL)
    {
      g_clear_signal_handler (&state->finished_id, state->print);
      g_clear_signal_handler (&state->failed_id, state->print);
    }
  g_clear_object (&state->print);
  g_clear_object (&state->page);
  g_free (state->paper);
  g_free (state->wait_for_text);
  if (state->path != NULL)
    g_unlink (state->path);
  if (state->dir != NULL)
    g_rmdir (state->dir);
  g_free (state->path);
  g_free (state->dir);
  g_clear_error (&state->print_error);
  g_free (state);
}

static void
print_failed_cb (WebKitPrintOperation *print,
                 GError               *error,
                 GTask                *task)
{
  PdfState *state = g_task_get_task_data (task);

  if (state->print_error == NULL)
    state->print_error = g_error_copy (error);
}

static void
print_finished_cb (WebKitPrintOperation *print,
                   GTask                *task)
{
  PdfState *state = g_task_get_task_data (task);
  g_autoptr(GError) error = NULL;
  char *contents = NULL;
  gsize length = 0;

  g_clear_handle_id (&state->timeout_id, g_source_remove);
  g_clear_signal_handler (&state->finished_id, state->print);
  g_clear_signal_handler (&state->failed_id, state->print);

  if (state->print_error != NULL)
    g_task_return_new_error (task, SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
                             "Printing to PDF failed: %s", state->print_error->message);
  else if (!g_file_get_contents (state->path, &contents, &length, &error) || length < 5 ||
           memcmp (contents, "%PDF-", 5) != 0)
    {
      g_free (contents);
      g_task_return_new_error (task, SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
                               "Printing produced no PDF");
    }
  else
    g_task_return_pointer (task, g_bytes_new_take (contents, length),
                           (GDestroyNotify) g_bytes_unref);
  g_object_unref (task);
}

static gboolean
print_timeout_cb (gpointer user_data)
{
  GTask *task = user_data;
  PdfState *state = g_task_get_task_data (task);

  state->timeout_id = 0;
  g_clear_signal_handler (&state->finished_id, state->print);
  g_clear_signal_handler (&state->failed_id, state->print);
  g_task_return_new_error (task, SIGHT_ERROR, SIGHT_ERROR_STEP_TIMEOUT,
                           "Printing to PDF did not finish in time");
  g_object_unref (task);
  return G_SOURCE_REMOVE;
}

static void
pdf_print (GTask *task)
{
  PdfState *state = g_task_get_task_data (task);
  g_autoptr(GtkPrintSettings) settings = gtk_print_settings_new ();
  g_autoptr(GtkPageSetup) setup = gtk_page_setup_new ();
  g_autoptr(GtkPaperSize) paper = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *uri = NULL;
  const char *paper_name = GTK_PAPER_NAME_A4;

  state->dir = g_dir_make_tmp ("sightline-pdf-XXXXXX", &error);
  if (state->dir == NULL)
    {
      g_task_return_new_error (task, SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
                               "Cannot create a temporary folder: %s", error->message);
      g_object_unref (task);
      return;
    }
  state->path = g_build_filename (state->dir, "page.pdf", NULL);
  uri = g_filename_to_uri (state->path, NULL, NULL);

  if (g_str_equal (state->paper, "Letter"))
    paper_name = GTK_PAPER_NAME_LETTER;
  else if (g_str_equal (state->paper, "Legal"))
    paper_name = GTK_PAPER_NAME_LEGAL;
  paper = gtk_paper_size_new (paper_name);
  gtk_page_setup_set_paper_size_and_default_margins (setup, paper);
  gtk_page_setup_set_orientation (setup, state->landscape ? GTK_PAGE_ORIENTATION_LANDSCAPE
                                                          : GTK_PAGE_ORIENTATION_PORTRAIT);

  gtk_print_settings_set_printer (settings, "Print to File");
  gtk_print_settings_set (settings, GTK_PRINT_SETTINGS_OUTPUT_URI, uri);
  gtk_print_settings_set (settings, GTK_PRINT_SETTINGS_OUTPUT_FILE_FORMAT, "pdf");
  gtk_print_settings_set_paper_size (settings, paper);
  gtk_print_settings_set_orientation (settings, gtk_page_setup_get_orientation (setup));

  state->print = webkit_print_operation_new (sight_web_page_get_web_view (state->page));
  webkit_print_operation_set_print_settings (state->print, settings);
  webkit_print_operation_set_page_setup (state->print, setup);
  state->finished_id = g_signal_connect (state->print, "finished",
                                         G_CALLBACK (print_finished_cb), task);
  state->failed_id = g_signal_connect (state->print, "failed",
                                       G_CALLBACK (print_failed_cb), task);
  state->timeout_id = g_timeout_add (sight_deadline_remaining_ms (state->deadline), print_timeout_cb, task);
  webkit_print_operation_print (state->print);
}

static void
pdf_wait_for_text_cb (GObject      *source,
                      GAsyncResult *result,
                      gpointer      user_data)
{
  GTask *task = user_data;
  g_autoptr(GError) error = NULL;

  if (!sight_page_wait_for_text_finish (SIGHT_WEB_PAGE (source), result, &error))
    {
      g_task_return_error (task, g_steal_pointer (&error));
      g_object_unref (task);
      return;
    }
  pdf_print (task);
}

static void
pdf_load_cb (GObject      *source,
             GAsyncResult *result,
             gpointer      user_data)
{
  GTask *task = user_data;
  PdfState *state = g_task_get_task_data (task);
  g_autoptr(GError) error = NULL;

  if (!sight_web_page_load_finish (SIGHT_WEB_PAGE (source), result, &error))
    {
      g_task_return_error (task, g_steal_pointer (&error));
      g_object_unref (task);
      return;
    }
  if (state->wait_for_text != NULL)
    {
      sight_page_wait_for_text_async (state->page, state->wait_for_text, state->deadline,
                                      g_task_get_cancellable (task), pdf_wait_for_text_cb, task);
      return;
    }
  pdf_print (task);
}

void
sight_pdf_async (JsonObject          *args,
                 GCancellable        *cancellable,
                 GAsyncReadyCallback  callback,
                 gpointer             user_data)
{
  g_autoptr(GTask) task = g_task_new (NULL, cancellable, callback, user_data);
  g_autoptr(GError) error = NULL;
  PdfState *state = g_new0 (PdfState, 1);
  const char *url, *paper, *wait_until_name, *wait_for_text;
  gboolean print_background;
  gint64 timeout_ms;
  SightWaitUntil wait_until;

  g_task_set_source_tag (task, sight_pdf_async);
  g_task_set_task_data (task, state, (GDestroyNotify) pdf_state_free);

  if (!sight_tool_args_check_known (args, pdf_args, &error) ||
      !sight_tool_args_get_url (args, "url", TRUE, &url, &error) ||
      !sight_tool_args_get_choice (args, "paper", papers, "A4", &paper, &error) ||
      !sight_tool_args_get_bool (args, "landscape", FALSE, &state->landscape, &error) ||
      !sight_tool_args_get_bool (args, "printBackground", TRUE, &print_background, &error) ||
      !sight_tool_args_get_choice (args, "waitUntil", wait_untils, "load", &wait_until_name,
                                   &error) ||
      !sight_tool_args_get_string (args, "waitForText", 500, &wait_for_text, &error) ||
      !sight_tool_args_get_int (args, "timeoutMs", 30000, 1000, 120000, &timeout_ms, &error))
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  state->paper = g_strdup (paper);
  state->wait_for_text = g_strdup (wait_for_text);
  state->deadline = g_get_monotonic_time () + timeout_ms * 1000;
  sight_wait_until_from_string (wait_until_name, &wait_until);

  state->page = sight_web_page_new ();
  webkit_settings_set_print_backgrounds (
    webkit_web_view_get_settings (sight_web_page_get_web_view (state->page)), print_background);
  sight_web_page_load_async (state->page, url, wait_until, sight_deadline_remaining_ms (state->deadline),
                             cancellable, pdf_load_cb, g_steal_pointer (&task));
}

GBytes *
sight_pdf_finish (GAsyncResult  *result,
                  GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, NULL), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}
