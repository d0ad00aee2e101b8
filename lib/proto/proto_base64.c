/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * base64 for the meta protocol's binary keys ('b' flag). Decoding follows
 * memcached: bytes outside the alphabet are skipped, the number of
 * alphabet bytes must be a multiple of four, decoding stops at the first
 * padded block, and more than two '=' in it is an error.
 */
#include "proto/proto.h"

static const char b64_alphabet[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

#define B64_SKIP 0x80

static unsigned char
b64_value(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return (unsigned char)(c - 'A');
	if (c >= 'a' && c <= 'z')
		return (unsigned char)(c - 'a' + 26);
	if (c >= '0' && c <= '9')
		return (unsigned char)(c - '0' + 52);
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	if (c == '=')
		return 0;
	return B64_SKIP;
}

size_t
proto_base64_decode(const char *src, size_t len, char *out, size_t out_cap)
{
	unsigned char block[4];
	size_t count = 0, olen, pos = 0;
	unsigned pad = 0;

	for (size_t i = 0; i < len; i++)
		if (b64_value((unsigned char)src[i]) != B64_SKIP)
			count++;
	if (count == 0 || count % 4)
		return 0;
	olen = count / 4 * 3;
	if (olen > out_cap)
		return 0;
	count = 0;
	for (size_t i = 0; i < len; i++) {
		unsigned char v = b64_value((unsigned char)src[i]);

		if (v == B64_SKIP)
			continue;
		if (src[i] == '=')
			pad++;
		block[count++] = v;
		if (count < 4)
			continue;
		out[pos++] = (char)((block[0] << 2) | (block[1] >> 4));
		out[pos++] = (char)((block[1] << 4) | (block[2] >> 2));
		out[pos++] = (char)((block[2] << 6) | block[3]);
		count = 0;
		if (pad) {
			if (pad > 2)
				return 0;
			pos -= pad;
			break;
		}
	}
	return pos;
}

size_t
proto_base64_encode(const void *src, size_t len, char *out, size_t out_cap)
{
	const unsigned char *in = src;
	size_t pos = 0, i = 0;

	if (proto_base64_encoded_len(len) > out_cap)
		return 0;
	for (; len - i >= 3; i += 3) {
		out[pos++] = b64_alphabet[in[i] >> 2];
		out[pos++] = b64_alphabet[((in[i] & 0x03) << 4) | (in[i + 1] >> 4)];
		out[pos++] = b64_alphabet[((in[i + 1] & 0x0f) << 2) | (in[i + 2] >> 6)];
		out[pos++] = b64_alphabet[in[i + 2] & 0x3f];
	}
	if (len - i == 1) {
		out[pos++] = b64_alphabet[in[i] >> 2];
		out[pos++] = b64_alphabet[(in[i] & 0x03) << 4];
		out[pos++] = '=';
		out[pos++] = '=';
	} else if (len - i == 2) {
		out[pos++] = b64_alphabet[in[i] >> 2];
		out[pos++] = b64_alphabet[((in[i] & 0x03) << 4) | (in[i + 1] >> 4)];
		out[pos++] = b64_alphabet[(in[i + 1] & 0x0f) << 2];
		out[pos++] = '=';
	}
	return pos;
}
