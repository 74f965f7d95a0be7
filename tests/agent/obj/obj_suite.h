/* obj_suite: what the two files of the object-store suite share
 * (test_obj.c, test_obj_fake.c). */
#ifndef AQ_TESTS_AGENT_OBJ_OBJ_SUITE_H
#define AQ_TESTS_AGENT_OBJ_OBJ_SUITE_H

#include <check.h>
#include <stdint.h>

/* obj_list callback counting keys into *(size_t *)arg. */
int test_obj_count_cb(void *arg, const char *key, uint64_t size);
/* Add the scripted-server cases (test_obj_fake.c) to tc. */
void test_obj_fake_add(TCase *tc);

#endif
