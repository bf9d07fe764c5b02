/* hello.c - the smallest libbrig program: run one Python snippet in a hardened box.
 *
 *   cc hello.c $(pkg-config --cflags --libs brig) -o hello && ./hello
 */
#include <brig.h>
#include <stdio.h>
#include <string.h>

int main(void)
{
	brig_ctx *ctx = NULL;
	brig_error *err = NULL;
	/* The built-in strict policy; brig_policy_load_file() reads an operator's file.  One run
	 * only, so no warm pool (a long-lived program keeps the default: containers started
	 * ahead, see brig-policy(5)). */
	brig_policy *policy = brig_policy_new_default();
	brig_policy_override(policy, "warm_pool", "0", NULL, NULL);
	if (brig_ctx_new(policy, &ctx, &err) < 0) {
		fprintf(stderr, "hello: %s\n", err->message);
		brig_error_free(err);
		return 125;
	}
	const char *code = "import platform\nprint('hello from', platform.python_version())\n";
	brig_request req = { .language = BRIG_LANG_PYTHON, .code = code, .code_len = strlen(code) };
	brig_result res = { .struct_size = sizeof res };
	if (brig_run(ctx, &req, NULL, &res, &err) < 0) {
		fprintf(stderr, "hello: %s\n", err->message);
		brig_error_free(err);
		brig_ctx_free(ctx);
		return 125;
	}
	printf("%s", res.stdout_data);
	printf("verdict %s, exit %d, %lld ms (%s, %s)\n", brig_verdict_name(res.verdict),
	       res.exit_code, res.duration_ms, res.backend, res.runtime);
	int rc = res.verdict == BRIG_VERDICT_SUCCESS ? 0 : 1;
	brig_result_clear(&res);
	brig_ctx_free(ctx);
	return rc;
}
