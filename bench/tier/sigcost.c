/* aq-sigcost: what libcurl's built-in AWS SigV4 signing costs the client
 * per request (bench/tier/REPORT-obj.md). Runs `total` GETs of one URL,
 * `parallel` at once on a curl multi handle (like obj_get_many), each with a
 * 4 KiB Range, signed (CURLOPT_AWS_SIGV4 "aws:amz:us-east-1:s3" with AK:SK)
 * or not, and prints requests/s and the client's CPU microseconds per
 * request (getrusage). Against aq-s3lite the unsigned ones get 403: the
 * answer is as small, so the difference is the signing.
 *
 *   aq-sigcost URL AK SK SIGN(0|1) TOTAL [PARALLEL=32]
 */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#define SC_MAX_PARALLEL 256

static size_t sc_discard(char *p, size_t size, size_t n, void *arg)
{
	return size * n;
}

static long sc_num(const char *s, long lo, long hi)
{
	char *end;
	long v = strtol(s, &end, 10);
	if (*s == '\0' || *end || v < lo || v > hi) {
		fprintf(stderr, "aq-sigcost: bad number %s\n", s);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	static CURL *h[SC_MAX_PARALLEL];
	struct curl_slist *hdrs = NULL;
	struct timespec t0, t1;
	struct rusage ru;
	char userpwd[600];
	long sign, total, parallel = 32, started = 0, done = 0, bad = 0;
	double el, cpu;
	CURLM *m;

	if (argc < 6 || argc > 7) {
		fprintf(stderr, "usage: aq-sigcost URL AK SK SIGN(0|1) TOTAL [PARALLEL=32]\n");
		return 2;
	}
	sign = sc_num(argv[4], 0, 1);
	total = sc_num(argv[5], 1, 100000000);
	if (argc == 7)
		parallel = sc_num(argv[6], 1, SC_MAX_PARALLEL);
	snprintf(userpwd, sizeof userpwd, "%s:%s", argv[2], argv[3]);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	m = curl_multi_init();
	hdrs = curl_slist_append(hdrs, "Range: bytes=4096-8191");
	hdrs = curl_slist_append(hdrs, "x-amz-content-sha256: "
				       "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	if (!m || !hdrs)
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long i = 0; i < parallel && started < total; i++, started++) {
		if (!(h[i] = curl_easy_init()))
			return 1;
		curl_easy_setopt(h[i], CURLOPT_URL, argv[1]);
		curl_easy_setopt(h[i], CURLOPT_WRITEFUNCTION, sc_discard);
		curl_easy_setopt(h[i], CURLOPT_HTTPHEADER, hdrs);
		if (sign) {
			curl_easy_setopt(h[i], CURLOPT_AWS_SIGV4, "aws:amz:us-east-1:s3");
			curl_easy_setopt(h[i], CURLOPT_USERPWD, userpwd);
		}
		curl_multi_add_handle(m, h[i]);
	}
	while (done < total) {
		CURLMsg *msg;
		int running, left;

		curl_multi_perform(m, &running);
		while ((msg = curl_multi_info_read(m, &left)) != NULL) {
			CURL *e = msg->easy_handle;
			long st = 0;

			curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &st);
			bad += msg->data.result != CURLE_OK || st != (sign ? 206 : 403);
			curl_multi_remove_handle(m, e);
			done++;
			if (started < total) {
				curl_multi_add_handle(m, e);
				started++;
			}
		}
		if (done < total)
			curl_multi_poll(m, NULL, 0, 100, NULL);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	getrusage(RUSAGE_SELF, &ru);
	el = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
	      (double)ru.ru_stime.tv_usec / 1e6;
	printf("signed=%ld requests=%ld req/s=%.0f client_us_per_req=%.1f unexpected=%ld\n", sign, total,
	       (double)total / el, cpu / (double)total * 1e6, bad);
	for (long i = 0; i < parallel && i < total; i++)
		curl_easy_cleanup(h[i]);
	curl_multi_cleanup(m);
	curl_slist_free_all(hdrs);
	curl_global_cleanup();
	return bad ? 1 : 0;
}
