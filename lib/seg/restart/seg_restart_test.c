/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Test-only access to a restart area (see seg_test.h): sealing an area
 * again after a test patched it, and where a saved field lies, so that
 * tests and the restart fuzzer patch areas by name.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "seg/seg_test.h"
#include "seg/restart/seg_restart_file.h"

int
seg_test_restart_reseal(void *area, size_t len)
{
	struct restart_hdr *h = area;
	struct area_layout al;
	uint32_t crc;

	if (seg_restart_layout_of(area, len, &al) < 0)
		return -1;
	crc = seg_restart_crc(area, &al);
	if (crc == h->crc)
		return 0;
	h->crc = crc;
	return 1;
}

#define FIELD(type, f) { #f, offsetof(struct type, f), sizeof(((struct type *)0)->f) }

struct field {
	const char *name;
	size_t off, size;
};

static const struct field hdr_fields[] = {
	FIELD(restart_hdr, magic), FIELD(restart_hdr, version), FIELD(restart_hdr, clean),
	FIELD(restart_hdr, nseg), FIELD(restart_hdr, buckets), FIELD(restart_hdr, stop_wall),
	FIELD(restart_hdr, stop_clock), FIELD(restart_hdr, gen_counter),
	FIELD(restart_hdr, flush_at), FIELD(restart_hdr, ovf_seg), FIELD(restart_hdr, ovf_next),
	FIELD(restart_hdr, ovf_free), FIELD(restart_hdr, ovf_used),
	FIELD(restart_hdr, ovf_free_count), FIELD(restart_hdr, ovf_segs),
	FIELD(restart_hdr, merge_reserve), FIELD(restart_hdr, crc),
};

static const struct field img_fields[] = {
	FIELD(seg_image, gen), FIELD(seg_image, exp_base), FIELD(seg_image, create_at),
	FIELD(seg_image, exp_max), FIELD(seg_image, write_off), FIELD(seg_image, prev),
	FIELD(seg_image, next), FIELD(seg_image, ttl_bucket), FIELD(seg_image, state),
	FIELD(seg_image, unit_shift), FIELD(seg_image, live_items),
	FIELD(seg_image, live_bytes), FIELD(seg_image, cont1), FIELD(seg_image, reserved),
};

static const struct field *
field_named(const struct field *f, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(f[i].name, name) == 0)
			return &f[i];
	return NULL;
}

long
seg_test_restart_field(const void *area, size_t len, const char *name, uint32_t seg,
		       size_t *size)
{
	const struct restart_hdr *h = area;
	const struct field *f;
	struct area_layout al;

	if (strcmp(name, "table") == 0) {
		if (seg_restart_layout_of(area, len, &al) < 0)
			return -1;
		*size = al.table_bytes;
		return (long)al.table_off;
	}
	if (strncmp(name, "hdr.", 4) == 0) {
		f = field_named(hdr_fields, sizeof(hdr_fields) / sizeof(*hdr_fields), name + 4);
		if (!f)
			return -1;
		*size = f->size;
		return (long)f->off;
	}
	f = field_named(img_fields, sizeof(img_fields) / sizeof(*img_fields), name + 4);
	if (strncmp(name, "img.", 4) != 0 || !f || seg_restart_layout_of(area, len, &al) < 0 ||
	    seg >= h->nseg)
		return -1;
	*size = f->size;
	return (long)(al.segs_off + seg * sizeof(struct seg_image) + f->off);
}
