/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Command line of segcached-storage-bench: one table of options, each
 * checked here so that a run never starts with a configuration it cannot
 * honour.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "keys.h"
#include "shapes.h"

#define SB_DEFAULT_KEYS 1000000ULL
#define SB_DEFAULT_OPS 10000000ULL
#define SB_DEFAULT_DURATION_LIMIT 300.0
#define SB_DEFAULT_MEMORY (1ULL << 30)
#define SB_DEFAULT_FILL_MEMORY (64ULL << 20)
#define SB_DEFAULT_FILL_MAX_KEYS 100000000ULL
#define SB_THREADS_MAX 256
#define SB_VALUE_MAX (64U << 20)

enum {
	OPT_KEY_SIZE = 256,
	OPT_KEY_FORMAT,
	OPT_MIX,
	OPT_DIST,
	OPT_EVICTION,
	OPT_SEGMENT_SIZE,
	OPT_HASH_POWER,
	OPT_ITEM_MAX,
	OPT_NO_CAS,
	OPT_MRC,
	OPT_FILL,
	OPT_FILL_MAX_KEYS,
	OPT_JSON,
	OPT_NO_PIN,
	OPT_SEED,
	OPT_BATCH,
	OPT_LIST_ENGINES,
	OPT_SHAPE,
	OPT_TTL,
	OPT_LIST_SHAPES,
};

static const struct option long_options[] = {
	{"engine", required_argument, NULL, 'e'},
	{"threads", required_argument, NULL, 't'},
	{"keys", required_argument, NULL, 'k'},
	{"key-size", required_argument, NULL, OPT_KEY_SIZE},
	{"key-format", required_argument, NULL, OPT_KEY_FORMAT},
	{"value-size", required_argument, NULL, 'v'},
	{"mix", required_argument, NULL, OPT_MIX},
	{"dist", required_argument, NULL, OPT_DIST},
	{"ops", required_argument, NULL, 'n'},
	{"duration", required_argument, NULL, 'd'},
	{"repeat", required_argument, NULL, 'r'},
	{"memory", required_argument, NULL, 'm'},
	{"eviction", required_argument, NULL, OPT_EVICTION},
	{"segment-size", required_argument, NULL, OPT_SEGMENT_SIZE},
	{"hash-power", required_argument, NULL, OPT_HASH_POWER},
	{"item-max", required_argument, NULL, OPT_ITEM_MAX},
	{"no-cas", no_argument, NULL, OPT_NO_CAS},
	{"mrc", no_argument, NULL, OPT_MRC},
	{"fill", no_argument, NULL, OPT_FILL},
	{"fill-max-keys", required_argument, NULL, OPT_FILL_MAX_KEYS},
	{"json", no_argument, NULL, OPT_JSON},
	{"no-pin", no_argument, NULL, OPT_NO_PIN},
	{"seed", required_argument, NULL, OPT_SEED},
	{"batch", required_argument, NULL, OPT_BATCH},
	{"list-engines", no_argument, NULL, OPT_LIST_ENGINES},
	{"shape", required_argument, NULL, OPT_SHAPE},
	{"ttl", required_argument, NULL, OPT_TTL},
	{"list-shapes", no_argument, NULL, OPT_LIST_SHAPES},
	{"help", no_argument, NULL, 'h'},
	{NULL, 0, NULL, 0},
};

void
sb_usage(FILE *f)
{
	fprintf(f,
"usage: segcached-storage-bench [EAL options --] [options]\n"
"\n"
"Runs a workload against a storage engine through lib/engine/engine.h, no\n"
"network: every key is loaded first (warm-up), then N threads run the\n"
"timed operations. With --fill, stores keys 1, 2, 3, ... until the first\n"
"eviction and counts what is resident.\n"
"\n"
"engine and memory\n"
"  -e, --engine seg|baseline|both  engine(s) to measure; both runs them back to\n"
"                                  back and prints ratios seg/baseline (both)\n"
"  -m, --memory SIZE               total memory budget, K/M/G suffixes (1G; 64M\n"
"                                  with --fill)\n"
"      --eviction POLICY           a policy of the list below (engine default)\n"
"      --segment-size SIZE         lib/seg segment size (engine default, 1M)\n"
"      --hash-power N              log2 of hash buckets (sized from memory)\n"
"      --item-max SIZE             largest item (engine default, 1M)\n"
"      --no-cas                    disable cas uniques (memcached -C)\n"
"      --mrc                       seg: attach the live miss-ratio curve, as the\n"
"                                  server does (1%% of -m; its cost, issue 23)\n"
"workload\n"
"  -t, --threads N                 worker threads, each with its own\n"
"                                  engine_worker, pinned to a CPU (1)\n"
"  -k, --keys N                    distinct keys, ids 1..N (1000000)\n"
"      --key-format padded|plain   zero-padded to --key-size, or plain decimal\n"
"                                  (padded; plain with --fill)\n"
"      --key-size N                width of padded keys in bytes (16)\n"
"  -v, --value-size N|MIN-MAX      fixed, or uniform in MIN..MAX bytes (64)\n"
"      --mix GET:SET:DELETE        percentages of operations (90:10:0)\n"
"      --dist uniform|zipf[:THETA] key popularity (zipf:0.99)\n"
"  -n, --ops N                     timed operations, all threads (10000000)\n"
"  -d, --duration SEC              time limit of the timed phase or the fill\n"
"                                  (300; with --duration alone, no op limit)\n"
"  -r, --repeat N                  rounds; with both engines the order\n"
"                                  alternates and the median ratio is given (1)\n"
"      --batch N                   consecutive gets go to the engine N at a\n"
"                                  time (engine_get_batch); 1: engine_get (1)\n"
"      --shape NAME                a production-like shape (--list-shapes): its\n"
"                                  mix, each key's value size and TTL class\n"
"                                  (--mix given after it overrides the mix)\n"
"      --ttl SEC                   every set expires after SEC seconds (none)\n"
"      --seed N                    random seed (1)\n"
"      --no-pin                    do not pin threads to CPUs\n"
"fill mode\n"
"      --fill                      fill until the first eviction (single thread)\n"
"      --fill-max-keys N           stop after N keys at most (100000000)\n"
"output\n"
"      --json                      one JSON document on stdout\n"
"      --list-engines              print the engines this build has, and exit\n"
"      --list-shapes               print the shapes of --shape, and exit\n"
"  -h, --help\n"
"\n"
"EAL: the baseline engine needs DPDK's EAL. Without \"--\" it starts with\n"
"  --no-huge --no-shconf --no-pci --no-telemetry -l <first CPU> -m <budget+>\n"
"  --log-level=error\n"
"(--no-shconf, not --in-memory, which DPDK 22.11 refuses with --no-huge)\n"
"and the bench threads register as non-EAL threads. Arguments before \"--\"\n"
"replace those defaults entirely.\n"
"\n"
"The main thread is the server's control thread while the timed phase runs:\n"
"it calls the engine's expiry (proactive expiration, reclaim ahead) once a\n"
"second, as segcached does.\n"
"\n"
"example: segcached-storage-bench --engine both -t 2 --dist uniform -n 20000000\n"
"         segcached-storage-bench --engine both --fill -m 64M --value-size 1\n");
	fprintf(f, "\neviction policies (--eviction)\n");
	for (unsigned i = 0; i < ENGINE_EVICT_COUNT; i++)
		fprintf(f, "  %-8s %s\n", engine_eviction_policies[i].name,
			engine_eviction_policies[i].help);
}

static int
fail(const char *opt, const char *arg, const char *why)
{
	fprintf(stderr, "segcached-storage-bench: %s '%s': %s\n", opt, arg, why);
	return -1;
}

/* Whole decimal number in [lo, hi]. */
static int
parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

/* Bytes with an optional K, M, G or T suffix (powers of 1024; an optional
 * trailing "B" or "iB" is accepted). */
static int
parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	unsigned shift = 0;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	default: break;
	}
	if (shift && *end == 'i')
		end++;
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end)
		return -1;
	if (shift && v > (UINT64_MAX >> shift))
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

static int
parse_value_size(const char *s, struct sb_options *o)
{
	const char *sep = strstr(s, "..");
	size_t seplen = 2;
	char lo[32];
	uint64_t a, b;

	if (!sep) {
		sep = strchr(s, '-');
		seplen = 1;
	}
	if (!sep) {
		if (parse_u64(s, 0, SB_VALUE_MAX, &a))
			return -1;
		o->vmin = o->vmax = (uint32_t)a;
		return 0;
	}
	if ((size_t)(sep - s) >= sizeof(lo))
		return -1;
	memcpy(lo, s, (size_t)(sep - s));
	lo[sep - s] = '\0';
	if (parse_u64(lo, 0, SB_VALUE_MAX, &a) ||
	    parse_u64(sep + seplen, 0, SB_VALUE_MAX, &b) || a > b)
		return -1;
	o->vmin = (uint32_t)a;
	o->vmax = (uint32_t)b;
	return 0;
}

static int
parse_mix(const char *s, struct sb_options *o)
{
	unsigned g, st, d;
	int used = 0;

	if (sscanf(s, "%u:%u:%u%n", &g, &st, &d, &used) != 3 || s[used] ||
	    *s < '0' || *s > '9' || g > 100 || st > 100 || d > 100 ||
	    g + st + d != 100)
		return -1;
	o->pct_get = g;
	o->pct_set = st;
	o->pct_delete = d;
	return 0;
}

static int
parse_dist(const char *s, struct sb_options *o)
{
	if (strcmp(s, "uniform") == 0) {
		o->dist = SB_DIST_UNIFORM;
		return 0;
	}
	if (strcmp(s, "zipf") == 0) {
		o->dist = SB_DIST_ZIPF;
		o->theta = 0.99;
		return 0;
	}
	if (strncmp(s, "zipf:", 5) == 0) {
		char *end;
		double t;

		errno = 0;
		t = strtod(s + 5, &end);
		if (errno || end == s + 5 || *end || !(t > 0) || t > 100)
			return -1;
		o->dist = SB_DIST_ZIPF;
		o->theta = t;
		return 0;
	}
	return -1;
}

static int
parse_engine(const char *s, struct sb_options *o)
{
	memset(o->engine, 0, sizeof(o->engine));
	if (strcmp(s, "seg") == 0)
		o->engine[SB_ENGINE_SEG] = true;
	else if (strcmp(s, "baseline") == 0)
		o->engine[SB_ENGINE_BASELINE] = true;
	else if (strcmp(s, "both") == 0)
		o->engine[SB_ENGINE_SEG] = o->engine[SB_ENGINE_BASELINE] = true;
	else
		return -1;
	return 0;
}

static int
parse_eviction(const char *s, enum engine_eviction *out)
{
	const struct engine_eviction_policy *p = engine_eviction_by_name(s);

	if (p == NULL)
		return -1;
	*out = p->id;
	return 0;
}

int
sb_parse_options(int argc, char **argv, struct sb_options *o)
{
	bool memory_set = false, ops_set = false, duration_set = false;
	bool key_format_set = false;
	uint64_t v;
	int c;

	memset(o, 0, sizeof(*o));
	o->engine[SB_ENGINE_SEG] = o->engine[SB_ENGINE_BASELINE] = true;
	o->pin = true;
	o->threads = 1;
	o->keys = SB_DEFAULT_KEYS;
	o->key_size = 16;
	o->key_format = SB_KEY_PADDED;
	o->vmin = o->vmax = 64;
	o->pct_get = 90;
	o->pct_set = 10;
	o->dist = SB_DIST_ZIPF;
	o->theta = 0.99;
	o->ops = SB_DEFAULT_OPS;
	o->duration = SB_DEFAULT_DURATION_LIMIT;
	o->repeat = 1;
	o->seed = 1;
	o->batch = 1;
	o->fill_max_keys = SB_DEFAULT_FILL_MAX_KEYS;
	o->ecfg.memory = SB_DEFAULT_MEMORY;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":e:t:k:v:n:d:r:m:h", long_options,
				NULL)) != -1) {
		const char *name = optind > 0 && optind <= argc ? argv[optind - 1] : "";

		switch (c) {
		case 'e':
			if (parse_engine(optarg, o))
				return fail("--engine", optarg, "expected seg, baseline or both");
			break;
		case 't':
			if (parse_u64(optarg, 1, SB_THREADS_MAX, &v))
				return fail("--threads", optarg, "expected 1..256");
			o->threads = (unsigned)v;
			break;
		case 'k':
			if (parse_u64(optarg, 1, UINT32_MAX, &v))
				return fail("--keys", optarg, "expected 1..4294967295");
			o->keys = v;
			break;
		case OPT_KEY_SIZE:
			if (parse_u64(optarg, 1, ENGINE_KEY_MAX, &v))
				return fail("--key-size", optarg, "expected 1..250");
			o->key_size = (unsigned)v;
			break;
		case OPT_KEY_FORMAT:
			if (strcmp(optarg, "padded") == 0)
				o->key_format = SB_KEY_PADDED;
			else if (strcmp(optarg, "plain") == 0)
				o->key_format = SB_KEY_PLAIN;
			else
				return fail("--key-format", optarg, "expected padded or plain");
			key_format_set = true;
			break;
		case 'v':
			if (parse_value_size(optarg, o))
				return fail("--value-size", optarg,
					    "expected N or MIN-MAX, at most 67108864");
			break;
		case OPT_SHAPE:
			o->shape = sb_shape_by_name(optarg);
			if (!o->shape)
				return fail("--shape", optarg, "not a shape (see --list-shapes)");
			o->pct_get = o->shape->pct_get;
			o->pct_set = o->shape->pct_set;
			o->pct_delete = o->shape->pct_delete;
			o->vmin = o->shape->size_min;
			o->vmax = o->shape->size_max;
			break;
		case OPT_TTL:
			if (parse_u64(optarg, 1, 30 * 86400, &v))
				return fail("--ttl", optarg, "expected 1..2592000 seconds");
			o->ttl = (uint32_t)v;
			break;
		case OPT_LIST_SHAPES:
			sb_shapes_list(stdout);
			exit(0);
		case OPT_MIX:
			if (parse_mix(optarg, o))
				return fail("--mix", optarg,
					    "expected GET:SET:DELETE percentages adding up to 100");
			break;
		case OPT_DIST:
			if (parse_dist(optarg, o))
				return fail("--dist", optarg,
					    "expected uniform, zipf or zipf:THETA "
					    "with 0 < THETA <= 100");
			break;
		case 'n':
			if (parse_u64(optarg, 1, UINT64_MAX / 2, &v))
				return fail("--ops", optarg, "expected a positive count");
			o->ops = v;
			ops_set = true;
			break;
		case 'd': {
			char *end;
			double d;

			errno = 0;
			d = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(d > 0) || d > 86400)
				return fail("--duration", optarg, "expected seconds in (0, 86400]");
			o->duration = d;
			duration_set = true;
			break;
		}
		case 'r':
			if (parse_u64(optarg, 1, 100, &v))
				return fail("--repeat", optarg, "expected 1..100");
			o->repeat = (unsigned)v;
			break;
		case 'm':
			if (parse_size(optarg, &v) || v == 0 || v > SIZE_MAX / 2)
				return fail("--memory", optarg, "expected a size like 64M or 2G");
			o->ecfg.memory = (size_t)v;
			memory_set = true;
			break;
		case OPT_EVICTION:
			if (parse_eviction(optarg, &o->ecfg.eviction)) {
				char names[128], why[160];

				snprintf(why, sizeof(why), "expected one of %s",
					 engine_eviction_names(names, sizeof(names)));
				return fail("--eviction", optarg, why);
			}
			o->eviction_set = true;
			break;
		case OPT_SEGMENT_SIZE:
			if (parse_size(optarg, &v) || v == 0 || v > (1ULL << 32))
				return fail("--segment-size", optarg, "expected a size like 1M");
			o->ecfg.segment_size = (size_t)v;
			break;
		case OPT_HASH_POWER:
			if (parse_u64(optarg, 1, 40, &v))
				return fail("--hash-power", optarg, "expected 1..40");
			o->ecfg.hash_power = (unsigned)v;
			break;
		case OPT_ITEM_MAX:
			if (parse_size(optarg, &v) || v == 0 || v > (1ULL << 32))
				return fail("--item-max", optarg, "expected a size like 1M");
			o->ecfg.item_max = (size_t)v;
			break;
		case OPT_NO_CAS:
			o->ecfg.cas_disabled = true;
			break;
		case OPT_MRC:
			o->mrc = true;
			break;
		case OPT_FILL:
			o->fill = true;
			break;
		case OPT_FILL_MAX_KEYS:
			if (parse_u64(optarg, 1, UINT32_MAX, &v))
				return fail("--fill-max-keys", optarg, "expected 1..4294967295");
			o->fill_max_keys = v;
			break;
		case OPT_JSON:
			o->json = true;
			break;
		case OPT_NO_PIN:
			o->pin = false;
			break;
		case OPT_SEED:
			if (parse_u64(optarg, 0, UINT64_MAX, &v))
				return fail("--seed", optarg, "expected a number");
			o->seed = v;
			break;
		case OPT_BATCH:
			if (parse_u64(optarg, 1, SB_BATCH_MAX, &v))
				return fail("--batch", optarg, "expected 1..64");
			o->batch = (unsigned)v;
			break;
		case 'h':
			sb_usage(stdout);
			exit(0);
		case OPT_LIST_ENGINES:
			for (int k = 0; k < SB_ENGINE_COUNT; k++)
				if (sb_engine_available((enum sb_engine_kind)k))
					puts(sb_engine_name((enum sb_engine_kind)k));
			exit(0);
		case ':':
			fprintf(stderr, "segcached-storage-bench: %s needs a value\n", name);
			return -1;
		default:
			fprintf(stderr, "segcached-storage-bench: unknown option '%s' "
				"(see --help)\n", name);
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "segcached-storage-bench: unexpected argument '%s' (see --help)\n",
			argv[optind]);
		return -1;
	}

	if (o->fill) {
		if (!memory_set)
			o->ecfg.memory = SB_DEFAULT_FILL_MEMORY;
		if (!key_format_set)
			o->key_format = SB_KEY_PLAIN;
		o->threads = 1;
	} else if (duration_set && !ops_set) {
		o->ops = UINT64_MAX / 2; /* bounded by --duration alone */
	}
	if (!o->fill && o->key_format == SB_KEY_PADDED &&
	    sb_id_digits(o->keys) > o->key_size) {
		fprintf(stderr,
			"segcached-storage-bench: --key-size %u is too small for %" PRIu64
			" padded keys (needs %u)\n",
			o->key_size, o->keys, sb_id_digits(o->keys));
		return -1;
	}
	if (o->fill && o->key_format == SB_KEY_PADDED &&
	    sb_id_digits(o->fill_max_keys) > o->key_size) {
		fprintf(stderr,
			"segcached-storage-bench: --key-size %u is too small for up to %" PRIu64
			" padded keys (use a larger --key-size or a smaller --fill-max-keys)\n",
			o->key_size, o->fill_max_keys);
		return -1;
	}
	if (o->shape && o->ttl) {
		fprintf(stderr, "segcached-storage-bench: --shape gives each key its TTL: "
			"--ttl goes without it\n");
		return -1;
	}
	if (o->fill && (o->shape || o->ttl)) {
		fprintf(stderr, "segcached-storage-bench: --fill counts what fits: "
			"no --shape or --ttl\n");
		return -1;
	}
	if (!o->fill && o->ops < o->threads) {
		fprintf(stderr, "segcached-storage-bench: --ops must be at least --threads\n");
		return -1;
	}
	/* The server sizes its engine for its lcores; do the same. */
	o->ecfg.max_workers = o->threads;
	return 0;
}
