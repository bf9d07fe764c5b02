/* fuzz_mcp.c - libFuzzer target for the MCP server (brig-mcp(1)): the input is the whole stdin
 * of one `brig mcp` session.
 *
 * Each input is written to a pipe whose write end is then closed, and mcp_serve() reads it to
 * EOF, answering into /dev/null: the line framer, the JSON-RPC parser and every method handler
 * see exactly what a client could send.  The container engine is replaced by mcp_hooks that
 * return a canned result at once (its stdout is the submitted code, so arbitrary bytes reach
 * the result encoder); no brig_ctx is needed then, the default policy is passed in directly.
 * The seed corpus holds sessions of both eras (2025 handshake, 2026-07-28 per-request _meta).
 */
#include "config.h"

#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "brig.h"
#include "server.h"
#include "util.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Inputs longer than the pipe can hold are skipped (the script runs with a smaller -max_len). */
#define PIPE_BYTES ((size_t)1 << 20)

static brig_policy *policy;
static int devnull = -1;

static int canned_run(void *data, brig_ctx *ctx, const brig_request *req, const brig_run_options *o,
		      brig_result *res, brig_error **err)
{
	(void)data;
	(void)ctx;
	(void)o;
	(void)err;
	memset(res, 0, sizeof *res);
	res->language = req->language;
	res->image = xstrdup("brig/python:fuzz");
	res->backend = xstrdup("fake");
	res->runtime = xstrdup("runc");
	res->container = xstrdup("brig-0123456789abcdef");
	memset(res->code_sha256, '0', 64);
	res->verdict = BRIG_VERDICT_SUCCESS;
	res->duration_ms = 1;
	res->stdout_data = xstrndup(req->code, req->code_len);
	res->stdout_len = req->code_len;
	res->stderr_data = xstrdup("");
	return 0;
}

static json_object *canned_status(void *data, brig_ctx *ctx)
{
	(void)data;
	(void)ctx;
	return json_tokener_parse(
		"{\"backends\":[{\"name\":\"docker-cli\",\"description\":\"d\","
		"\"isolation\":\"container\",\"available\":true,\"reason\":null,"
		"\"version\":\"27.0\",\"runtime\":\"runc\",\"path\":\"/x\"}],"
		"\"refused_plugins\":[],\"backend_dir\":\"/x\",\"policy_backend\":\"auto\","
		"\"isolation_minimum\":\"container\",\"selected\":\"docker-cli\","
		"\"isolation\":\"container\",\"runtime\":\"runc\",\"selection_error\":null,"
		"\"images\":[{\"language\":\"python\",\"image\":\"brig/python:bookworm\","
		"\"present\":true}]}");
}

static const mcp_hooks canned_hooks = { .run = canned_run, .status = canned_status };

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	signal(SIGPIPE, SIG_IGN);
	policy = brig_policy_new_default();
	if (!policy)
		abort();
	devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (devnull < 0)
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > PIPE_BYTES)
		return 0;
	int p[2];
	if (pipe2(p, O_CLOEXEC) != 0)
		abort();
	if (size > 65536 && fcntl(p[1], F_SETPIPE_SZ, (int)PIPE_BYTES) < 0) {
		close(p[0]);
		close(p[1]);
		return 0;
	}
	size_t off = 0;
	while (off < size) {
		ssize_t n = write(p[1], data + off, size - off);
		if (n <= 0)
			abort();
		off += (size_t)n;
	}
	close(p[1]);

	mcp_options opts = {
		.shutdown_fd = -1, .policy = policy, .hooks = &canned_hooks, .quiet = true
	};
	brig_error *err = NULL;
	int rc = mcp_serve(NULL, p[0], devnull, &opts, &err);
	close(p[0]);
	if (rc != 0) {
		fprintf(stderr, "fuzz_mcp: mcp_serve failed: %s\n",
			err && err->message ? err->message : "?");
		abort();
	}
	brig_error_free(err);
	return 0;
}
