/* cunit_main.h - one main() for every CUnit test program.
 * A test file defines `static CU_TestInfo tests[]` and calls BRIG_CUNIT_MAIN("suite", tests).
 * Exit status for automake: 0 all passed, 1 a failure (or no assertion failed but a test did),
 * 77 when the suite ran no test at all; 99 when CUnit itself failed.
 */
#ifndef BRIG_CUNIT_MAIN_H
#define BRIG_CUNIT_MAIN_H

#include <CUnit/Basic.h>
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>

static inline int brig_cunit_run(const char *suite_name, CU_TestInfo *tests)
{
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 99;
	CU_SuiteInfo suites[] = { { (char *)suite_name, NULL, NULL, NULL, NULL, tests },
				  CU_SUITE_INFO_NULL };
	if (CU_register_suites(suites) != CUE_SUCCESS) {
		fprintf(stderr, "CUnit: %s\n", CU_get_error_msg());
		CU_cleanup_registry();
		return 99;
	}
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	unsigned failed = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
	unsigned run = CU_get_number_of_tests_run();
	CU_cleanup_registry();
	if (run == 0)
		return 77;
	return failed ? 1 : 0;
}

#define BRIG_CUNIT_MAIN(name, tests)                    \
	int main(void)                                  \
	{                                               \
		return brig_cunit_run((name), (tests)); \
	}

#endif
