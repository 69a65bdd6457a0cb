/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/* Reading what another machine sends (a model's answer, a site's robots.txt
 * or sitemap) without letting it grow the process: a stream is read to its
 * end or to @max_bytes, whichever comes first. If more follows, the bytes
 * are the first @max_bytes and *truncated is set; the rest is left unread
 * (cancel the request or drop the stream). With @idle_timeout_ms over 0, a
 * wait that long for the next bytes ends the read with G_IO_ERROR_TIMED_OUT:
 * a peer that stops sending mid-answer does not hold the caller until its
 * own deadline. */
void    sight_read_bounded_async  (GInputStream         *stream,
                                   gsize                 max_bytes,
                                   guint                 idle_timeout_ms,
                                   GCancellable         *cancellable,
                                   GAsyncReadyCallback   callback,
                                   gpointer              user_data);
GBytes *sight_read_bounded_finish (GInputStream         *stream,
                                   GAsyncResult         *result,
                                   gboolean             *truncated,
                                   GError              **error);

G_END_DECLS
