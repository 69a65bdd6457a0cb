/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <adwaita.h>

G_BEGIN_DECLS

#define SIGHT_TYPE_CREDENTIALS_PAGE (sight_credentials_page_get_type ())
G_DECLARE_FINAL_TYPE (SightCredentialsPage, sight_credentials_page, SIGHT, CREDENTIALS_PAGE,
                      AdwPreferencesPage)

/* Preferences › Credentials: the credentials of one project file (name,
 * purpose, allowed origins, where the value lives), and a form that adds,
 * edits and removes them. A value entered here goes to the keyring and the
 * file gets a keyring source (sight_credential_save_async). Emits ::changed
 * once the file was written. */
SightCredentialsPage *sight_credentials_page_new              (void);
void                  sight_credentials_page_set_project_path (SightCredentialsPage *self,
                                                               const char           *path);
const char           *sight_credentials_page_get_project_path (SightCredentialsPage *self);
/* The names listed, sorted (for tests). */
GStrv                 sight_credentials_page_list_names       (SightCredentialsPage *self);
/* Whether a save or a removal is under way (for tests). */
gboolean              sight_credentials_page_get_busy         (SightCredentialsPage *self);

G_END_DECLS
