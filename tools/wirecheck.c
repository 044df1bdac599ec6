// SPDX-License-Identifier: GPL-2.0
/*
 * sroce-wirecheck: decode RoCEv2 packets given as hex on stdin (one packet
 * per line, starting at the BTH, i.e. the UDP payload) with the same
 * include/sroce/wire.h the module uses, and print their headers. With
 * --selftest, checks the header codec from user space and exits non-zero on
 * a mismatch; this is what proves wire.h builds and behaves outside the
 * kernel.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sroce/wire.h>

static int failures;

#define CHECK(cond) do {						\
	if (!(cond)) {							\
		fprintf(stderr, "%s:%d: check failed: %s\n",		\
			__FILE__, __LINE__, #cond);			\
		failures++;						\
	}								\
} while (0)

static int selftest(void)
{
	static const unsigned char bth_want[12] = {
		0x04, 0xf0, 0xff, 0xff, 0x00, 0x12, 0x34, 0x56,
		0x80, 0xab, 0xcd, 0xef,
	};
	struct sroce_atmeth atm;
	struct sroce_reth reth;
	struct sroce_aeth aeth;
	struct sroce_bth bth;

	CHECK(sizeof(struct sroce_bth) == 12);
	CHECK(sizeof(struct sroce_reth) == 16);
	CHECK(sizeof(struct sroce_atmeth) == 28);
	CHECK(sizeof(struct sroce_deth) == 8);

	sroce_bth_init(&bth, 0x04, 1, 3, 0xffff, 0x123456, 1, 0xabcdef);
	CHECK(!memcmp(&bth, bth_want, sizeof(bth_want)));
	CHECK(sroce_bth_qpn(&bth) == 0x123456);
	CHECK(sroce_bth_psn(&bth) == 0xabcdef);
	CHECK(sroce_bth_pad(&bth) == 3);
	CHECK(sroce_bth_se(&bth) && sroce_bth_ackreq(&bth));

	sroce_reth_init(&reth, 0x1122334455667788ULL, 0x99, 4096);
	CHECK(sroce_reth_va(&reth) == 0x1122334455667788ULL);
	CHECK(((unsigned char *)&reth)[0] == 0x11);
	CHECK(sroce_reth_len(&reth) == 4096);

	sroce_atmeth_init(&atm, 8, 7, 0xa0a0a0a0b0b0b0b0ULL, 3);
	CHECK(sroce_atmeth_swap_add(&atm) == 0xa0a0a0a0b0b0b0b0ULL);
	CHECK(((unsigned char *)&atm)[12] == 0xa0);
	CHECK(sroce_atmeth_comp(&atm) == 3);

	sroce_aeth_init(&aeth, SROCE_AETH_RNR_NAK | 14, 0x123);
	CHECK(sroce_aeth_syn(&aeth) == 0x2e);
	CHECK(sroce_aeth_msn(&aeth) == 0x123);

	CHECK(sroce_opcode_hdr_len(0x0a) == 28);
	CHECK(sroce_opcode_hdr_len(0x65) == 24);
	CHECK(sroce_opcode_hdr_len(0x15) == 0);
	CHECK(sroce_psn_cmp(0, 0xffffff) > 0);

	printf("sroce-wirecheck: self-test %s\n", failures ? "FAILED" : "ok");
	return failures ? 1 : 0;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static void decode(const unsigned char *p, size_t len)
{
	const struct sroce_bth *bth = (const void *)p;
	unsigned int hlen;

	if (len < sizeof(*bth)) {
		printf("short packet (%zu bytes)\n", len);
		return;
	}
	hlen = sroce_opcode_hdr_len(sroce_bth_opcode(bth));
	printf("opcode 0x%02x qpn 0x%06x psn %u pkey 0x%04x se %d ackreq %d pad %u",
	       sroce_bth_opcode(bth), sroce_bth_qpn(bth), sroce_bth_psn(bth),
	       sroce_bth_pkey(bth), sroce_bth_se(bth), sroce_bth_ackreq(bth),
	       sroce_bth_pad(bth));
	if (!hlen || len < hlen + SROCE_ICRC_LEN) {
		printf(" malformed\n");
		return;
	}
	printf(" hdr %u payload %zu\n", hlen,
	       len - hlen - SROCE_ICRC_LEN - sroce_bth_pad(bth));
}

int main(int argc, char **argv)
{
	unsigned char pkt[9000];
	char line[2 * sizeof(pkt) + 2];

	if (argc > 1 && !strcmp(argv[1], "--selftest"))
		return selftest();

	while (fgets(line, sizeof(line), stdin)) {
		size_t n = 0, i;

		for (i = 0; line[i] && line[i + 1] && n < sizeof(pkt); i += 2) {
			int hi = hexval(line[i]), lo = hexval(line[i + 1]);

			if (hi < 0 || lo < 0)
				break;
			pkt[n++] = (unsigned char)(hi << 4 | lo);
		}
		decode(pkt, n);
	}
	return 0;
}
