/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gio/gio.h>

#include "sight-project.h"
#include "sight-secrets.h"

G_BEGIN_DECLS

/* The values of the project's keyring credentials ({"keyring": {attribute:
 * value, …}} in sightline.json) in the user's keyring (sight-keyring.h; a
 * step reads them through sight_secrets_resolve_async, in any program). A
 * value entered in the app is stored under
 * sight_credential_keyring_attributes(); a credential written by hand may
 * name any attributes of an item already there. Never in a file or a log. */

/* The attributes the app stores a credential's value under:
 * {"application": "dev.sightline.Sightline", "credential": @name}. */
GHashTable *sight_credential_keyring_attributes (const char *name);
/* Whether @cred's value is the app's own keyring item (stored under those
 * attributes), which goes with the credential when it is removed or renamed;
 * a value kept elsewhere stays where it is. */
gboolean    sight_credential_keyring_is_own     (const SightCredential *cred);

/* Stores @value (which the caller then wipes) for @cred's keyring
 * attributes; the item's label names the credential. */
void        sight_credential_keyring_store_async  (const SightCredential *cred,
                                                   const char            *value,
                                                   GCancellable          *cancellable,
                                                   GAsyncReadyCallback    callback,
                                                   gpointer               user_data);
gboolean    sight_credential_keyring_store_finish (GAsyncResult          *result,
                                                   GError               **error);
/* Removes the value stored for @cred's keyring attributes (none: TRUE). */
void        sight_credential_keyring_clear_async  (const SightCredential *cred,
                                                   GCancellable          *cancellable,
                                                   GAsyncReadyCallback    callback,
                                                   gpointer               user_data);
gboolean    sight_credential_keyring_clear_finish (GAsyncResult          *result,
                                                   GError               **error);
/* Whether the keyring holds a value for @cred: finishes TRUE or FALSE, or
 * with an error when no keyring answers. */
void        sight_credential_keyring_has_value_async  (const SightCredential *cred,
                                                       GCancellable          *cancellable,
                                                       GAsyncReadyCallback    callback,
                                                       gpointer               user_data);
gboolean    sight_credential_keyring_has_value_finish (GAsyncResult          *result,
                                                       gboolean              *has_value,
                                                       GError               **error);

/* Saves @cred: @value (when not NULL or empty) into the keyring under its
 * keyring attributes (the app's own when it names none), then the
 * credential into the project file at @project_path
 * (sight_project_file_set_credential, off the main thread). A keyring
 * that refuses leaves the file as it was. The one way the app saves a
 * credential: the recording's offer and Preferences › Credentials. */
void        sight_credential_save_async   (const char            *project_path,
                                           const SightCredential *cred,
                                           const char            *value,
                                           GCancellable          *cancellable,
                                           GAsyncReadyCallback    callback,
                                           gpointer               user_data);
/* Saves @cred in place of @old (NULL: the credential of @cred's name), as
 * sight_credential_save_async does: a rename. When the keyring item's
 * attributes change with the name (the app's own), the value moves: @value,
 * or the old item's, is stored under the new attributes, the file is written
 * (sight_project_file_replace_credential), then the old item is removed. A
 * failure before the file is written leaves the keyring and the file as they
 * were. Finishes with sight_credential_save_finish. */
void        sight_credential_replace_async (const char            *project_path,
                                            const SightCredential *old,
                                            const SightCredential *cred,
                                            const char            *value,
                                            GCancellable          *cancellable,
                                            GAsyncReadyCallback    callback,
                                            gpointer               user_data);
gboolean    sight_credential_save_finish  (GAsyncResult          *result,
                                           GError               **error);

/* The project file of a test: the sightline.json next to @test_file or in a
 * folder above it, else a new one next to it; for an unsaved test (NULL),
 * the same from the current folder. */
char       *sight_credential_project_path_for (GFile *test_file);

G_END_DECLS
