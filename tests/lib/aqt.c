/* aqt: the shared main() of the Check suites (see aqt.h). */
#include "tests/lib/aqt.h"

#include <stdlib.h>

int aqt_run(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
