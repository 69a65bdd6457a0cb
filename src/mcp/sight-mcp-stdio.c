/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-mcp-stdio"

#include "config.h"

#include "sight-mcp-stdio.h"

#include <string.h>

/* How long cancelled calls get to answer (and record their runs as
 * interrupted) after input ended: the stdio transport expects the server to
 * exit soon after its input closes, within a second. */
#define DRAIN_MS 300

struct _SightMcpStdio
{
  GObject           parent_instance;

  /* owned */
  SightMcpServer   *server;
  SightMcpSession  *session;
  GDataInputStream *input;
  GOutputStream    *output;
  GTask            *run;          /* the run in progress */
  GCancellable     *read_cancellable;
  gulong            cancelled_id;
  guint             drain_source;
  guint             handling;     /* messages not yet answered */
  gboolean          input_done;
  GError           *write_error;
};

G_DEFINE_FINAL_TYPE (SightMcpStdio, sight_mcp_stdio, G_TYPE_OBJECT)

static void
sight_mcp_stdio_dispose (GObject *object)
{
  SightMcpStdio *self = SIGHT_MCP_STDIO (object);

  g_clear_handle_id (&self->drain_source, g_source_remove);
  if (self->session != NULL)
    sight_mcp_session_close (self->session);
  G_OBJECT_CLASS (sight_mcp_stdio_parent_class)->dispose (object);
}

static void
sight_mcp_stdio_finalize (GObject *object)
{
  SightMcpStdio *self = SIGHT_MCP_STDIO (object);

  g_clear_object (&self->session);
  g_clear_object (&self->server);
  g_clear_object (&self->input);
  g_clear_object (&self->output);
  g_clear_object (&self->read_cancellable);
  g_clear_error (&self->write_error);
  G_OBJECT_CLASS (sight_mcp_stdio_parent_class)->finalize (object);
}

static void
sight_mcp_stdio_class_init (SightMcpStdioClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = sight_mcp_stdio_dispose;
  object_class->finalize = sight_mcp_stdio_finalize;
}

static void
sight_mcp_stdio_init (SightMcpStdio *self)
{
  self->read_cancellable = g_cancellable_new ();
}

SightMcpStdio *
sight_mcp_stdio_new (SightMcpServer *server,
                     GInputStream   *input,
                     GOutputStream  *output)
{
  SightMcpStdio *self;

  g_return_val_if_fail (SIGHT_IS_MCP_SERVER (server), NULL);
  g_return_val_if_fail (G_IS_INPUT_STREAM (input), NULL);
  g_return_val_if_fail (G_IS_OUTPUT_STREAM (output), NULL);

  self = g_object_new (SIGHT_TYPE_MCP_STDIO, NULL);
  self->server = g_object_ref (server);
  self->session = sight_mcp_server_create_session (server);
  self->input = g_data_input_stream_new (input);
  g_data_input_stream_set_newline_type (self->input, G_DATA_STREAM_NEWLINE_TYPE_LF);
  self->output = g_object_ref (output);
  return self;
}

SightMcpSession *
sight_mcp_stdio_get_session (SightMcpStdio *self)
{
  g_return_val_if_fail (SIGHT_IS_MCP_STDIO (self), NULL);
  return self->session;
}

/* Writes are blocking and whole, so lines never interleave and arrive in the
 * order they were produced. */
static void
write_message (SightMcpStdio *self,
               JsonNode      *message)
{
  g_autoptr(JsonGenerator) generator = json_generator_new ();
  g_autoptr(GString) line = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *text = NULL;
  gsize length = 0;

  if (self->write_error != NULL)
    return;
  json_generator_set_root (generator, message);
  text = json_generator_to_data (generator, &length);
  line = g_string_new_len (text, length);
  g_string_append_c (line, '\n');
  if (!g_output_stream_write_all (self->output, line->str, line->len, NULL, NULL, &error) ||
      !g_output_stream_flush (self->output, NULL, &error))
    {
      g_debug ("cannot write to the client: %s", error->message);
      self->write_error = g_steal_pointer (&error);
      /* Nobody reads any more: stop as at end of input. */
      g_cancellable_cancel (self->read_cancellable);
    }
}

static void
maybe_finish (SightMcpStdio *self)
{
  g_autoptr(GTask) run = NULL;

  if (!self->input_done || self->run == NULL)
    return;
  if (self->handling > 0 && self->drain_source != 0)
    return;

  g_clear_handle_id (&self->drain_source, g_source_remove);
  run = g_steal_pointer (&self->run);
  if (self->cancelled_id != 0)
    {
      g_cancellable_disconnect (g_task_get_cancellable (run), self->cancelled_id);
      self->cancelled_id = 0;
    }
  if (self->write_error != NULL)
    g_task_return_error (run, g_error_copy (self->write_error));
  else
    g_task_return_boolean (run, TRUE);
}

static void
notify_cb (JsonNode *message,
           gpointer  user_data)
{
  SightMcpStdio *self = user_data;

  write_message (self, message);
}

static void
handled_cb (GObject      *object,
            GAsyncResult *result,
            gpointer      user_data)
{
  g_autoptr(SightMcpStdio) self = user_data;
  g_autoptr(JsonNode) answer = NULL;
  g_autoptr(GError) error = NULL;

  answer = sight_mcp_session_handle_finish (SIGHT_MCP_SESSION (object), result, &error);
  if (answer != NULL)
    write_message (self, answer);
  else if (error != NULL)
    g_warning ("handling a message failed: %s", error->message);
  if (self->handling > 0)
    self->handling--;
  maybe_finish (self);
}

static gboolean
drain_timeout_cb (gpointer data)
{
  SightMcpStdio *self = data;

  self->drain_source = 0;
  if (self->handling > 0)
    g_warning ("%u calls did not finish within %d ms of the end of input", self->handling,
               DRAIN_MS);
  /* Whatever still runs answers into a closed stream. */
  self->handling = 0;
  maybe_finish (self);
  return G_SOURCE_REMOVE;
}

static void
input_ended (SightMcpStdio *self)
{
  if (self->input_done)
    return;
  self->input_done = TRUE;
  g_debug ("input ended: closing the session");
  sight_mcp_session_close (self->session);
  if (self->handling > 0)
    self->drain_source = g_timeout_add (DRAIN_MS, drain_timeout_cb, self);
  maybe_finish (self);
}

static void read_next (SightMcpStdio *self);

/* A line that cannot be a message is still one line, answered like any
 * other: -32700 with a null id; then the next line. */
static void
answer_garbage_line (SightMcpStdio *self,
                     const char    *why)
{
  g_autoptr(JsonNode) answer = sight_mcp_error_response_new (NULL, SIGHT_MCP_PARSE_ERROR, why);

  write_message (self, answer);
  read_next (self);
}

static void
line_read_cb (GObject      *object,
              GAsyncResult *result,
              gpointer      user_data)
{
  g_autoptr(SightMcpStdio) self = user_data;
  g_autoptr(GError) error = NULL;
  g_autofree char *line = NULL;
  gsize length = 0;

  line = g_data_input_stream_read_line_finish_utf8 (G_DATA_INPUT_STREAM (object), result,
                                                    &length, &error);
  if (line == NULL && error != NULL && !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED) &&
      g_error_matches (error, G_CONVERT_ERROR, G_CONVERT_ERROR_ILLEGAL_SEQUENCE))
    {
      answer_garbage_line (self, "Parse error: the message is not UTF-8 JSON");
      return;
    }
  if (line == NULL)
    {
      if (error != NULL && !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        g_debug ("reading input failed: %s", error->message);
      input_ended (self);
      return;
    }

  if (memchr (line, '\0', length) != NULL)
    {
      /* A NUL byte cannot be in JSON text (read as a C string, the line
       * would end at it, unanswered or cut short). */
      answer_garbage_line (self, "Parse error: the message contains a NUL byte");
      return;
    }
  if (length > 0 && line[length - 1] == '\r')
    line[--length] = '\0';
  g_strstrip (line);
  if (*line != '\0')
    {
      self->handling++;
      sight_mcp_session_handle_text_async (self->session, line, -1, notify_cb, self,
                                           handled_cb, g_object_ref (self));
    }
  read_next (self);
}

static void
read_next (SightMcpStdio *self)
{
  if (self->input_done)
    return;
  if (g_cancellable_is_cancelled (self->read_cancellable))
    {
      input_ended (self);
      return;
    }
  g_data_input_stream_read_line_async (self->input, G_PRIORITY_DEFAULT, self->read_cancellable,
                                       line_read_cb, g_object_ref (self));
}

static void
run_cancelled_cb (GCancellable  *cancellable,
                  SightMcpStdio *self)
{
  g_cancellable_cancel (self->read_cancellable);
}

void
sight_mcp_stdio_run_async (SightMcpStdio       *self,
                           GCancellable        *cancellable,
                           GAsyncReadyCallback  callback,
                           gpointer             user_data)
{
  g_return_if_fail (SIGHT_IS_MCP_STDIO (self));
  g_return_if_fail (self->run == NULL);

  self->run = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (self->run, sight_mcp_stdio_run_async);
  /* Cancelling ends the run like end of input does: cleanly. */
  g_task_set_check_cancellable (self->run, FALSE);
  if (cancellable != NULL)
    self->cancelled_id = g_cancellable_connect (cancellable, G_CALLBACK (run_cancelled_cb),
                                                self, NULL);
  read_next (self);
}

gboolean
sight_mcp_stdio_run_finish (SightMcpStdio  *self,
                            GAsyncResult   *result,
                            GError        **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);

  return g_task_propagate_boolean (G_TASK (result), error);
}
