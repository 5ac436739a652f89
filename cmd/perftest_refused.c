// SPDX-License-Identifier: MIT
/*
 * perftest's options (6.29's long_options) that rdmakit bw and lat do not
 * have, each with the reason: a script moved over from perftest is told
 * in one line, never silently ignored.  docs/perftest.md is the table for
 * people; this is the one for the parser.
 */
#include <stdbool.h>
#include <string.h>

#include "perf_cli.h"

#define RAW_ETH "raw Ethernet tests (ib_raw_*) are not part of rdmakit"
#define DEVMEM "rdmakit registers host memory only (no GPU or device memory)"
#define MLX5 "an mlx5 (DevX) feature rdmakit does not drive"
#define NOT_YET "not implemented in rdmakit yet"

static const struct {
	char short_name;	/* 0: none */
	const char *long_name;	/* NULL: none */
	const char *why;
} refused[] = {
	{ 'e', "events", "rdmakit polls its completion queues (no completion events)" },
	{ 'X', "vector", "rdmakit polls its completion queues (no completion events)" },
	{ 'g', "mcg", "multicast needs UD, which rdmakit does not run yet" },
	{ 'M', "MGID", "multicast needs UD, which rdmakit does not run yet" },
	{ 'z', "comm_rdma_cm", "the control exchange is TCP here; -R/--rdma-cm connects the QPs" },
	{ 'L', "hop_limit", NOT_YET },
	{ 'V', "version", "use 'rdmakit version'" },
	{ 'C', "report-cycles", "rdmakit times in nanoseconds, not CPU cycles" },
	{ 'H', "report-histogrm", "bw: it is lat's" },
	{ 0, "report-histogram", "bw: it is lat's" },
	{ 'U', "report-unsorted", "bw: it is lat's" },
	{ 'O', "dualport", "no dual-port tests" },
	{ 'f', "margin", NOT_YET " (-D runs for exactly its duration)" },
	{ 'W', "report-counters", "lat: " NOT_YET "; bw -W reports them" },
	{ 'S', "sl", NOT_YET " (RoCEv2 carries priority in -T/--tclass)" },
	{ 'B', "source_mac", RAW_ETH }, { 'E', "dest_mac", RAW_ETH }, { 'J', "dest_ip", RAW_ETH },
	{ 'j', "source_ip", RAW_ETH }, { 'K', "dest_port", RAW_ETH }, { 'k', "source_port", RAW_ETH },
	{ 'Y', "ethertype", RAW_ETH }, { 'Z', "server", RAW_ETH }, { 'P', "client", RAW_ETH },
	{ 'v', "mac_fwd", RAW_ETH }, { 'G', "use_rss", RAW_ETH },
	{ 0, "force-link", "the link layer is the device's (verbs) or Ethernet (soft)" },
	{ 0, "remote_mac", RAW_ETH }, { 0, "local_mac", RAW_ETH }, { 0, "remote_ip", RAW_ETH },
	{ 0, "local_ip", RAW_ETH }, { 0, "remote_port", RAW_ETH }, { 0, "local_port", RAW_ETH },
	{ 0, "raw_ipv6", RAW_ETH }, { 0, "promiscuous", RAW_ETH }, { 0, "sniffer", RAW_ETH },
	{ 0, "raw_mcast", RAW_ETH }, { 0, "vlan_en", RAW_ETH }, { 0, "vlan_pcp", RAW_ETH },
	{ 0, "tcp", RAW_ETH }, { 0, "typical_pkt_size", NOT_YET " (the PP rate limiter's packet size)" }, { 0, "flows", RAW_ETH },
	{ 0, "flows_burst", RAW_ETH }, { 0, "reply_every", RAW_ETH },
	{ 0, "run_infinitely", NOT_YET "; -D SECONDS with --interval reports as it goes" },
	{ 0, "use-srq", NOT_YET " (each QP has its own receive queue)" },
	{ 0, "no_lock", "rdmakit's engines take no locks on the data path" },
	{ 0, "use-null-mr", NOT_YET },
	{ 0, "report-both", "-b rows already show both directions and their sum" },
	{ 0, "reversed", NOT_YET "; swap the roles instead (run the client on the other host)" },
	{ 0, "pkey_index", NOT_YET " (P_Key index 0)" },
	{ 0, "burst_size", NOT_YET "; --rate_limit paces in software" },
	{ 0, "dont_xchg_versions", "perftest itself exits with it; rdmakit always exchanges versions" },
	{ 0, "payload_file_path", NOT_YET "; the payload is a fixed pattern (--verify checks it)" },
	{ 0, "use_cuda", DEVMEM }, { 0, "use_cuda_bus_id", DEVMEM }, { 0, "use_cuda_dmabuf", DEVMEM },
	{ 0, "use_cuda_pcie_mapping", DEVMEM }, { 0, "use_data_direct", DEVMEM },
	{ 0, "cuda_mem_type", DEVMEM }, { 0, "use_musa", DEVMEM }, { 0, "use_musa_bus_id", DEVMEM },
	{ 0, "use_musa_dmabuf", DEVMEM }, { 0, "use_musa_pcie_mapping", DEVMEM },
	{ 0, "use_rocm", DEVMEM }, { 0, "use_rocm_dmabuf", DEVMEM }, { 0, "use_neuron", DEVMEM },
	{ 0, "use_neuron_dmabuf", DEVMEM }, { 0, "use_hl", DEVMEM }, { 0, "use_mlu", DEVMEM },
	{ 0, "use_mlu_dmabuf", DEVMEM }, { 0, "use_opencl", DEVMEM },
	{ 0, "opencl_platform_id", DEVMEM }, { 0, "use_ib_dm_dmabuf", DEVMEM },
	{ 0, "gpu_touch", DEVMEM }, { 0, "mmap", NOT_YET " (a file mapped as the buffer)" },
	{ 0, "mmap-offset", NOT_YET " (a file mapped as the buffer)" },
	{ 0, "ipv6", NOT_YET "; -x picks an IPv6 GID (verbs), --bind an IPv6 address (soft)" },
	{ 0, "ipv6-addr", NOT_YET "; HOST may be an IPv6 address" },
	{ 0, "report-per-port", "no dual-port tests" },
	{ 0, "odp", NOT_YET " (on-demand paging)" },
	{ 0, "use_hugepages", NOT_YET },
	{ 0, "use_old_post_send", "rdmakit posts with ibv_post_send (verbs)" },
	{ 0, "mr_per_qp", NOT_YET " (one memory region for all QPs, as perftest's default)" },
	{ 0, "dlid", NOT_YET " (the destination comes from the peer's GID or LID)" },
	{ 0, "wait_destroy", NOT_YET },
	{ 0, "perform_warm_up", NOT_YET },
	{ 0, "recv_post_list", NOT_YET },
	{ 0, "aes_xts", MLX5 }, { 0, "encrypt_on_tx", MLX5 }, { 0, "sig_before", MLX5 },
	{ 0, "aes_block_size", MLX5 }, { 0, "kek_path", MLX5 }, { 0, "credentials_path", MLX5 },
	{ 0, "data_enc_keys_number", MLX5 }, { 0, "data_enc_key_app_path", MLX5 },
	{ 0, "log_dci_streams", "DC is not a transport rdmakit runs" },
	{ 0, "log_active_dci_streams", "DC is not a transport rdmakit runs" },
	{ 0, "disable_pcie_relaxed", NOT_YET " (memory is registered without relaxed ordering)" },
	{ 0, "use_ooo", MLX5 }, { 0, "no_enhanced_reorder", MLX5 },
	{ 0, "congest_type", NOT_YET },
	{ 0, "write_with_imm", NOT_YET }, { 0, "send_with_imm", NOT_YET },
	{ 0, "unsolicited_write", NOT_YET }, { 0, "connectionless", "one UD QP to many peers: not yet (-c UD runs one to one)" },
	{ 0, "cqe_poll", "rdmakit polls up to 64 completions at once" },
	{ 0, "tph_mem", NOT_YET }, { 0, "cpu_id", NOT_YET " (the target CPU of PCIe TPH hints)" },
	{ 0, "ph", NOT_YET }, { 0, "disable_dynamic_polling", "rdmakit's polling is not dynamic" },
	{ 0, "sig_offload", MLX5 },
	{ 0, "data_validation", "use --verify (rdmakit on both sides)" },
	{ 0, "data_validation_debug", "use --verify (rdmakit on both sides)" },
	{ 0, "pin_cores", "pin the process with taskset" },
	{ 0, "numa_node", "bind the process with numactl" },
	{ 0, "disable_numa", "rdmakit allocates where the process runs (bind it with numactl)" },
	{ 0, "flow_label", NOT_YET },
};

const char *perftest_refused(const char *word)
{
	bool is_long = word[0] == '-' && word[1] == '-';
	const char *name = word + (is_long ? 2 : 1);
	size_t len = strcspn(name, "=");

	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		if (is_long ? refused[i].long_name && strlen(refused[i].long_name) == len &&
				      !strncmp(refused[i].long_name, name, len) :
			      refused[i].short_name && refused[i].short_name == name[0])
			return refused[i].why;
	}
	return NULL;
}
