/* SPDX-License-Identifier: MIT */
/*
 * perftest's exchange, message by message (lib/perf/pt_wire.c), against
 * byte sequences laid out from ../shared/reference/perftest-oob.md: the
 * version, the MTU digit, the 108- and 59-byte keys, the report fields
 * and the 6.28+ negotiation struct; and what each parser refuses.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "pt_wire.h"
#include "transport.h"
#include "unit.h"

static void test_version(struct unit *u)
{
	uint8_t b[PT_VERSION_LEN] = "6.06";
	char text[PT_VERSION_LEN], err[XPORT_ERR_LEN];
	double v = 0;

	CHECK_EQ(u, pt_version_parse(b, &v, text, err), 0);
	CHECK_STR(u, text, "6.06");
	CHECK(u, fabs(v - 6.06) < 1e-9);
	/* rdmakit's marker in the padding does not change what perftest reads. */
	memcpy(b + 8, "RDMK", 4);
	CHECK_EQ(u, pt_version_parse(b, &v, text, err), 0);
	CHECK_STR(u, text, "6.06");
	/* Not NUL-terminated within 16 bytes, empty, or not a number. */
	memset(b, '6', sizeof(b));
	CHECK_EQ(u, pt_version_parse(b, &v, text, err), -1);
	memset(b, 0, sizeof(b));
	CHECK_EQ(u, pt_version_parse(b, &v, text, err), -1);
	memcpy(b, "SSH-2.0", 8);
	CHECK_EQ(u, pt_version_parse(b, &v, text, err), -1);
	memcpy(b, "6..1\0", 5);
	CHECK_EQ(u, pt_version_parse(b, &v, text, err), -1);
	/* What may be announced: a number perftest accepts (>= 5.70). */
	CHECK_EQ(u, pt_version_build("6.29", b, err), 0);
	CHECK(u, !memcmp(b, "6.29\0\0\0\0\0\0\0\0\0\0\0\0", 16));
	CHECK_EQ(u, pt_version_build("5.6", b, err), -1);
	CHECK_HAS(u, err, "perftest refuses peers older than 5.70");
	CHECK_EQ(u, pt_version_build("6.06x", b, err), -1);
	CHECK_EQ(u, pt_version_build("123456789012345678", b, err), -1);
}

static void test_mtu(struct unit *u)
{
	uint8_t b[2];

	pt_mtu_build(1024, b);
	CHECK(u, b[0] == '3' && b[1] == 0);
	pt_mtu_build(4096, b);
	CHECK(u, b[0] == '5' && b[1] == 0);
	CHECK_EQ(u, pt_mtu_parse((const uint8_t *)"1"), 256);
	CHECK_EQ(u, pt_mtu_parse((const uint8_t *)"5"), 4096);
	/* perftest keeps its own on anything else: so do we (0). */
	CHECK_EQ(u, pt_mtu_parse((const uint8_t *)"6"), 0);
	CHECK_EQ(u, pt_mtu_parse((const uint8_t *)"0"), 0);
	CHECK_EQ(u, pt_mtu_parse((const uint8_t *)"33"), 0);
	CHECK_EQ(u, pt_mtu_enum(2048), 4);
	CHECK_EQ(u, pt_mtu_enum(1500), 0);
}

/* The reference's example key (§8), byte for byte. */
static const char example_gid_key[] =
	"0000:0001:000123:a1b2c3:00012345:00007f1234567000:00:00:00:00:00:00:00:00:00:00:ff:ff:"
	"c0:a8:01:0a:00000000:";

static void test_key_gid(struct unit *u)
{
	struct pt_key k = { .lid = 0, .out_reads = 1, .qpn = 0x123, .psn = 0xa1b2c3,
			    .rkey = 0x12345, .vaddr = 0x7f1234567000ULL, .srqn = 0 };
	static const uint8_t gid[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 168, 1, 10 };
	char out[PT_KEY_LEN_GID + 8], err[XPORT_ERR_LEN], bad[PT_KEY_LEN_GID];
	struct pt_key back;

	memcpy(k.gid, gid, 16);
	memset(out, 'x', sizeof(out));
	CHECK_EQ(u, sizeof(example_gid_key), PT_KEY_LEN_GID);
	CHECK_EQ(u, pt_key_build(&k, true, out), PT_KEY_LEN_GID);
	CHECK(u, !memcmp(out, example_gid_key, PT_KEY_LEN_GID));
	CHECK(u, out[PT_KEY_LEN_GID] == 'x');	/* nothing past the message */
	CHECK_EQ(u, pt_key_parse(example_gid_key, PT_KEY_LEN_GID, true, &back, err), 0);
	CHECK(u, !memcmp(&back, &k, sizeof(k)));
	CHECK(u, pt_gid_v4mapped(back.gid));
	/* Uppercase hex parses as perftest's strtol would. */
	memcpy(bad, example_gid_key, PT_KEY_LEN_GID);
	bad[19] = 'B';
	CHECK_EQ(u, pt_key_parse(bad, PT_KEY_LEN_GID, true, &back, err), 0);
	CHECK_EQ(u, back.psn, 0xa1b2c3);
	/* Malformed: no trailing colon, a missing NUL, a non-hex digit, short. */
	memcpy(bad, example_gid_key, PT_KEY_LEN_GID);
	bad[PT_KEY_LEN_GID - 2] = '0';
	CHECK_EQ(u, pt_key_parse(bad, PT_KEY_LEN_GID, true, &back, err), -1);
	CHECK_HAS(u, err, "not perftest's GID format");
	memcpy(bad, example_gid_key, PT_KEY_LEN_GID);
	bad[PT_KEY_LEN_GID - 1] = ':';
	CHECK_EQ(u, pt_key_parse(bad, PT_KEY_LEN_GID, true, &back, err), -1);
	memcpy(bad, example_gid_key, PT_KEY_LEN_GID);
	bad[3] = 'g';
	CHECK_EQ(u, pt_key_parse(bad, PT_KEY_LEN_GID, true, &back, err), -1);
	CHECK_EQ(u, pt_key_parse(example_gid_key, PT_KEY_LEN_GID - 1, true, &back, err), -1);
	/* A 6.28+ struct where a key was expected (26.01.5 against an old peer). */
	memset(bad, 0, sizeof(bad));
	bad[3] = 1;
	CHECK_EQ(u, pt_key_parse(bad, PT_KEY_LEN_GID, true, &back, err), -1);
}

static void test_key_lid(struct unit *u)
{
	struct pt_key k = { .lid = 0x1a, .out_reads = 16, .qpn = 0xffffff, .psn = 0x1,
			    .rkey = 0xdeadbeef, .vaddr = 0xffffffffffffffffULL, .srqn = 7 };
	char out[PT_KEY_LEN], err[XPORT_ERR_LEN];
	struct pt_key back;

	CHECK_EQ(u, pt_key_build(&k, false, out), PT_KEY_LEN);
	CHECK_STR(u, out, "001a:0010:ffffff:000001:deadbeef:ffffffffffffffff:00000007");
	CHECK_EQ(u, pt_key_parse(out, PT_KEY_LEN, false, &back, err), 0);
	CHECK(u, !memcmp(&back, &k, sizeof(k)));
	/* The GID parser refuses the LID format and the other way round. */
	CHECK_EQ(u, pt_key_parse(out, PT_KEY_LEN, true, &back, err), -1);
	CHECK_EQ(u, pt_key_parse(example_gid_key, PT_KEY_LEN_GID, false, &back, err), -1);
}

static void test_report(struct unit *u)
{
	struct pt_report r = { .size = 65536, .iters = 5000, .bw_peak = 1.0, .bw_avg = -2.0,
			       .msg_rate = 0.5 }, back = { 0 };
	static const uint8_t want[5][8] = {
		{ 0, 0, 0, 0, 0, 1, 0, 0 },
		{ 0, 0, 0, 0, 0, 0, 0x13, 0x88 },
		{ 0x3f, 0xf0, 0, 0, 0, 0, 0, 0 },	/* 1.0, byte-swapped */
		{ 0xc0, 0, 0, 0, 0, 0, 0, 0 },		/* -2.0 */
		{ 0x3f, 0xe0, 0, 0, 0, 0, 0, 0 },	/* 0.5 */
	};

	for (unsigned i = 0; i < PT_REPORT_FIELDS; i++) {
		uint8_t b[8];

		pt_report_field(&r, i, b);
		CHECK(u, !memcmp(b, want[i], 8));
		pt_report_set(&back, i, b);
	}
	CHECK(u, !memcmp(&back, &r, sizeof(r)));
}

static void test_negotiate(struct unit *u)
{
	struct pt_negotiate n = {
		.test_method = 1, .connection_type = 0, .verb = PT_VERB_WRITE, .tst = PT_TST_BW,
		.atomic_type = 0, .test_type = 0, .report_fmt = 1, .size = 8388608, .iters = 20,
		.num_of_qps = 2, .duration = 5, .max_qp_rd_atom = 128, .vendor_id = 0x02c9,
	}, back, other;
	uint8_t b[PT_NEGOTIATE_LEN_DV + 4];
	char why[128];

	memset(b, 0xee, sizeof(b));
	pt_negotiate_build(&n, PT_NEGOTIATE_LEN_DV, b);
	/* §7's offsets: BE scalars, the padding at 28 zero, size at 32, QPs at 52. */
	CHECK(u, !memcmp(b, "\0\0\0\1\0\0\0\0\0\0\0\2\0\0\0\1", 16));
	CHECK(u, !memcmp(b + 24, "\0\0\0\1\0\0\0\0", 8));
	CHECK(u, !memcmp(b + 32, "\0\0\0\0\0\x80\0\0", 8));
	CHECK(u, !memcmp(b + 40, "\0\0\0\0\0\0\0\x14", 8));
	CHECK(u, !memcmp(b + 52, "\0\0\0\2\0\0\0\5", 8));
	/* The device attributes go raw, little-endian: vendor_id at 176,
	 * max_qp_rd_atom at 224; the mlx5dv mask (312..319) zero. */
	CHECK(u, !memcmp(b + 176, "\xc9\x02\0\0", 4));
	CHECK(u, !memcmp(b + 224, "\x80\0\0\0", 4));
	CHECK(u, !memcmp(b + 312, "\0\0\0\0\0\0\0\0", 8));
	CHECK(u, b[PT_NEGOTIATE_LEN_DV] == 0xee);
	pt_negotiate_parse(b, &back);
	CHECK(u, !memcmp(&back, &n, sizeof(n)));
	CHECK(u, pt_negotiate_mismatch(&n, &back, why, sizeof(why)) == NULL);
	other = n;
	other.size = 65536;
	CHECK_STR(u, pt_negotiate_mismatch(&n, &other, why, sizeof(why)), "size");
	CHECK_HAS(u, why, "size: this side 8388608, the peer 65536");
	other = n;
	other.num_of_qps = 1;
	CHECK_STR(u, pt_negotiate_mismatch(&n, &other, why, sizeof(why)), "num_of_qps");
	/* The device limits are not compared (perftest adopts them). */
	other = n;
	other.max_qp_rd_atom = 16;
	CHECK(u, pt_negotiate_mismatch(&n, &other, why, sizeof(why)) == NULL);
	/* 312 bytes: the same, with no mask. */
	memset(b, 0xee, sizeof(b));
	pt_negotiate_build(&n, PT_NEGOTIATE_LEN, b);
	CHECK(u, b[PT_NEGOTIATE_LEN] == 0xee);
}

int main(void)
{
	struct unit u = { 0 };

	RUN(&u, test_version);
	RUN(&u, test_mtu);
	RUN(&u, test_key_gid);
	RUN(&u, test_key_lid);
	RUN(&u, test_report);
	RUN(&u, test_negotiate);
	return unit_done(&u);
}
