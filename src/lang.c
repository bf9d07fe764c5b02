/* lang.c - the language table (see lang.h). */
#include "config.h"

#include <string.h>
#include <strings.h>

#include "lang.h"

#define BASE_ENV "HOME=/tmp", "PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8", "TMPDIR=/tmp"

/* PYTHONUNBUFFERED: output arrives as it is printed, so a run killed at its deadline still
 * shows what it printed (the spec builder drops it where the runtime cannot take it). */
static const lang_info table[BRIG_LANG_COUNT] = {
	[BRIG_LANG_PYTHON] = {
		.lang = BRIG_LANG_PYTHON,
		.name = "python",
		.aliases = (const char *const[]){ "python", "py", "python3", NULL },
		.extensions = (const char *const[]){ ".py", NULL },
		.default_image = "brig/python:bookworm",
		.argv = (const char *const[]){ "python3", "-", NULL },
		.env = (const char *const[]){ BASE_ENV, "PYTHONDONTWRITEBYTECODE=1",
					      "PYTHONUNBUFFERED=1", NULL },
		.description = "Python 3",
	},
	[BRIG_LANG_NODE] = {
		.lang = BRIG_LANG_NODE,
		.name = "node",
		.aliases = (const char *const[]){ "node", "nodejs", "javascript", "js", NULL },
		.extensions = (const char *const[]){ ".js", ".mjs", ".cjs", NULL },
		.default_image = "brig/node:bookworm",
		.argv = (const char *const[]){ "node", "-", NULL },
		.env = (const char *const[]){ BASE_ENV, NULL },
		.description = "Node.js",
	},
	[BRIG_LANG_SHELL] = {
		.lang = BRIG_LANG_SHELL,
		.name = "shell",
		.aliases = (const char *const[]){ "shell", "sh", NULL },
		.extensions = (const char *const[]){ ".sh", NULL },
		.default_image = "brig/shell:bookworm",
		.argv = (const char *const[]){ "sh", "-s", NULL },
		.env = (const char *const[]){ BASE_ENV, NULL },
		.description = "POSIX sh",
	},
};

const lang_info *lang_get(brig_language lang)
{
	return (unsigned)lang < BRIG_LANG_COUNT ? &table[lang] : NULL;
}

const lang_info *lang_by_alias(const char *name)
{
	for (int l = 0; name && l < BRIG_LANG_COUNT; l++)
		for (const char *const *a = table[l].aliases; *a; a++)
			if (strcasecmp(name, *a) == 0)
				return &table[l];
	return NULL;
}

const lang_info *lang_by_file(const char *file)
{
	const char *dot = file ? strrchr(file, '.') : NULL;
	const char *slash = file ? strrchr(file, '/') : NULL;
	if (!dot || (slash && slash > dot))
		return NULL;
	for (int l = 0; l < BRIG_LANG_COUNT; l++)
		for (const char *const *e = table[l].extensions; *e; e++)
			if (strcmp(dot, *e) == 0)
				return &table[l];
	return NULL;
}
