// SPDX-License-Identifier: MIT
/* libpcap sources and rotating sinks; see source.h. */
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "source.h"

#define MAX_SNAPLEN 262144

static int open_live(struct source *s, const struct source_opts *o, char *err)
{
	char perr[PCAP_ERRBUF_SIZE];
	int rc;

	s->pc = pcap_create(o->iface, perr);
	if (!s->pc) {
		snprintf(err, SOURCE_ERR_LEN, "cannot open interface '%s': %s", o->iface, perr);
		return -1;
	}
	pcap_set_snaplen(s->pc, o->snaplen > 0 ? o->snaplen : MAX_SNAPLEN);
	pcap_set_promisc(s->pc, 1);
	pcap_set_timeout(s->pc, 100);	/* wake up to notice Ctrl-C and -c */
	if (o->buffer_kib > 0)
		pcap_set_buffer_size(s->pc, o->buffer_kib * 1024);
	if (o->immediate)
		pcap_set_immediate_mode(s->pc, 1);
	s->nano = pcap_set_tstamp_precision(s->pc, PCAP_TSTAMP_PRECISION_NANO) == 0;
	rc = pcap_activate(s->pc);
	if (rc < 0) {
		const char *why = pcap_geterr(s->pc);

		if (rc == PCAP_ERROR_NO_SUCH_DEVICE)
			snprintf(err, SOURCE_ERR_LEN, "no interface '%s'; 'rdmakit capture -D' lists "
				 "them", o->iface);
		else if (rc == PCAP_ERROR_PERM_DENIED)
			snprintf(err, SOURCE_ERR_LEN, "no permission to capture on '%s': run as root "
				 "or grant CAP_NET_RAW", o->iface);
		else
			snprintf(err, SOURCE_ERR_LEN, "cannot capture on '%s': %s", o->iface, why);
		pcap_close(s->pc);
		s->pc = NULL;
		return -1;
	}
	/* Non-blocking: the capture loop waits in poll() itself, so a signal
	 * ends the wait (libpcap's own wait retries on EINTR). */
	if (pcap_setnonblock(s->pc, 1, perr) < 0) {
		snprintf(err, SOURCE_ERR_LEN, "cannot capture on '%s': %s", o->iface, perr);
		pcap_close(s->pc);
		s->pc = NULL;
		return -1;
	}
	s->live = true;
	return 0;
}

void source_wait(const struct source *s, int timeout_ms)
{
	struct pollfd p = { .fd = pcap_get_selectable_fd(s->pc), .events = POLLIN };

	if (p.fd >= 0)
		poll(&p, 1, timeout_ms);
}

static int open_file(struct source *s, const struct source_opts *o, char *err)
{
	char perr[PCAP_ERRBUF_SIZE];

	s->pc = pcap_open_offline_with_tstamp_precision(o->file, PCAP_TSTAMP_PRECISION_NANO, perr);
	if (!s->pc) {
		/* libpcap's wording names its internals; say what is wrong with the
		 * file and what to give instead. */
		if (strstr(perr, "No such file"))
			snprintf(err, SOURCE_ERR_LEN, "cannot read '%s': no such file; check the path",
				 o->file);
		else if (strstr(perr, "Is a directory"))
			snprintf(err, SOURCE_ERR_LEN, "cannot read '%s': it is a directory; give a "
				 "pcap or pcapng file", o->file);
		else if (strstr(perr, "file header bytes"))
			snprintf(err, SOURCE_ERR_LEN, "'%s' is not a pcap or pcapng capture (empty, or "
				 "cut short inside the file header)", o->file);
		else if (strstr(perr, "unknown file format") || strstr(perr, "bad dump file"))
			snprintf(err, SOURCE_ERR_LEN, "'%s' is not a pcap or pcapng capture (%s)",
				 o->file, perr);
		else
			snprintf(err, SOURCE_ERR_LEN, "cannot read '%s': %s", o->file, perr);
		return -1;
	}
	s->nano = true;
	return 0;
}

int source_open(struct source *s, const struct source_opts *o, char *err)
{
	memset(s, 0, sizeof(*s));
	if ((o->iface ? open_live(s, o, err) : open_file(s, o, err)) < 0)
		return -1;
	s->dlt = pcap_datalink(s->pc);
	if (!o->filter)
		return 0;
	if (pcap_compile(s->pc, &s->prog, o->filter, 1, PCAP_NETMASK_UNKNOWN) < 0) {
		snprintf(err, SOURCE_ERR_LEN, "invalid filter '%s': %s", o->filter,
			 pcap_geterr(s->pc));
		source_close(s);
		return -1;
	}
	s->have_prog = true;
	if (!s->live) {
		/* Keep every record flowing so frame numbers match tshark's. */
		s->filter_per_record = true;
		return 0;
	}
	if (pcap_setfilter(s->pc, &s->prog) < 0) {
		snprintf(err, SOURCE_ERR_LEN, "cannot set filter '%s': %s", o->filter,
			 pcap_geterr(s->pc));
		source_close(s);
		return -1;
	}
	return 0;
}

int source_stats(const struct source *s, uint64_t *received, uint64_t *dropped,
		 uint64_t *if_dropped)
{
	struct pcap_stat st;

	if (!s->live || pcap_stats(s->pc, &st) < 0)
		return -1;
	*received = st.ps_recv;
	*dropped = st.ps_drop;
	*if_dropped = st.ps_ifdrop;
	return 0;
}

void source_close(struct source *s)
{
	if (s->have_prog)
		pcap_freecode(&s->prog);
	if (s->pc)
		pcap_close(s->pc);
	memset(s, 0, sizeof(*s));
}

bool source_match(const struct source *s, const struct pcap_pkthdr *h, const uint8_t *data)
{
	return !s->filter_per_record || pcap_offline_filter(&s->prog, h, data);
}

uint64_t source_ts_ns(const struct source *s, const struct pcap_pkthdr *h)
{
	uint64_t frac = (uint64_t)h->ts.tv_usec * (s->nano ? 1 : 1000);

	return (uint64_t)h->ts.tv_sec * 1000000000u + frac;
}

/* tcpdump's names: FILE, FILE1, FILE2... ; with a ring, FILE0..FILEn-1 padded. */
static void sink_name(struct sink *k)
{
	int width = 1;

	/* A ring of one file is just the file, as tcpdump names it. */
	if ((!k->rotate_bytes && !k->ring) || k->ring == 1) {
		snprintf(k->path, sizeof(k->path), "%s", k->base);
		return;
	}
	for (unsigned n = k->ring ? k->ring - 1 : 0; n >= 10; n /= 10)
		width++;
	if (k->ring)
		snprintf(k->path, sizeof(k->path), "%s%0*u", k->base, width, k->index);
	else if (k->index == 0)
		snprintf(k->path, sizeof(k->path), "%s", k->base);
	else
		snprintf(k->path, sizeof(k->path), "%s%u", k->base, k->index);
}

static int sink_start(struct sink *k, char *err)
{
	sink_name(k);
	k->d = strcmp(k->path, "-") == 0 ? pcap_dump_fopen(k->pc, stdout)
					 : pcap_dump_open(k->pc, k->path);
	if (!k->d) {
		/* pcap_geterr repeats the path; errno alone says why. */
		snprintf(err, SOURCE_ERR_LEN, "cannot write '%.400s': %s; check the -w path",
			 k->path, strerror(errno));
		return -1;
	}
	return 0;
}

int sink_open(struct sink *k, pcap_t *pc, const char *file, uint64_t rotate_bytes,
	      unsigned ring, bool flush_each, char *err)
{
	memset(k, 0, sizeof(*k));
	k->pc = pc;
	k->base = file;
	k->rotate_bytes = rotate_bytes;
	k->ring = ring;
	k->flush_each = flush_each;
	return sink_start(k, err);
}

int sink_write(struct sink *k, const struct pcap_pkthdr *h, const uint8_t *data, char *err)
{
	if (k->rotate_bytes && pcap_dump_ftell64(k->d) + (int64_t)h->caplen + 16 >
			       (int64_t)k->rotate_bytes && pcap_dump_ftell64(k->d) > 24) {
		pcap_dump_close(k->d);
		k->d = NULL;
		k->index = k->ring ? (k->index + 1) % k->ring : k->index + 1;
		if (sink_start(k, err) < 0)
			return -1;
	}
	pcap_dump((u_char *)k->d, h, data);
	if (k->flush_each && pcap_dump_flush(k->d) < 0) {
		snprintf(err, SOURCE_ERR_LEN, "cannot write '%.400s': %s", k->path, strerror(errno));
		return -1;
	}
	return 0;
}

void sink_close(struct sink *k)
{
	if (k->d)
		pcap_dump_close(k->d);
	k->d = NULL;
}

bool source_iface_rdma_dev(const char *iface, char *dev, size_t cap)
{
	char path[512];
	struct dirent *e;
	DIR *d;

	/* /sys/class/net/IFACE/device/infiniband/ lists the RDMA device(s)
	 * of a PCI function whose netdev this is. */
	snprintf(path, sizeof(path), "/sys/class/net/%s/device/infiniband", iface);
	d = opendir(path);
	if (!d)
		return false;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(dev, cap, "%s", e->d_name);
		closedir(d);
		return true;
	}
	closedir(d);
	return false;
}
