/* Unit tests for agent/agent_nvme.c, the pure half of the NVMe-oF shelf
 * (issue 24): the --shelf spec (good forms, every refusal named), the
 * /dev/nvme-fabrics connect string and its answer, the sysfs address and
 * NGUID/UUID files, the namespace id of an fsid, the reservation commands'
 * fields and the Reservation Report parser (bounded by the buffer and the cap). */
#include "agent/agent_nvme.h"

#include <check.h>
#include <errno.h>
#include <string.h>

#include "tests/lib/aqt.h"

#define NQN "nqn.2026-01.org.aquifer:shelf1"

static int spec_fails(const char *spec, const char *why)
{
	struct agent_nvme_spec s;
	aq_msg msg = { .text = "" };

	memset(&s, 0x5a, sizeof(s));
	if (agent_nvme_spec_parse(spec, &s, &msg) != AQ_EINVAL)
		return 0;
	ck_assert_msg(strstr(msg.text, why), "\"%s\": \"%s\" lacks \"%s\"", spec, msg.text, why);
	return s.port == 0x5a5a5a5a; /* nothing written on failure */
}

START_TEST(test_spec)
{
	struct agent_nvme_spec s;
	aq_msg msg = { .text = "" };

	ck_assert_int_eq(agent_nvme_spec_parse("nvmeof:tcp:10.0.2.15:4420:" NQN, &s, &msg), AQ_OK);
	ck_assert_int_eq(s.transport, AGENT_NVME_TCP);
	ck_assert_str_eq(s.addr, "10.0.2.15");
	ck_assert_uint_eq(s.port, 4420);
	ck_assert_str_eq(s.nqn, NQN);
	ck_assert_int_eq(s.fence, AGENT_NVME_FENCE_PR);
	ck_assert_str_eq(s.provision, "");

	ck_assert_int_eq(agent_nvme_spec_parse("nvmeof:rdma:[fd00::1]:4421:" NQN ",fence=none,provision=/usr/lib/aq/prov",
					       &s, &msg), AQ_OK);
	ck_assert_int_eq(s.transport, AGENT_NVME_RDMA);
	ck_assert_str_eq(s.addr, "fd00::1");
	ck_assert_uint_eq(s.port, 4421);
	ck_assert_str_eq(s.nqn, NQN);
	ck_assert_int_eq(s.fence, AGENT_NVME_FENCE_NONE);
	ck_assert_str_eq(s.provision, "/usr/lib/aq/prov");
	ck_assert_int_eq(agent_nvme_spec_parse("nvmeof:tcp:10.0.2.15:4420:" NQN ",fence=lease", &s, &msg), AQ_OK);
	ck_assert_int_eq(s.fence, AGENT_NVME_FENCE_LEASE);
	ck_assert_uint_eq(s.lease_s, 10);
	ck_assert_int_eq(agent_nvme_spec_parse("nvmeof:tcp:10.0.2.15:4420:" NQN ",lease=600,fence=lease", &s, &msg), AQ_OK);
	ck_assert_uint_eq(s.lease_s, 600);
	ck_assert(agent_nvme_is_spec("nvmeof:x"));
	ck_assert(!agent_nvme_is_spec("/srv/shelf"));

	ck_assert(spec_fails("/srv/shelf", "starts with nvmeof:"));
	ck_assert(spec_fails("nvmeof:fc:a:1:" NQN, "transport must be tcp or rdma"));
	ck_assert(spec_fails("nvmeof:tcp:10.0.0.1", "nvmeof:TRANSPORT:ADDR:PORT:NQN expected"));
	ck_assert(spec_fails("nvmeof:tcp:[fd00::1:4420:" NQN, "brackets"));
	ck_assert(spec_fails("nvmeof:tcp::4420:" NQN, "address must be"));
	ck_assert(spec_fails("nvmeof:tcp:a,b:4420:" NQN, "address must be"));
	ck_assert(spec_fails("nvmeof:tcp:a:0:" NQN, "port must be 1..65535"));
	ck_assert(spec_fails("nvmeof:tcp:a:65536:" NQN, "port must be 1..65535"));
	ck_assert(spec_fails("nvmeof:tcp:a:-1:" NQN, "port must be 1..65535"));
	ck_assert(spec_fails("nvmeof:tcp:a:44x:" NQN, "port must be 1..65535"));
	ck_assert(spec_fails("nvmeof:tcp:a:4420:shelf1", "must start with nqn."));
	ck_assert(spec_fails("nvmeof:tcp:a:4420:nqn.a=b", "must start with nqn."));
	ck_assert(spec_fails("nvmeof:tcp:a:4420:" NQN ",fence=scsi", "unknown option \"fence=scsi\""));
	ck_assert(spec_fails("nvmeof:tcp:a:4420:" NQN ",fence=leases", "(fence=pr|lease|none, lease=SECONDS, provision=PROG)"));
	ck_assert(spec_fails("nvmeof:tcp:a:4420:" NQN ",fence=lease,lease=4", "lease timeout in seconds, 5..600"));
	ck_assert(spec_fails("nvmeof:tcp:a:4420:" NQN ",fence=lease,lease=601", "5..600"));
	ck_assert(spec_fails("nvmeof:tcp:a:4420:" NQN ",fence=lease,lease=10s", "5..600"));
	ck_assert(spec_fails("nvmeof:tcp:a:4420:" NQN ",fence=lease,lease=99999999999", "5..600"));
	ck_assert(spec_fails("nvmeof:tcp:a:4420:" NQN ",lease=30", "name fence=lease too"));
	ck_assert(spec_fails("nvmeof:tcp:a:4420:" NQN ",fence=none,lease=30", "name fence=lease too"));
	ck_assert(spec_fails("nvmeof:tcp:a:4420:" NQN ",multipath=on", "unknown option"));
	ck_assert(spec_fails("nvmeof:tcp:a:4420:" NQN ",provision=rel/path", "absolute program path"));
	ck_assert(spec_fails("nvmeof:tcp:a:4420:" NQN ",provision=/a b", "absolute program path"));
	{
		char big[400];

		memset(big, 'x', sizeof(big));
		memcpy(big, "nvmeof:tcp:a:1:nqn.", 19);
		big[sizeof(big) - 1] = 0;
		ck_assert(spec_fails(big, "at most 223"));
		memset(big + 11, 'x', 8); /* a 388-character address */
		ck_assert(spec_fails(big, "nvmeof:TRANSPORT:ADDR:PORT:NQN expected"));
		big[200] = ':';
		ck_assert(spec_fails(big, "address must be 1..63"));
	}
}
END_TEST

START_TEST(test_connect)
{
	struct agent_nvme_spec s;
	aq_msg msg = { .text = "" };
	char buf[512], small[40];
	int inst = -7;

	ck_assert_int_eq(agent_nvme_spec_parse("nvmeof:tcp:10.0.2.15:4420:" NQN, &s, &msg), AQ_OK);
	ck_assert_int_eq(agent_nvme_connect_string(&s, "nqn.h", "0000-1", buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "transport=tcp,traddr=10.0.2.15,trsvcid=4420,nqn=" NQN ",hostnqn=nqn.h,hostid=0000-1");
	ck_assert_int_eq(agent_nvme_connect_string(&s, "nqn.h", "0000-1", small, sizeof(small)), -ENOSPC);

	ck_assert_int_eq(agent_nvme_connect_reply("instance=3,cntlid=1\n", 20, &inst), 0);
	ck_assert_int_eq(inst, 3);
	ck_assert_int_eq(agent_nvme_connect_reply("instance=12,cntlid=65535", 24, &inst), 0);
	ck_assert_int_eq(inst, 12);
	inst = -7;
	ck_assert_int_eq(agent_nvme_connect_reply("instance=3,cntlid=1", 12, &inst), -EPROTO); /* cut short */
	ck_assert_int_eq(agent_nvme_connect_reply("instance=,cntlid=1", 18, &inst), -EPROTO);
	ck_assert_int_eq(agent_nvme_connect_reply("instance=1234567890,cntlid=1", 28, &inst), -EPROTO);
	ck_assert_int_eq(agent_nvme_connect_reply("instance=3;cntlid=1", 19, &inst), -EPROTO);
	ck_assert_int_eq(agent_nvme_connect_reply("instance=3,cntlid=1x", 20, &inst), -EPROTO);
	ck_assert_int_eq(agent_nvme_connect_reply("inst", 4, &inst), -EPROTO);
	ck_assert_int_eq(inst, -7);
}
END_TEST

START_TEST(test_address)
{
	struct agent_nvme_spec s;
	aq_msg msg = { .text = "" };
	const char *a;

	ck_assert_int_eq(agent_nvme_spec_parse("nvmeof:tcp:10.0.2.15:4420:" NQN, &s, &msg), AQ_OK);
	a = "traddr=10.0.2.15,trsvcid=4420\n";
	ck_assert_int_eq(agent_nvme_address_match(a, strlen(a), &s), 1);
	a = "traddr=10.0.2.15,trsvcid=4420,src_addr=10.0.2.16\n";
	ck_assert_int_eq(agent_nvme_address_match(a, strlen(a), &s), 1);
	a = "traddr=10.0.2.151,trsvcid=4420\n";
	ck_assert_int_eq(agent_nvme_address_match(a, strlen(a), &s), 0);
	a = "traddr=10.0.2.15,trsvcid=44200\n";
	ck_assert_int_eq(agent_nvme_address_match(a, strlen(a), &s), 0);
	a = "traddr=10.0.2.15,trsvcid=4420\n";
	ck_assert_int_eq(agent_nvme_address_match(a, 20, &s), -EINVAL); /* no port within len */
	a = "traddr=10.0.2.15,junk,trsvcid=4420";
	ck_assert_int_eq(agent_nvme_address_match(a, strlen(a), &s), -EINVAL);
	a = "=x,trsvcid=4420";
	ck_assert_int_eq(agent_nvme_address_match(a, strlen(a), &s), -EINVAL);
	ck_assert_int_eq(agent_nvme_address_match("", 0, &s), -EINVAL);
}
END_TEST

START_TEST(test_ids)
{
	uint8_t id[16], back[16];
	char text[40];
	static const uint8_t want[16] = { 'A', 'Q', 'F', 'R', 0, 1, 0, 0, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef };

	ck_assert_int_eq(agent_nvme_nsid_of_fsid("0123456789abcdef", id), 0);
	ck_assert_mem_eq(id, want, 16);
	agent_nvme_id_text(id, text, sizeof(text));
	ck_assert_str_eq(text, "41514652-0001-0000-0123-456789abcdef");
	ck_assert_int_eq(agent_nvme_id_parse("41514652-0001-0000-0123-456789ABCDEF\n", 37, back), 0);
	ck_assert_mem_eq(back, want, 16);
	ck_assert_int_eq(agent_nvme_nsid_of_fsid("7", id), 0);
	ck_assert_uint_eq(id[15], 7);
	ck_assert_uint_eq(id[14], 0);
	ck_assert_int_eq(agent_nvme_nsid_of_fsid("", id), -EINVAL);
	ck_assert_int_eq(agent_nvme_nsid_of_fsid("0123456789abcdef0", id), -EINVAL);
	ck_assert_int_eq(agent_nvme_nsid_of_fsid("01234g", id), -EINVAL);

	memset(back, 0x11, sizeof(back));
	ck_assert_int_eq(agent_nvme_id_parse("41514652-0001-0000-0123-456789abcde", 35, back), -EINVAL);
	ck_assert_int_eq(agent_nvme_id_parse("41514652-0001-0000-0123-456789abcdef", 30, back), -EINVAL);
	ck_assert_int_eq(agent_nvme_id_parse("41514652+0001-0000-0123-456789abcdef", 36, back), -EINVAL);
	ck_assert_int_eq(agent_nvme_id_parse("4151465z-0001-0000-0123-456789abcdef", 36, back), -EINVAL);
	ck_assert_int_eq(agent_nvme_id_parse("41514652-0001-0000-0123-456789abcdefX", 37, back), -EINVAL);
	ck_assert_uint_eq(back[0], 0x11); /* nothing written on failure */

	ck_assert_uint_ne(agent_nvme_key_of_node("n1"), 0);
	ck_assert_uint_ne(agent_nvme_key_of_node("n1"), agent_nvme_key_of_node("n2"));
	ck_assert_uint_eq(agent_nvme_key_of_node("n1"), agent_nvme_key_of_node("n1"));
}
END_TEST

START_TEST(test_commands)
{
	struct agent_nvme_cmd c;

	agent_nvme_cmd_register(&c, AGENT_NVME_REPLACE, 1, 0, 0x1122334455667788ULL);
	ck_assert_uint_eq(c.opcode, 0x0d);
	ck_assert_uint_eq(c.cdw10, 2 | 8);
	ck_assert_uint_eq(c.data_len, 16);
	ck_assert_uint_eq(c.data[0], 0);
	ck_assert_uint_eq(c.data[8], 0x88); /* NRKEY little-endian at byte 8 */
	ck_assert_uint_eq(c.data[15], 0x11);

	agent_nvme_cmd_acquire(&c, AGENT_NVME_PREEMPT, 5, 0x0102030405060708ULL);
	ck_assert_uint_eq(c.opcode, 0x11);
	ck_assert_uint_eq(c.cdw10, 1 | (1 << 8)); /* preempt, Write Exclusive */
	ck_assert_uint_eq(c.data[0], 5);
	ck_assert_uint_eq(c.data[8], 0x08);

	agent_nvme_cmd_release(&c, 9);
	ck_assert_uint_eq(c.opcode, 0x15);
	ck_assert_uint_eq(c.cdw10, 1 << 8);
	ck_assert_uint_eq(c.data_len, 8);
	ck_assert_uint_eq(c.data[0], 9);

	agent_nvme_cmd_report(&c, AGENT_NVME_RESV_BUF);
	ck_assert_uint_eq(c.opcode, 0x0e);
	ck_assert_uint_eq(c.cdw10, AGENT_NVME_RESV_BUF / 4 - 1);
	ck_assert_uint_eq(c.cdw11, 1);
}
END_TEST

static void put_entry(uint8_t *buf, unsigned i, uint64_t key, int holds)
{
	uint8_t *e = buf + AGENT_NVME_RESV_HDR + i * AGENT_NVME_RESV_ENTRY;
	int b;

	e[0] = (uint8_t)(i + 1);
	e[2] = holds ? 1 : 0;
	for (b = 0; b < 8; b++)
		e[8 + b] = (uint8_t)(key >> (8 * b));
}

START_TEST(test_report)
{
	uint8_t buf[AGENT_NVME_RESV_BUF];
	struct agent_nvme_resv r;

	memset(buf, 0, sizeof(buf));
	buf[0] = 7;
	ck_assert_int_eq(agent_nvme_resv_parse(buf, sizeof(buf), &r), 0); /* nobody registered */
	ck_assert_uint_eq(r.gen, 7);
	ck_assert_uint_eq(r.nregs, 0);
	ck_assert_uint_eq(r.holder_key, 0);

	buf[4] = 1; /* Write Exclusive, held by the second of two */
	buf[5] = 2;
	put_entry(buf, 0, 0xaaaa, 0);
	put_entry(buf, 1, 0xbbbbccccddddeeeeULL, 1);
	ck_assert_int_eq(agent_nvme_resv_parse(buf, sizeof(buf), &r), 0);
	ck_assert_uint_eq(r.nregs, 2);
	ck_assert_uint_eq(r.keys[0], 0xaaaa);
	ck_assert_uint_eq(r.holder_key, 0xbbbbccccddddeeeeULL);
	r.gen = 99;
	/* the count does not fit the bytes given: refused before any entry is read */
	ck_assert_int_eq(agent_nvme_resv_parse(buf, AGENT_NVME_RESV_HDR + AGENT_NVME_RESV_ENTRY, &r), -EPROTO);
	ck_assert_uint_eq(r.gen, 99);
	ck_assert_int_eq(agent_nvme_resv_parse(buf, AGENT_NVME_RESV_HDR - 1, &r), -EPROTO);
	buf[5] = 0xff; /* past the cap */
	buf[6] = 0xff;
	ck_assert_int_eq(agent_nvme_resv_parse(buf, sizeof(buf), &r), -EPROTO);
	buf[5] = 2;
	buf[6] = 0;
	put_entry(buf, 0, 0xaaaa, 1); /* two holders of one Write Exclusive reservation */
	ck_assert_int_eq(agent_nvme_resv_parse(buf, sizeof(buf), &r), -EPROTO);
	put_entry(buf, 0, 0xaaaa, 0);
	put_entry(buf, 1, 0xbbbb, 0); /* reserved, and nobody listed holds it */
	ck_assert_int_eq(agent_nvme_resv_parse(buf, sizeof(buf), &r), -EPROTO);
	buf[4] = 5; /* Write Exclusive - All Registrants: every registrant holds it */
	put_entry(buf, 0, 0xaaaa, 1);
	put_entry(buf, 1, 0xbbbb, 1);
	ck_assert_int_eq(agent_nvme_resv_parse(buf, sizeof(buf), &r), 0);
	ck_assert_uint_eq(r.holder_key, 0);
}
END_TEST

static Suite *nvme_suite(void)
{
	Suite *s = suite_create("agent_nvme");
	TCase *tc = tcase_create("nvme");

	tcase_add_test(tc, test_spec);
	tcase_add_test(tc, test_connect);
	tcase_add_test(tc, test_address);
	tcase_add_test(tc, test_ids);
	tcase_add_test(tc, test_commands);
	tcase_add_test(tc, test_report);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return aqt_run(nvme_suite());
}
