// SPDX-License-Identifier: BSD-3-Clause
// GoogleTest main for the suites whose code needs the DPDK EAL (lib/baseline,
// the engine contract suite). No hugepages and no shared files, so the tests
// run anywhere, side by side, and under AddressSanitizer; -m gives the
// engines room. (DPDK 22.11 turns --no-huge into legacy memory mode, which
// refuses --in-memory: --no-shconf and --no-telemetry keep runs apart
// instead.)
#include <gtest/gtest.h>

#include <cstdio>

#include <rte_eal.h>
#include <rte_errno.h>

int main(int argc, char **argv)
{
	testing::InitGoogleTest(&argc, argv);
	char no_huge[] = "--no-huge";
	char no_shconf[] = "--no-shconf";
	char no_telemetry[] = "--no-telemetry";
	char no_pci[] = "--no-pci";
	char lcores[] = "-l";
	char lcore0[] = "0";
	char mem[] = "-m";
	char mem_mb[] = "256";
	char log[] = "--log-level=error";
	char *eal_argv[] = {argv[0], no_huge, no_shconf, no_telemetry, no_pci, lcores, lcore0,
			    mem,     mem_mb,  log,       nullptr};
	int eal_argc = static_cast<int>(sizeof(eal_argv) / sizeof(eal_argv[0])) - 1;

	if (rte_eal_init(eal_argc, eal_argv) < 0) {
		std::fprintf(stderr, "rte_eal_init failed: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	int rc = RUN_ALL_TESTS();
	rte_eal_cleanup();
	return rc;
}
