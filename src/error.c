/* error.c - public error handling and the name tables of brig.h. */
#include "config.h"

#include <string.h>
#include <strings.h>

#include "lang.h"
#include "util.h"

void brig_error_free(brig_error *err)
{
	if (!err)
		return;
	free(err->message);
	free(err);
}

int brig_status_exit_code(int status)
{
	switch (status) {
	case BRIG_OK:
		return 0;
	case BRIG_E_USAGE:
	case BRIG_E_POLICY:
	case BRIG_E_REFUSED:
	case BRIG_E_NOT_FOUND:
		return 2;
	case BRIG_E_CANCELLED:
		return 130;
	default:
		return 125;
	}
}

const char *brig_status_name(int status)
{
	static const char *const names[] = { "ok",          "usage",   "policy",    "refused",
					     "unavailable", "sandbox", "system",    "plugin",
					     "audit",       "busy",    "cancelled", "not_found" };
	return status <= 0 && -status < (int)(sizeof names / sizeof *names) ? names[-status]
									    : "unknown";
}

const char *brig_language_name(brig_language lang)
{
	const lang_info *li = lang_get(lang);
	return li ? li->name : "unknown";
}

int brig_language_parse(const char *name)
{
	const lang_info *li = lang_by_alias(name);
	return li ? (int)li->lang : -1;
}

const char *brig_verdict_name(brig_verdict v)
{
	switch (v) {
	case BRIG_VERDICT_SUCCESS:
		return "success";
	case BRIG_VERDICT_ERROR:
		return "error";
	case BRIG_VERDICT_TIMEOUT:
		return "timeout";
	case BRIG_VERDICT_OOM:
		return "oom";
	case BRIG_VERDICT_OUTPUT_LIMIT:
		return "output_limit";
	case BRIG_VERDICT_SANDBOX_ERROR:
		return "sandbox_error";
	case BRIG_VERDICT_CANCELLED:
		return "cancelled";
	}
	return "unknown";
}

const char *brig_isolation_name(int isolation)
{
	switch (isolation) {
	case BRIG_ISOLATION_CONTAINER:
		return "container";
	case BRIG_ISOLATION_GVISOR:
		return "gvisor";
	default:
		return "unknown";
	}
}

const char *brig_version(void)
{
	return PACKAGE_VERSION;
}
