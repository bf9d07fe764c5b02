/* plugin_host.c - host services as seen from a plugin (see plugin_host.h). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "plugin_host.h"
#include "util.h"

static const brig_host_services *the_host;

void plugin_host_set(const brig_host_services *host)
{
	the_host = host;
}

int plugin_fail(brig_error **err, int status, int errnum, const char *fmt, ...)
{
	if (!err)
		return status;
	va_list ap;
	va_start(ap, fmt);
	char *msg = xvasprintf(fmt, ap);
	va_end(ap);
	plugin_error_free(*err);
	if (the_host && the_host->error_new)
		*err = the_host->error_new(status, errnum, "%s", msg);
	else
		*err = brig_error_new(status, errnum, "%s", msg);
	free(msg);
	return status;
}

int plugin_transient(brig_error **err, int status)
{
	if (err && *err)
		(*err)->transient = true;
	return status;
}

void plugin_error_free(brig_error *e)
{
	if (!e)
		return;
	free(e->message);
	free(e);
}

void plugin_log(int level, const char *fmt, ...)
{
	if (!the_host || !the_host->log)
		return;
	va_list ap;
	va_start(ap, fmt);
	char *msg = xvasprintf(fmt, ap);
	va_end(ap);
	the_host->log(level, "%s", msg);
	free(msg);
}
