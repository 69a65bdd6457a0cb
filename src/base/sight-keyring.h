/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gio/gio.h>
#include <libsecret/secret.h>

G_BEGIN_DECLS

/* The user's keyring: the Secret Service over D-Bus, through libsecret. The
 * one place that stores, reads and removes an item, for every kind of value
 * kept there (a model provider's API key, a project's keyring credentials).
 *
 * An item is named by @attributes (name → value, strings), and by @schema
 * when the caller has one (NULL: the attributes alone, as a credential
 * written by hand in sightline.json names an item). Every call has a
 * deadline of @timeout_ms (0: SIGHT_KEYRING_TIMEOUT_MS): a keyring that does
 * not answer in time (a hung service, an unlock prompt nobody answers) is
 * SIGHT_ERROR_AUTH_CREDENTIAL_UNAVAILABLE saying so (a lookup whose items
 * are locked says the keyring is locked), and so is any other failure of
 * the keyring (no Secret Service on the bus, a refusal, an unlock that
 * could not be asked). The call finishes at its deadline, or when the
 * caller's @cancellable cancels (G_IO_ERROR_CANCELLED), even when the
 * service never answers. Messages never hold a value. */

/* A keyring that has not answered in this long is not going to. */
#define SIGHT_KEYRING_TIMEOUT_MS 25000

void     sight_keyring_store_async   (const SecretSchema   *schema,
                                      GHashTable           *attributes,
                                      const char           *label,
                                      const char           *value,
                                      guint                 timeout_ms,
                                      GCancellable         *cancellable,
                                      GAsyncReadyCallback   callback,
                                      gpointer              user_data);
gboolean sight_keyring_store_finish  (GAsyncResult         *result,
                                      GError              **error);

/* Finishes with the item's value as text (free it with
 * sight_keyring_value_free), or NULL with no error when there is none. */
void     sight_keyring_lookup_async  (const SecretSchema   *schema,
                                      GHashTable           *attributes,
                                      guint                 timeout_ms,
                                      GCancellable         *cancellable,
                                      GAsyncReadyCallback   callback,
                                      gpointer              user_data);
char    *sight_keyring_lookup_finish (GAsyncResult         *result,
                                      GError              **error);

/* Removes the items matching; TRUE also when there was none. */
void     sight_keyring_clear_async   (const SecretSchema   *schema,
                                      GHashTable           *attributes,
                                      guint                 timeout_ms,
                                      GCancellable         *cancellable,
                                      GAsyncReadyCallback   callback,
                                      gpointer              user_data);
gboolean sight_keyring_clear_finish  (GAsyncResult         *result,
                                      GError              **error);

/* Wipes and frees a value. NULL is ignored. */
void     sight_keyring_value_free    (char                 *value);

G_END_DECLS
