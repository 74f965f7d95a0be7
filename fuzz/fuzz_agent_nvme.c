/* fuzz_agent_nvme: libFuzzer harness over the NVMe-oF shelf's parsers
 * (agent/agent_nvme.c, issue 24). The first byte picks one; the rest is its
 * input, given with its length (none of them may read past it): the
 * Reservation Report the target answers, the connect answer of
 * /dev/nvme-fabrics, a sysfs "address" and "nguid" file, (NUL-terminated)
 * the --shelf spec, and what fence=lease reads from a namespace another node
 * wrote (agent/agent_lease.c): the lease record, fed to a taker's and an
 * owner's state machine, and the ext4 superblock's size. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent_lease.h"
#include "agent/agent_nvme.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct agent_nvme_spec spec = { .transport = AGENT_NVME_TCP, .addr = "10.0.2.15", .port = 4420 };
	struct agent_nvme_resv r;
	aq_msg msg = { .text = "" };
	uint8_t id[16];
	char *text;
	int inst;

	if (size < 1)
		return 0;
	/* a copy of exactly size-1 bytes: ASan sees any read past it */
	if (!(text = malloc(size - 1 ? size - 1 : 1)))
		return 0;
	memcpy(text, data + 1, size - 1);
	switch (data[0] % 7) {
	case 0:
		if (agent_nvme_resv_parse((const uint8_t *)text, size - 1, &r) == 0 && r.nregs > AGENT_NVME_RESV_MAX)
			abort();
		break;
	case 1:
		(void)agent_nvme_connect_reply(text, size - 1, &inst);
		break;
	case 2:
		(void)agent_nvme_address_match(text, size - 1, &spec);
		break;
	case 3:
		(void)agent_nvme_id_parse(text, size - 1, id);
		break;
	case 5: {
		static const uint8_t vol[16] = { 'A', 'Q', 'F', 'R', 0, 1 };
		struct agent_lease_rec rec;
		struct agent_lease l;
		uint8_t out[AGENT_LEASE_REC];
		unsigned wait = 0;

		if (agent_lease_parse((const uint8_t *)text, size - 1, &rec) == 0 &&
		    (strlen(rec.name) > AGENT_LEASE_NAME_MAX || (rec.state != AGENT_LEASE_FREE && rec.state != AGENT_LEASE_HELD)))
			abort();
		agent_lease_init(&l, 0xa1, "fuzz", vol);
		(void)agent_lease_acquire_step(&l, 1000, (const uint8_t *)text, size - 1, out, &wait);
		l.phase = AGENT_LEASE_OWNED;
		l.ok = 900;
		l.gen = 3;
		if (agent_lease_renew_step(&l, 1000, (const uint8_t *)text, size - 1, out) == AGENT_LEASE_ACT_WRITE &&
		    agent_lease_parse(out, sizeof(out), &rec) != 0)
			abort(); /* what we write, we read back */
		break;
	}
	case 6:
		if (agent_lease_ext4_bytes((const uint8_t *)text, size - 1) < -4096)
			abort();
		break;
	default: {
		char *z = malloc(size);

		if (z) {
			memcpy(z, data + 1, size - 1);
			z[size - 1] = 0;
			if (agent_nvme_spec_parse(z, &spec, &msg) == AQ_OK &&
			    (strlen(spec.nqn) > AGENT_NVME_NQN_MAX || spec.port < 1 || spec.port > 65535))
				abort();
			free(z);
		}
	}
	}
	free(text);
	return 0;
}
