/* aqt: what every Check suite of Aquifer shares, so that a suite's main()
 * says only which suite it runs:
 *
 *     int main(void) { return aqt_run(my_suite()); }
 *
 * aqt_run runs every test of s (CK_NORMAL output, Check's fork mode as the
 * CK_FORK environment variable sets it), frees the runner, and returns
 * EXIT_SUCCESS when none failed, EXIT_FAILURE otherwise: the exit status
 * automake's test driver reads. It takes s (srunner_free frees it).
 */
#ifndef AQ_TESTS_LIB_AQT_H
#define AQ_TESTS_LIB_AQT_H

#include <check.h>

int aqt_run(Suite *s);

#endif
