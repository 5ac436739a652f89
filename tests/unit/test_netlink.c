// SPDX-License-Identifier: MIT
/*
 * lib/stats/counters_nl.c: the DCB PFC and ethtool pause readers.
 *
 * The replies are written here byte by byte at explicit offsets, laid out
 * as the kernel lays them out (dcbnl_ieee_fill in net/dcb/dcbnl.c,
 * pause_fill_reply in net/ethtool/pause.c, ctrl_fill_info in
 * net/netlink/genetlink.c), with the ABI numbers spelled out and checked
 * against the UAPI headers, so that a wrong constant in the code under
 * test cannot hide behind the same constant here.  Then every truncation
 * and a set of corruptions of each reply (run the SANITIZE=1 build to see
 * that none reads out of bounds), and the running kernel on "lo" and on
 * an interface that does not exist.
 */
#include <errno.h>
#include <linux/dcbnl.h>
#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "counters_nl.h"
#include "unit.h"

/* The ABI numbers the replies below are written with. */
_Static_assert(RTM_GETDCB == 78, "RTM_GETDCB");
_Static_assert(DCB_CMD_IEEE_GET == 21, "DCB_CMD_IEEE_GET");
_Static_assert(DCB_ATTR_IFNAME == 1 && DCB_ATTR_IEEE == 13 && DCB_ATTR_DCBX == 14, "dcb attrs");
_Static_assert(DCB_ATTR_IEEE_PFC == 2 && DCB_ATTR_IEEE_APP_TABLE == 3 &&
	       DCB_ATTR_IEEE_MAXRATE == 7, "ieee attrs");
_Static_assert(sizeof(struct ieee_pfc) == 136 && offsetof(struct ieee_pfc, delay) == 4 &&
	       offsetof(struct ieee_pfc, requests) == 8 &&
	       offsetof(struct ieee_pfc, indications) == 72, "struct ieee_pfc layout");
_Static_assert(ETHTOOL_MSG_PAUSE_GET_REPLY == 22, "PAUSE_GET_REPLY");
_Static_assert(ETHTOOL_A_PAUSE_HEADER == 1 && ETHTOOL_A_PAUSE_AUTONEG == 2 &&
	       ETHTOOL_A_PAUSE_RX == 3 && ETHTOOL_A_PAUSE_TX == 4 &&
	       ETHTOOL_A_PAUSE_STATS == 5, "pause attrs");
_Static_assert(ETHTOOL_A_PAUSE_STAT_PAD == 1 && ETHTOOL_A_PAUSE_STAT_TX_FRAMES == 2 &&
	       ETHTOOL_A_PAUSE_STAT_RX_FRAMES == 3, "pause stat attrs");
_Static_assert(GENL_ID_CTRL == 16 && CTRL_CMD_NEWFAMILY == 1 && CTRL_ATTR_FAMILY_ID == 1 &&
	       CTRL_ATTR_FAMILY_NAME == 2, "genl ctrl");
_Static_assert(NLMSG_ERROR == 2 && NLA_F_NESTED == 0x8000, "netlink");

#define SEQ 0x5eed0001u
#define ETHTOOL_FAMILY 21	/* a family id the kernel could hand out */

/* --- writing bytes as the kernel does (host byte order) ------------------- */

static void w8(uint8_t *b, size_t off, uint8_t v) { b[off] = v; }
static void w16(uint8_t *b, size_t off, uint16_t v) { memcpy(b + off, &v, 2); }
static void w32(uint8_t *b, size_t off, uint32_t v) { memcpy(b + off, &v, 4); }
static void w64(uint8_t *b, size_t off, uint64_t v) { memcpy(b + off, &v, 8); }

/* struct nlmsghdr at off: len, type, flags, seq, pid. */
static void nlh(uint8_t *b, size_t off, uint32_t len, uint16_t type, uint32_t seq)
{
	w32(b, off + 0, len);
	w16(b, off + 4, type);
	w16(b, off + 6, 0);
	w32(b, off + 8, seq);
	w32(b, off + 12, 0);
}

/* struct nlattr at off: len, type. */
static void nla(uint8_t *b, size_t off, uint16_t len, uint16_t type)
{
	w16(b, off + 0, len);
	w16(b, off + 2, type);
}

/* --- the replies ----------------------------------------------------------- */

#define DCB_LEN 256
static const uint64_t dcb_req[8] = { 11, 0, 0, 3000000000ULL, 5, 0, 0, 0x0123456789abcdefULL };
static const uint64_t dcb_ind[8] = { 0, 7, 0, 42, 0, 0, 1ULL << 40, 9 };

/*
 * RTM_GETDCB / DCB_CMD_IEEE_GET for eth0, as dcbnl_ieee_fill() writes it:
 *   0   nlmsghdr len 256 type 78
 *   16  dcbmsg family 0 cmd 21 pad 0
 *   20  DCB_ATTR_IFNAME len 9 "eth0\0" (+3 pad)
 *   32  DCB_ATTR_IEEE len 216 (nla_nest_start_noflag: no NLA_F_NESTED)
 *   36    DCB_ATTR_IEEE_MAXRATE len 68 (u64 tc_maxrate[8], zero)
 *   104   DCB_ATTR_IEEE_PFC len 140: struct ieee_pfc at 108
 *         pfc_cap 108, pfc_en 109, mbc 110, delay 112, requests 116, indications 180
 *   244   DCB_ATTR_IEEE_APP_TABLE len 4 (empty)
 *   248 DCB_ATTR_DCBX len 5 u8 (+3 pad)
 */
static void dcb_reply(uint8_t *b)
{
	memset(b, 0, DCB_LEN);
	nlh(b, 0, DCB_LEN, 78, SEQ);
	w8(b, 16, 0);
	w8(b, 17, 21);
	nla(b, 20, 9, 1);
	memcpy(b + 24, "eth0", 5);
	nla(b, 32, 216, 13);
	nla(b, 36, 68, 7);
	nla(b, 104, 140, 2);
	w8(b, 108, 8);		/* pfc_cap */
	w8(b, 109, 0x08);	/* pfc_en: priority 3 */
	w8(b, 110, 0);		/* mbc */
	w16(b, 112, 1000);	/* delay */
	for (int i = 0; i < 8; i++) {
		w64(b, 116 + 8 * (size_t)i, dcb_req[i]);
		w64(b, 180 + 8 * (size_t)i, dcb_ind[i]);
	}
	nla(b, 244, 4, 3);
	nla(b, 248, 5, 14);
	w8(b, 252, 0x08);	/* DCB_CAP_DCBX_VER_IEEE */
}

#define PAUSE_LEN 108
/*
 * ETHTOOL_MSG_PAUSE_GET_REPLY with ETHTOOL_FLAG_STATS, as a 6.x kernel on
 * a machine without efficient unaligned access writes it:
 *   0   nlmsghdr len 108 type 21 (the family)
 *   16  genlmsghdr cmd 22 version 1
 *   20  ETHTOOL_A_PAUSE_HEADER|NLA_F_NESTED len 24
 *   24    ETHTOOL_A_HEADER_DEV_INDEX len 8 u32 2
 *   32    ETHTOOL_A_HEADER_DEV_NAME len 9 "eth0\0" (+3)
 *   44  AUTONEG len 5 u8 1
 *   52  RX len 5 u8 1
 *   60  TX len 5 u8 0
 *   68  ETHTOOL_A_PAUSE_STATS_SRC (6) len 8 u32 0 (not in older headers)
 *   76  ETHTOOL_A_PAUSE_STATS|NLA_F_NESTED len 32
 *   80    ETHTOOL_A_PAUSE_STAT_PAD len 4
 *   84    TX_FRAMES len 12 u64 at 88
 *   96    RX_FRAMES len 12 u64 at 100 (4-aligned: x86 puts no PAD)
 */
static void pause_reply(uint8_t *b)
{
	memset(b, 0, PAUSE_LEN);
	nlh(b, 0, PAUSE_LEN, ETHTOOL_FAMILY, SEQ);
	w8(b, 16, 22);
	w8(b, 17, 1);
	nla(b, 20, 24, 1 | 0x8000);
	nla(b, 24, 8, 1);
	w32(b, 28, 2);
	nla(b, 32, 9, 2);
	memcpy(b + 36, "eth0", 5);
	nla(b, 44, 5, 2);
	w8(b, 48, 1);
	nla(b, 52, 5, 3);
	w8(b, 56, 1);
	nla(b, 60, 5, 4);
	w8(b, 64, 0);
	nla(b, 68, 8, 6);
	w32(b, 72, 0);
	nla(b, 76, 32, 5 | 0x8000);
	nla(b, 80, 4, 1);
	nla(b, 84, 12, 2);
	w64(b, 88, 123456789012ULL);
	nla(b, 96, 12, 3);
	w64(b, 100, 0xfedcba9876543210ULL);
}

#define ERR_LEN 36
/* NLMSG_ERROR: nlmsghdr, struct nlmsgerr { int error; struct nlmsghdr msg }
 * with the request's header echoed (NETLINK_CAP_ACK: no payload). */
static void error_reply(uint8_t *b, uint32_t seq, int error)
{
	memset(b, 0, ERR_LEN);
	nlh(b, 0, ERR_LEN, 2, seq);
	w32(b, 16, (uint32_t)error);
	nlh(b, 20, 36, 78, seq);
}

#define FAMILY_LEN 108
/*
 * CTRL_CMD_NEWFAMILY for "ethtool" (ctrl_fill_info), shortened:
 *   0   nlmsghdr len 108 type 16 (GENL_ID_CTRL)
 *   16  genlmsghdr cmd 1 version 2
 *   20  CTRL_ATTR_FAMILY_NAME len 12 "ethtool\0"
 *   32  CTRL_ATTR_FAMILY_ID len 6 u16 21 (+2)
 *   40  CTRL_ATTR_VERSION len 8 u32 1
 *   48  CTRL_ATTR_HDRSIZE len 8 u32 0
 *   56  CTRL_ATTR_MAXATTR len 8 u32 10
 *   64  CTRL_ATTR_OPS len 44 (no NLA_F_NESTED)
 *   68    op 1 len 20: OP_ID len 8 u32 21, OP_FLAGS len 8 u32 0x0a
 *   88    op 2 len 20: OP_ID len 8 u32 22, OP_FLAGS len 8 u32 0x0b
 */
static void family_reply(uint8_t *b)
{
	memset(b, 0, FAMILY_LEN);
	nlh(b, 0, FAMILY_LEN, 16, SEQ);
	w8(b, 16, 1);
	w8(b, 17, 2);
	nla(b, 20, 12, 2);
	memcpy(b + 24, "ethtool", 8);
	nla(b, 32, 6, 1);
	w16(b, 36, ETHTOOL_FAMILY);
	nla(b, 40, 8, 3);
	w32(b, 44, 1);
	nla(b, 48, 8, 4);
	nla(b, 56, 8, 5);
	w32(b, 60, 10);
	nla(b, 64, 44, 6);
	nla(b, 68, 20, 1);
	nla(b, 72, 8, 1);
	w32(b, 76, 21);
	nla(b, 80, 8, 2);
	w32(b, 84, 0x0a);
	nla(b, 88, 20, 2);
	nla(b, 92, 8, 1);
	w32(b, 96, 22);
	nla(b, 100, 8, 2);
	w32(b, 104, 0x0b);
}

/* The parsers on an exactly sized heap copy, so ASan sees any overread. */
static int dcb_parse(const uint8_t *b, size_t len, struct ctr_dcb_pfc *out)
{
	uint8_t *c = malloc(len ? len : 1);
	int r, e;

	memcpy(c, b, len);
	errno = 0;
	r = ctr_parse_dcb_reply(c, len, SEQ, out);
	e = errno;
	free(c);
	errno = e;
	return r;
}

static int pause_parse(const uint8_t *b, size_t len, struct ctr_pause *out)
{
	uint8_t *c = malloc(len ? len : 1);
	int r, e;

	memcpy(c, b, len);
	errno = 0;
	r = ctr_parse_pause_reply(c, len, SEQ, out);
	e = errno;
	free(c);
	errno = e;
	return r;
}

static int family_parse(const uint8_t *b, size_t len, uint16_t *id)
{
	uint8_t *c = malloc(len ? len : 1);
	int r, e;

	memcpy(c, b, len);
	errno = 0;
	r = ctr_parse_genl_family_reply(c, len, SEQ, id);
	e = errno;
	free(c);
	errno = e;
	return r;
}

/* --- valid replies ---------------------------------------------------------- */

static void dcb_valid(struct unit *u)
{
	uint8_t b[DCB_LEN];
	struct ctr_dcb_pfc p = { 0 };

	dcb_reply(b);
	memset(&p, 0xee, sizeof(p));
	CHECK_EQ(u, dcb_parse(b, sizeof(b), &p), 0);
	CHECK_EQ(u, p.pfc_cap, 8);
	CHECK_EQ(u, p.pfc_en, 0x08);
	for (int i = 0; i < 8; i++) {
		CHECK(u, p.requests[i] == dcb_req[i]);
		CHECK(u, p.indications[i] == dcb_ind[i]);
	}
	/* The same at an odd address: nothing may be dereferenced unaligned. */
	{
		uint8_t *odd = malloc(DCB_LEN + 1);

		memcpy(odd + 1, b, DCB_LEN);
		memset(&p, 0, sizeof(p));
		CHECK_EQ(u, ctr_parse_dcb_reply(odd + 1, DCB_LEN, SEQ, &p), 0);
		CHECK(u, p.requests[7] == dcb_req[7] && p.indications[6] == dcb_ind[6]);
		free(odd);
	}
}

/* A newer kernel's longer struct ieee_pfc: accepted, the known part read. */
static void dcb_pfc_longer(struct unit *u)
{
	uint8_t b[DCB_LEN + 8];
	struct ctr_dcb_pfc p = { 0 };

	dcb_reply(b);
	/* Move APP_TABLE and DCBX 8 bytes on, grow PFC, the nest, the message. */
	memmove(b + 252, b + 244, 12);
	memset(b + 244, 0xa5, 8);
	nla(b, 104, 148, 2);
	nla(b, 32, 224, 13);
	w32(b, 0, DCB_LEN + 8);
	CHECK_EQ(u, dcb_parse(b, sizeof(b), &p), 0);
	CHECK_EQ(u, p.pfc_en, 0x08);
	CHECK(u, p.indications[7] == dcb_ind[7]);
}

static void dcb_nested_flag(struct unit *u)
{
	uint8_t b[DCB_LEN];
	struct ctr_dcb_pfc p = { 0 };

	/* NLA_F_NESTED / NLA_F_NET_BYTEORDER bits are not part of the type. */
	dcb_reply(b);
	nla(b, 32, 216, 13 | 0x8000);
	nla(b, 104, 140, 2 | 0x4000);
	CHECK_EQ(u, dcb_parse(b, sizeof(b), &p), 0);
	CHECK_EQ(u, p.pfc_en, 0x08);
}

static void pause_valid(struct unit *u)
{
	uint8_t b[PAUSE_LEN];
	struct ctr_pause p = { 0 };

	pause_reply(b);
	if (pause_parse(b, sizeof(b), &p) != 0) {
		CHECK(u, !"the pause reply parses");
		return;	/* p's bools were not written */
	}
	CHECK(u, p.autoneg && p.rx && !p.tx);
	CHECK(u, p.have_tx_frames && p.have_rx_frames);
	CHECK(u, p.tx_pause_frames == 123456789012ULL);
	CHECK(u, p.rx_pause_frames == 0xfedcba9876543210ULL);
}

static void pause_stats_absent(struct unit *u)
{
	uint8_t b[PAUSE_LEN];
	struct ctr_pause p = { 0 };

	/* No get_pause_stats: the kernel still opens the nest, empty. */
	pause_reply(b);
	nla(b, 76, 4, 5 | 0x8000);
	w32(b, 0, 80);
	CHECK_EQ(u, pause_parse(b, 80, &p), 0);
	CHECK(u, p.autoneg && p.rx && !p.tx);
	CHECK(u, !p.have_tx_frames && !p.have_rx_frames);
	CHECK(u, p.tx_pause_frames == 0 && p.rx_pause_frames == 0);

	/* A nest holding only the PAD attribute. */
	pause_reply(b);
	nla(b, 76, 8, 5 | 0x8000);
	w32(b, 0, 84);
	CHECK_EQ(u, pause_parse(b, 84, &p), 0);
	CHECK(u, !p.have_tx_frames && !p.have_rx_frames);

	/* No nest at all (no ETHTOOL_FLAG_STATS, older kernel), and no
	 * STATS_SRC either. */
	pause_reply(b);
	w32(b, 0, 68);
	CHECK_EQ(u, pause_parse(b, 68, &p), 0);
	CHECK(u, p.autoneg && p.rx && !p.tx && !p.have_tx_frames && !p.have_rx_frames);

	/* Only RX_FRAMES reported. */
	pause_reply(b);
	nla(b, 84, 12, 7);	/* an unknown newer stat in place of TX_FRAMES */
	CHECK_EQ(u, pause_parse(b, sizeof(b), &p), 0);
	CHECK(u, !p.have_tx_frames && p.have_rx_frames);
	CHECK(u, p.rx_pause_frames == 0xfedcba9876543210ULL);
}

static void error_replies(struct unit *u)
{
	uint8_t b[ERR_LEN];
	struct ctr_dcb_pfc d = { 0 };
	struct ctr_pause p = { 0 };
	uint16_t id = 0;

	memset(&d, 0x5a, sizeof(d));
	error_reply(b, SEQ, -EOPNOTSUPP);
	CHECK_EQ(u, dcb_parse(b, sizeof(b), &d), -1);
	CHECK_EQ(u, errno, EOPNOTSUPP);
	CHECK_EQ(u, d.pfc_cap, 0x5a);	/* untouched on failure */
	CHECK_EQ(u, pause_parse(b, sizeof(b), &p), -1);
	CHECK_EQ(u, errno, EOPNOTSUPP);
	error_reply(b, SEQ, -ENODEV);
	CHECK_EQ(u, dcb_parse(b, sizeof(b), &d), -1);
	CHECK_EQ(u, errno, ENODEV);
	error_reply(b, SEQ, -ENOENT);
	CHECK_EQ(u, family_parse(b, sizeof(b), &id), -1);
	CHECK_EQ(u, errno, ENOENT);
	/* An ACK (error 0) is no answer to a request without NLM_F_ACK. */
	error_reply(b, SEQ, 0);
	CHECK_EQ(u, dcb_parse(b, sizeof(b), &d), -1);
	CHECK_EQ(u, errno, EPROTO);
	/* Nonsense error values, INT_MIN included (no overflow negating it). */
	error_reply(b, SEQ, -2147483647 - 1);
	CHECK_EQ(u, dcb_parse(b, sizeof(b), &d), -1);
	CHECK_EQ(u, errno, EPROTO);
	error_reply(b, SEQ, 5);
	CHECK_EQ(u, pause_parse(b, sizeof(b), &p), -1);
	CHECK_EQ(u, errno, EPROTO);
	/* An NLMSG_ERROR too short for struct nlmsgerr. */
	error_reply(b, SEQ, -EOPNOTSUPP);
	w32(b, 0, 20);
	CHECK_EQ(u, dcb_parse(b, 20, &d), -1);
	CHECK_EQ(u, errno, EPROTO);
}

static void wrong_seq_first(struct unit *u)
{
	uint8_t b[ERR_LEN + DCB_LEN + PAUSE_LEN];
	struct ctr_dcb_pfc d = { 0 };
	struct ctr_pause p = { 0 };

	/* An error for an earlier request, then the answer. */
	error_reply(b, SEQ - 1, -ENODEV);
	dcb_reply(b + ERR_LEN);
	CHECK_EQ(u, dcb_parse(b, ERR_LEN + DCB_LEN, &d), 0);
	CHECK_EQ(u, d.pfc_en, 0x08);
	/* A stale reply of the other kind, then ours. */
	dcb_reply(b);
	w32(b, 8, SEQ + 7);
	pause_reply(b + DCB_LEN);
	CHECK_EQ(u, pause_parse(b, DCB_LEN + PAUSE_LEN, &p), 0);
	CHECK(u, p.have_rx_frames && p.rx_pause_frames == 0xfedcba9876543210ULL);
	/* Only other requests' messages: no answer here. */
	error_reply(b, SEQ + 1, -ENODEV);
	CHECK_EQ(u, dcb_parse(b, ERR_LEN, &d), -1);
	CHECK_EQ(u, errno, EPROTO);
	/* Two answers: the first counts (the second is still well framed). */
	dcb_reply(b);
	error_reply(b + DCB_LEN, SEQ, -ENODEV);
	CHECK_EQ(u, dcb_parse(b, DCB_LEN + ERR_LEN, &d), 0);
	/* An empty datagram. */
	CHECK_EQ(u, dcb_parse(b, 0, &d), -1);
	CHECK_EQ(u, errno, EPROTO);
}

static void family_valid(struct unit *u)
{
	uint8_t b[FAMILY_LEN];
	uint16_t id = 0;

	family_reply(b);
	CHECK_EQ(u, family_parse(b, sizeof(b), &id), 0);
	CHECK_EQ(u, id, ETHTOOL_FAMILY);
	/* About another family: refused. */
	memcpy(b + 24, "nl80211", 8);
	id = 0;
	CHECK_EQ(u, family_parse(b, sizeof(b), &id), -1);
	CHECK_EQ(u, errno, EPROTO);
	CHECK_EQ(u, id, 0);
	/* No FAMILY_ID. */
	family_reply(b);
	nla(b, 32, 6, 9);
	CHECK_EQ(u, family_parse(b, sizeof(b), &id), -1);
	CHECK_EQ(u, errno, EPROTO);
	/* A FAMILY_ID of one byte. */
	family_reply(b);
	nla(b, 32, 5, 1);
	CHECK_EQ(u, family_parse(b, sizeof(b), &id), -1);
	CHECK_EQ(u, errno, EPROTO);
	/* From another sender type than GENL_ID_CTRL. */
	family_reply(b);
	w16(b, 4, 17);
	CHECK_EQ(u, family_parse(b, sizeof(b), &id), -1);
	CHECK_EQ(u, errno, EPROTO);
}

/* --- hostile input ---------------------------------------------------------- */

/*
 * Every truncation of a valid reply, two ways: the datagram cut short with
 * the headers unchanged (nlmsg_len then exceeds it: always EPROTO), and
 * nlmsg_len rewritten to the cut (a consistent but short message: EPROTO
 * or, cut at an attribute boundary, a safe parse).
 */
static void truncations(struct unit *u)
{
	uint8_t d[DCB_LEN], p[PAUSE_LEN], f[FAMILY_LEN], c[DCB_LEN];
	struct ctr_dcb_pfc dp;
	struct ctr_pause pp;
	uint16_t id;
	int bad = 0, parsed = 0;

	dcb_reply(d);
	pause_reply(p);
	family_reply(f);
	for (size_t n = 0; n < DCB_LEN; n++) {
		if (dcb_parse(d, n, &dp) != -1 || errno != EPROTO)
			bad++;
		memcpy(c, d, n);
		if (n >= 4)
			w32(c, 0, (uint32_t)n);
		if (dcb_parse(c, n, &dp) == 0)
			parsed++;
		else if (errno != EPROTO)
			bad++;
	}
	/* Cut after the IEEE nest (the DCBX byte gone): the PFC is all there. */
	CHECK(u, parsed >= 1);
	for (size_t n = 0; n < PAUSE_LEN; n++) {
		if (pause_parse(p, n, &pp) != -1 || errno != EPROTO)
			bad++;
		memcpy(c, p, n);
		if (n >= 4)
			w32(c, 0, (uint32_t)n);
		if (pause_parse(c, n, &pp) != 0 && errno != EPROTO)
			bad++;
	}
	for (size_t n = 0; n < FAMILY_LEN; n++) {
		if (family_parse(f, n, &id) != -1 || errno != EPROTO)
			bad++;
		memcpy(c, f, n);
		if (n >= 4)
			w32(c, 0, (uint32_t)n);
		if (family_parse(c, n, &id) != 0 && errno != EPROTO)
			bad++;
	}
	for (size_t n = 0; n < ERR_LEN; n++) {
		uint8_t e[ERR_LEN];

		error_reply(e, SEQ, -EOPNOTSUPP);
		if (dcb_parse(e, n, &dp) != -1 || errno != EPROTO)
			bad++;
	}
	CHECK_EQ(u, bad, 0);
}

/* One corruption of a valid DCB reply: the parse must fail with EPROTO. */
static void expect_dcb_eproto(struct unit *u, const uint8_t *b, size_t len, const char *what)
{
	struct ctr_dcb_pfc p = { 0 };
	int r = dcb_parse(b, len, &p);

	if (r != -1 || errno != EPROTO) {
		u->failures++;
		printf("#   %s: got %d errno %d, want -1 EPROTO\n", what, r, errno);
	}
}

static void dcb_corruptions(struct unit *u)
{
	uint8_t b[DCB_LEN + 16];

	dcb_reply(b);
	nla(b, 20, 3, 1);
	expect_dcb_eproto(u, b, DCB_LEN, "IFNAME nla_len 3 (under the header)");
	dcb_reply(b);
	nla(b, 20, 0, 1);
	expect_dcb_eproto(u, b, DCB_LEN, "IFNAME nla_len 0");
	dcb_reply(b);
	nla(b, 248, 100, 14);
	expect_dcb_eproto(u, b, DCB_LEN, "DCBX nla_len past the message");
	dcb_reply(b);
	nla(b, 104, 148, 2);
	expect_dcb_eproto(u, b, DCB_LEN, "PFC overrunning the IEEE nest");
	dcb_reply(b);
	nla(b, 32, 100, 13);
	expect_dcb_eproto(u, b, DCB_LEN, "IEEE nest shorter than its PFC");
	dcb_reply(b);
	nla(b, 104, 139, 2);
	expect_dcb_eproto(u, b, DCB_LEN, "ieee_pfc payload 135 bytes");
	dcb_reply(b);
	nla(b, 104, 4, 2);
	expect_dcb_eproto(u, b, DCB_LEN, "ieee_pfc payload empty");
	dcb_reply(b);
	nla(b, 36, 68, 9);
	nla(b, 104, 140, 9);
	expect_dcb_eproto(u, b, DCB_LEN, "no DCB_ATTR_IEEE_PFC");
	dcb_reply(b);
	nla(b, 32, 216, 12);
	expect_dcb_eproto(u, b, DCB_LEN, "no DCB_ATTR_IEEE");
	dcb_reply(b);
	w32(b, 0, DCB_LEN + 16);
	expect_dcb_eproto(u, b, DCB_LEN, "nlmsg_len larger than the datagram");
	dcb_reply(b);
	w32(b, 0, 8);
	expect_dcb_eproto(u, b, DCB_LEN, "nlmsg_len under the header");
	dcb_reply(b);
	w32(b, 0, 18);
	expect_dcb_eproto(u, b, 18, "no room for struct dcbmsg");
	dcb_reply(b);
	w16(b, 4, 16);
	expect_dcb_eproto(u, b, DCB_LEN, "nlmsg_type RTM_NEWLINK");
	dcb_reply(b);
	w16(b, 4, 3);
	expect_dcb_eproto(u, b, DCB_LEN, "nlmsg_type NLMSG_DONE");
	dcb_reply(b);
	w8(b, 17, 0);
	expect_dcb_eproto(u, b, DCB_LEN, "dcbmsg cmd DCB_CMD_GSTATE");
	/* Trailing bytes too short for another header. */
	dcb_reply(b);
	memset(b + DCB_LEN, 0, 16);
	expect_dcb_eproto(u, b, DCB_LEN + 8, "8 stray bytes after the message");
	/* A second, corrupt message after a wrong-seq one. */
	dcb_reply(b);
	w32(b, 8, SEQ + 1);
	w32(b, 0, 240);
	expect_dcb_eproto(u, b, DCB_LEN, "garbage after a stale message");
}

static void pause_corruptions(struct unit *u)
{
	uint8_t b[PAUSE_LEN];
	struct ctr_pause p = { 0 };
	struct {
		const char *what;
		size_t off;
		uint16_t len, type;
	} cases[] = {
		{ "TX_FRAMES payload 4 bytes", 84, 8, 2 },
		{ "RX_FRAMES nla_len past the nest", 96, 20, 3 },
		{ "STATS nest past the message", 76, 40, 5 | 0x8000 },
		{ "PAD nla_len 2", 80, 2, 1 },
		{ "AUTONEG empty", 44, 4, 2 },
		{ "HEADER nest nla_len 1", 20, 1, 1 | 0x8000 },
		{ "no TX setting", 60, 5, 9 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int r;

		pause_reply(b);
		nla(b, cases[i].off, cases[i].len, cases[i].type);
		r = pause_parse(b, sizeof(b), &p);
		if (r != -1 || errno != EPROTO) {
			u->failures++;
			printf("#   %s: got %d errno %d, want -1 EPROTO\n", cases[i].what, r,
			       errno);
		}
	}
	pause_reply(b);
	w8(b, 16, 21);	/* cmd ETHTOOL_MSG_PAUSE_GET, not the reply */
	CHECK_EQ(u, pause_parse(b, sizeof(b), &p), -1);
	CHECK_EQ(u, errno, EPROTO);
	pause_reply(b);
	w32(b, 0, 18);	/* no room for the genlmsghdr */
	CHECK_EQ(u, pause_parse(b, 18, &p), -1);
	CHECK_EQ(u, errno, EPROTO);
}

/* Random byte and length mutations: each parse is 0 or -1 with an errno. */
static void mutations(struct unit *u)
{
	uint8_t orig[3][DCB_LEN], b[DCB_LEN];
	size_t lens[3] = { DCB_LEN, PAUSE_LEN, FAMILY_LEN };
	uint32_t x = 2463534242u;
	int bad = 0;

	dcb_reply(orig[0]);
	pause_reply(orig[1]);
	family_reply(orig[2]);
	for (int it = 0; it < 60000; it++) {
		int k = it % 3, flips;
		size_t len = lens[k];
		struct ctr_dcb_pfc d = { 0 };
		struct ctr_pause p = { 0 };
		uint16_t id;
		int r;

		memcpy(b, orig[k], len);
		x ^= x << 13, x ^= x >> 17, x ^= x << 5;
		flips = 1 + (int)(x % 4);
		for (int i = 0; i < flips; i++) {
			x ^= x << 13, x ^= x >> 17, x ^= x << 5;
			b[x % len] = (uint8_t)(x >> 8);
		}
		if (x & 0x10000)
			len -= (x >> 20) % len;
		r = k == 0 ? dcb_parse(b, len, &d) :
		    k == 1 ? pause_parse(b, len, &p) : family_parse(b, len, &id);
		if (r != 0 && (r != -1 || errno <= 0 || errno > 4095))
			bad++;
	}
	CHECK_EQ(u, bad, 0);
}

/* --- the running kernel ------------------------------------------------------ */

static bool have_netlink(void)
{
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

static void kernel_dcb(struct unit *u)
{
	struct ctr_dcb_pfc p = { 0 };
	char err[160] = "";
	int r, e;

	memset(&p, 0x5a, sizeof(p));
	/* lo has no dcbnl_ops: dcb_doit answers -EOPNOTSUPP (RTM_GETDCB needs
	 * no CAP_NET_ADMIN, but a kernel with an LSM may still say EPERM). */
	r = ctr_read_dcb_pfc("lo", &p, err, sizeof(err));
	e = errno;
	CHECK_EQ(u, r, -1);
	CHECK(u, e == EOPNOTSUPP || e == EPERM);
	CHECK(u, strncmp(err, "lo: DCB: ", 9) == 0);
	if (e == EOPNOTSUPP)
		CHECK_STR(u, err, "lo: DCB: Operation not supported");
	CHECK_EQ(u, p.pfc_cap, 0x5a);
	err[0] = '\0';
	CHECK_EQ(u, ctr_read_dcb_pfc("rdmakit-nx0", &p, err, sizeof(err)), -1);
	CHECK_EQ(u, errno, ENODEV);
	CHECK_STR(u, err, "rdmakit-nx0: DCB: No such device");
	CHECK_EQ(u, ctr_read_dcb_pfc("a-name-far-too-long", &p, err, sizeof(err)), -1);
	CHECK_EQ(u, errno, ENAMETOOLONG);
	CHECK(u, strstr(err, "a-name-far-too-long") != NULL);
}

static void kernel_pause(struct unit *u)
{
	struct ctr_pause p = { 0 };
	char err[160] = "";

	/* lo has no get_pauseparam: pause_prepare_data answers -EOPNOTSUPP. */
	CHECK_EQ(u, ctr_read_pause("lo", &p, err, sizeof(err)), -1);
	CHECK_EQ(u, errno, EOPNOTSUPP);
	CHECK(u, strncmp(err, "lo: pause statistics: ", 22) == 0);
	err[0] = '\0';
	CHECK_EQ(u, ctr_read_pause("rdmakit-nx0", &p, err, sizeof(err)), -1);
	CHECK_EQ(u, errno, ENODEV);
	CHECK_STR(u, err, "rdmakit-nx0: pause statistics: No such device");
	/* A NULL error buffer is allowed. */
	CHECK_EQ(u, ctr_read_pause("rdmakit-nx0", &p, NULL, 0), -1);
	CHECK_EQ(u, errno, ENODEV);
}

/*
 * One kept context, as top uses it sample after sample: the kernel's
 * refusals (no such device, not supported) leave the sockets usable, and
 * the answers stay the same; each request gets its own sequence number.
 */
static void kernel_kept_sockets(struct unit *u)
{
	struct ctr_nl *nl = ctr_nl_open();
	struct ctr_dcb_pfc d;
	struct ctr_pause p;
	char err[160];
	bool same = true;

	CHECK(u, nl != NULL);
	if (!nl)
		return;
	for (int round = 0; round < 50; round++) {
		same &= ctr_nl_dcb_pfc(nl, "lo", &d, err, sizeof(err)) == -1 && errno == EOPNOTSUPP;
		same &= ctr_nl_pause(nl, "lo", &p, err, sizeof(err)) == -1 && errno == EOPNOTSUPP;
		same &= ctr_nl_dcb_pfc(nl, "rdmakit-nx0", &d, err, sizeof(err)) == -1 &&
			errno == ENODEV;
		same &= ctr_nl_pause(nl, "rdmakit-nx0", &p, err, sizeof(err)) == -1 &&
			errno == ENODEV;
	}
	CHECK(u, same);
	CHECK_STR(u, err, "rdmakit-nx0: pause statistics: No such device");
	ctr_nl_close(nl);
	ctr_nl_close(NULL);
}

/* Every interface here: a parse or a clean error naming it. */
static void kernel_every_iface(struct unit *u)
{
	struct if_nameindex *ifs = if_nameindex();

	CHECK(u, ifs != NULL);
	for (struct if_nameindex *i = ifs; i && i->if_name; i++) {
		struct ctr_dcb_pfc d = { 0 };
		struct ctr_pause p = { 0 };
		char err[160] = "";

		if (ctr_read_dcb_pfc(i->if_name, &d, err, sizeof(err)) == 0)
			printf("# %s: PFC cap %u en 0x%02x\n", i->if_name, d.pfc_cap, d.pfc_en);
		else
			CHECK(u, strncmp(err, i->if_name, strlen(i->if_name)) == 0 &&
				 errno != EPROTO && errno != ETIMEDOUT);
		err[0] = '\0';
		if (ctr_read_pause(i->if_name, &p, err, sizeof(err)) == 0)
			printf("# %s: pause autoneg %d rx %d tx %d stats %d/%d\n", i->if_name,
			       p.autoneg, p.rx, p.tx, p.have_tx_frames, p.have_rx_frames);
		else
			CHECK(u, strncmp(err, i->if_name, strlen(i->if_name)) == 0 &&
				 errno != EPROTO && errno != ETIMEDOUT);
	}
	if (ifs)
		if_freenameindex(ifs);
}

int main(void)
{
	struct unit u = { 0 };

	RUN(&u, dcb_valid);
	RUN(&u, dcb_pfc_longer);
	RUN(&u, dcb_nested_flag);
	RUN(&u, pause_valid);
	RUN(&u, pause_stats_absent);
	RUN(&u, error_replies);
	RUN(&u, wrong_seq_first);
	RUN(&u, family_valid);
	RUN(&u, truncations);
	RUN(&u, dcb_corruptions);
	RUN(&u, pause_corruptions);
	RUN(&u, mutations);
	if (have_netlink()) {
		RUN(&u, kernel_dcb);
		RUN(&u, kernel_pause);
		RUN(&u, kernel_kept_sockets);
		RUN(&u, kernel_every_iface);
	} else {
		unit_skip(&u, "kernel_dcb", "no netlink socket here");
		unit_skip(&u, "kernel_pause", "no netlink socket here");
		unit_skip(&u, "kernel_kept_sockets", "no netlink socket here");
		unit_skip(&u, "kernel_every_iface", "no netlink socket here");
	}
	return unit_done(&u);
}
