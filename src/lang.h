/* lang.h - the one language table: names, aliases, file extensions, default image, command and
 * environment of every language brig runs.  Read by brig.h's name functions, the policy's
 * defaults, the spec builder, the CLI and the MCP tool schemas: a language is added here and
 * nowhere else.
 */
#ifndef BRIG_LANG_H
#define BRIG_LANG_H

#include "brig.h"

typedef struct lang_info {
	brig_language lang;
	const char *name;              /* "python": the policy's and the result's spelling */
	const char *const *aliases;    /* accepted on input, NULL-terminated (name first) */
	const char *const *extensions; /* ".py", NULL-terminated */
	const char *default_image;     /* the image setup-host builds */
	const char *const *argv;       /* the interpreter reading the program from stdin */
	const char *const *env;        /* the box's complete environment */
	const char *description;       /* for help texts and tool schemas */
} lang_info;

/* The entry of `lang`, or NULL when out of range. */
const lang_info *lang_get(brig_language lang);
/* By name or alias (ASCII case-insensitive), or NULL. */
const lang_info *lang_by_alias(const char *name);
/* By the extension of `file` (".py", ...), or NULL. */
const lang_info *lang_by_file(const char *file);

#endif
