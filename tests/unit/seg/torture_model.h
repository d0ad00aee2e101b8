// SPDX-License-Identifier: BSD-3-Clause
// The torture test's model of what each key may hold (test_seg_torture.cc).
//
// Every write to a key gets a version w (1, 2, ... per key) when it is
// announced, before the engine is called, and is acknowledged after the
// engine returned, with what it returned. Announce and ack also take a
// tick from one counter that all threads share, so "W's op returned
// before X's began" is "W.ack < X.ann". Values carry their key and
// version: a blob is a run of chunks "<key.w.len.K>payload", K saying
// which write put the chunk there (S: set/add/replace/cas, A: append,
// P: prepend); a counter is the decimal of key << 52 | w << 32 | offset,
// where offset starts at 2^31 and moves by each incr/decr applied since
// set w.
//
// A read (single get, batched get, gets, gat, an incr's reply) is checked
// against the versions that may be visible then:
// - every chunk's bytes are those its (key, w) derive, and its write did
//   store (a version whose write failed, NOT_STORED, EXISTS, NO_MEMORY,
//   is never visible);
// - stale read: a write W' that changed the value and returned before
//   the read began, and began after every part of the value read had
//   returned, is linearized after all of them: the read must see W' or
//   later. (floor: the latest W'.ann of such writes, taken before the
//   read; a flush_all counts as such a write on every key.)
// - lost append: an append/prepend that stored, began after the value's
//   set returned and returned before the read began must be in it;
//   appends after the set are in the order they were applied (one that
//   returned before another began comes first), prepends mirrored;
// - counters: the offset is the sum of the incr/decr deltas that must be
//   applied (began after the set returned, returned before the read
//   began) plus some of those that may be (concurrent with either end);
//   an incr-only counter's replies grow;
// - expiry: an item expires no later than the TTL its version, or a touch
//   or gat that may have applied since, asked for (the engine rounds
//   expiries down, never up), never when they all asked for "never",
//   and some time when one asked for a time.
#ifndef SEGCACHED_TEST_SEG_TORTURE_MODEL_H
#define SEGCACHED_TEST_SEG_TORTURE_MODEL_H

#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "engine/engine.h"

namespace torture {

constexpr uint64_t kInf = UINT64_MAX;
constexpr uint64_t kCounterMid = 1ull << 31;
// A counter value: key << kKeyShift | version << 32 | offset. Up to
// kMaxKeys keys, 2^20 versions per key (a version past that fails the
// test: it would name another).
constexpr unsigned kKeyShift = 52;
constexpr unsigned kMaxKeys = 1u << (64 - kKeyShift);
constexpr uint64_t kMaxCounterVersion = 1ull << (kKeyShift - 32);

enum class Kind : uint8_t { Set, Append, Prepend, Arith, Delete, Touch };
enum class State : uint8_t { Free, InFlight, Stored, Failed };

struct Rec {
	uint64_t w = 0;
	uint64_t ann = 0, ack = kInf;
	uint64_t low_w = 0;   // lowest version in flight at the announce (itself if none)
	int64_t ttl = 0;      // Set, Touch: the exptime asked for
	int64_t clk = 0;      // engine clock after the op returned
	int32_t delta = 0;    // Arith: signed
	Kind kind = Kind::Set;
	State state = State::Free;
};

// Whether a stored write of this kind replaces (or removes) the value, or
// adds to it (append, prepend, incr), or leaves it (a touch that keeps the
// item alive).
inline bool replaces(const Rec &r)
{
	return r.kind == Kind::Set || r.kind == Kind::Delete ||
	       (r.kind == Kind::Touch && r.ttl < 0);
}
inline bool changes(const Rec &r)
{
	return replaces(r) || r.kind == Kind::Append || r.kind == Kind::Prepend ||
	       r.kind == Kind::Arith;
}

// The latest expiry an exptime asked at engine clock `clk` allows; 0 =
// never, -1 = already expired.
inline int64_t expiry_bound(int64_t ttl, int64_t clk)
{
	if (ttl == 0)
		return 0;
	if (ttl < 0)
		return -1;
	if (ttl <= ENGINE_RELATIVE_EXPTIME_MAX)
		return clk + ttl;
	return ttl <= clk ? -1 : ttl;
}

constexpr unsigned kRing = 256; // records kept per key (4000 keys: 57 MB)

struct KeyModel {
	std::mutex mu;
	uint64_t next_w = 1;
	Rec ring[kRing];
	std::vector<Rec> stragglers;  // in flight while their ring slot was reused
	std::vector<uint64_t> inflight;
	uint64_t forgotten_ack = 0;   // latest ack of a record the ring dropped
	std::atomic<uint64_t> floor_all{0}, floor_repl{0};
	// incr-only counters: the last incr reply acknowledged
	uint64_t mono_base = 0, mono_val = 0, mono_ack = 0;

	// The record of w, or nullptr (dropped from the ring, or never announced).
	Rec *find(uint64_t w)
	{
		Rec &r = ring[w % kRing];
		if (r.state != State::Free && r.w == w)
			return &r;
		for (Rec &s : stragglers)
			if (s.w == w)
				return &s;
		return nullptr;
	}
};

// What a reader noted before its read.
struct ReadSnap {
	uint64_t floor_all, floor_repl, flush_floor, r0, r1;
};

class Model {
public:
	explicit Model(unsigned keys) : keys_(keys) {}

	std::atomic<uint64_t> tick{1};
	std::atomic<uint64_t> flush_floor{0};
	std::atomic<uint64_t> skipped{0}; // checks that could not be made (ring too short)

	KeyModel &key(unsigned k) { return keys_[k]; }

	uint64_t announce(unsigned k, Kind kind, int64_t ttl, int32_t delta, uint64_t *ann_out)
	{
		KeyModel &m = keys_[k];
		std::lock_guard<std::mutex> g(m.mu);
		Rec r;
		r.w = m.next_w++;
		r.ann = tick.fetch_add(1);
		r.low_w = r.w;
		for (uint64_t x : m.inflight)
			r.low_w = std::min(r.low_w, x);
		r.kind = kind;
		r.ttl = ttl;
		r.delta = delta;
		r.state = State::InFlight;
		Rec &slot = m.ring[r.w % kRing];
		if (slot.state == State::InFlight)
			m.stragglers.push_back(slot);
		else if (slot.state != State::Free)
			m.forgotten_ack = std::max(m.forgotten_ack, slot.ack);
		slot = r;
		m.inflight.push_back(r.w);
		if (ann_out)
			*ann_out = r.ann;
		return r.w;
	}

	// The engine returned: stored says whether the write took effect.
	void ack(unsigned k, uint64_t w, bool stored, int64_t clk)
	{
		KeyModel &m = keys_[k];
		std::lock_guard<std::mutex> g(m.mu);
		Rec *r = m.find(w);
		r->ack = tick.fetch_add(1);
		r->clk = clk;
		r->state = stored ? State::Stored : State::Failed;
		m.inflight.erase(std::find(m.inflight.begin(), m.inflight.end(), w));
		if (stored && changes(*r))
			raise(m.floor_all, r->ann);
		if (stored && replaces(*r))
			raise(m.floor_repl, r->ann);
		// A straggler done: the ring keeps only the latest per slot.
		for (size_t i = 0; i < m.stragglers.size(); i++) {
			if (m.stragglers[i].w == w) {
				m.forgotten_ack = std::max(m.forgotten_ack, r->ack);
				m.stragglers.erase(m.stragglers.begin() + i);
				break;
			}
		}
	}

	void flush_done(uint64_t ann) { raise(flush_floor, ann); }

	ReadSnap begin_read(unsigned k)
	{
		ReadSnap s;
		s.floor_all = keys_[k].floor_all.load();
		s.floor_repl = keys_[k].floor_repl.load();
		s.flush_floor = flush_floor.load();
		s.r0 = tick.fetch_add(1);
		s.r1 = kInf;
		return s;
	}
	void end_read(ReadSnap *s) { s->r1 = tick.fetch_add(1); }

	// Empty if the value read for key k (flags and data checked by the
	// caller) could be what it holds; else what is wrong. self_w: an
	// incr whose reply this is (it must be in the value), else 0;
	// expires_at INT64_MIN: not known (an incr's reply), not checked.
	std::string check(unsigned k, bool counter, const char *v, size_t len, int64_t expires_at,
			  int64_t clk_now, const ReadSnap &s, uint64_t self_w = 0);

	// A cas that stored, of version cw, after a gets that ended when the
	// key's next version was gets_next: no write that changed the value
	// may lie between them.
	std::string check_cas(unsigned k, uint64_t gets_next, uint64_t cw);

	// An incr-only counter's reply, by incr version w: it grows.
	std::string check_incr_grows(unsigned k, uint64_t w, uint64_t reply);

	uint64_t next_version(unsigned k)
	{
		std::lock_guard<std::mutex> g(keys_[k].mu);
		return keys_[k].next_w;
	}

private:
	static void raise(std::atomic<uint64_t> &a, uint64_t v)
	{
		uint64_t cur = a.load();
		while (v > cur && !a.compare_exchange_weak(cur, v)) {
		}
	}

	std::string check_expiry(KeyModel &m, const Rec *base, int64_t expires_at,
				 int64_t clk_now);

	std::vector<KeyModel> keys_;
};

// ---- values ----------------------------------------------------------------

inline void payload(unsigned key, uint64_t w, size_t len, char *out)
{
	uint64_t x = (w * 0x9e3779b97f4a7c15ull) ^ (key + 1ull) * 0xbf58476d1ce4e5b9ull;
	for (size_t i = 0; i < len; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		out[i] = static_cast<char>('0' + (x >> 58));
	}
}

inline std::string chunk(unsigned key, uint64_t w, size_t len, char kind)
{
	char head[64];
	int n = snprintf(head, sizeof(head), "<%u.%" PRIu64 ".%zu.%c>", key, w, len, kind);
	std::string s(head, static_cast<size_t>(n));
	s.resize(n + len);
	payload(key, w, len, &s[n]);
	return s;
}

inline std::string counter_value(unsigned key, uint64_t w)
{
	return std::to_string((uint64_t)key << kKeyShift | w << 32 | kCounterMid);
}

struct Part {
	uint64_t w;
	char kind;
};

// Splits a blob into its chunks, checking every byte; empty if whole.
inline std::string parse_blob(unsigned key, const char *v, size_t len, std::vector<Part> *parts)
{
	std::string expect;
	parts->clear();
	if (len == 0)
		return "empty blob";
	for (size_t at = 0; at < len;) {
		unsigned k;
		uint64_t w;
		size_t clen;
		char kind;
		int used = 0;
		std::string head(v + at, std::min<size_t>(len - at, 64));
		if (sscanf(head.c_str(), "<%u.%" SCNu64 ".%zu.%c>%n", &k, &w, &clen, &kind,
			   &used) != 4 ||
		    used == 0)
			return "no chunk header at byte " + std::to_string(at);
		if (k != key)
			return "chunk of key " + std::to_string(k) + " at byte " + std::to_string(at);
		if (kind != 'S' && kind != 'A' && kind != 'P')
			return "chunk of kind " + std::string(1, kind);
		if (at + used + clen > len)
			return "chunk runs past the value end at byte " + std::to_string(at);
		expect.resize(clen);
		payload(key, w, clen, expect.data());
		if (memcmp(v + at + used, expect.data(), clen) != 0)
			return "chunk payload differs at byte " + std::to_string(at);
		parts->push_back({w, kind});
		at += used + clen;
	}
	return "";
}

inline std::string parse_counter(unsigned key, const char *v, size_t len, uint64_t *w,
				 int64_t *offset)
{
	uint64_t n;
	if (!engine_parse_u64(v, len, &n))
		return "counter that is no number: " + std::string(v, len);
	if (n >> kKeyShift != key)
		return "counter of key " + std::to_string(n >> kKeyShift);
	*w = (n >> 32) & ((1ull << (kKeyShift - 32)) - 1);
	*offset = (int64_t)(n & 0xffffffffull) - (int64_t)kCounterMid;
	return "";
}

// ---- the checks ------------------------------------------------------------

inline std::string Model::check_expiry(KeyModel &m, const Rec *base, int64_t expires_at,
				       int64_t clk_now)
{
	int64_t latest = 0;
	bool never = false, finite = false;
	if (expires_at == INT64_MIN) // not known to the caller
		return "";
	auto allow = [&](int64_t ttl, const Rec &r) {
		int64_t b = expiry_bound(ttl, r.state == State::InFlight ? clk_now : r.clk);
		if (b == 0)
			never = true;
		else if (b > 0) {
			finite = true;
			latest = std::max(latest, b);
		}
	};
	allow(base->ttl, *base);
	if (m.next_w - base->low_w > kRing) {
		skipped++;
		return "";
	}
	for (uint64_t w = base->low_w; w < m.next_w; w++) {
		const Rec *t = m.find(w);
		if (t == nullptr) {
			skipped++;
			return "";
		}
		if (t->kind != Kind::Touch || t->state == State::Failed ||
		    (t->state == State::Stored && t->ack < base->ann))
			continue;
		allow(t->ttl, *t);
	}
	char msg[200];
	if (expires_at == 0 && !never)
		return "never expires, but its writes asked for an expiry";
	if (expires_at != 0 && !finite) {
		snprintf(msg, sizeof(msg), "expires at %" PRId64 ", but was written to never expire",
			 expires_at);
		return msg;
	}
	if (expires_at > latest) {
		snprintf(msg, sizeof(msg),
			 "expires at %" PRId64 ", later than any TTL written allows (%" PRId64 ")",
			 expires_at, latest);
		return msg;
	}
	return "";
}

inline std::string Model::check(unsigned k, bool counter, const char *v, size_t len,
				int64_t expires_at, int64_t clk_now, const ReadSnap &s,
				uint64_t self_w)
{
	std::vector<Part> parts;
	uint64_t base_w = 0;
	int64_t offset = 0;
	size_t base_at = 0;
	std::string bad = counter ? parse_counter(k, v, len, &base_w, &offset)
				  : parse_blob(k, v, len, &parts);
	if (!bad.empty())
		return bad;
	if (!counter) {
		base_at = SIZE_MAX;
		for (size_t i = 0; i < parts.size(); i++) {
			if (parts[i].kind != 'S')
				continue;
			if (base_at != SIZE_MAX)
				return "two set chunks";
			base_at = i;
		}
		if (base_at == SIZE_MAX)
			return "no set chunk";
		for (size_t i = 0; i < parts.size(); i++)
			if ((i < base_at && parts[i].kind != 'P') ||
			    (i > base_at && parts[i].kind != 'A'))
				return "an append after the set chunk or a prepend before it";
		base_w = parts[base_at].w;
	} else {
		parts.push_back({base_w, 'S'});
	}

	KeyModel &m = keys_[k];
	std::lock_guard<std::mutex> g(m.mu);
	char msg[256];
	// Each part: written, by a write of its kind, that did not fail.
	std::vector<const Rec *> recs(parts.size());
	uint64_t newest = 0; // latest ack among the parts (an upper bound)
	for (size_t i = 0; i < parts.size(); i++) {
		const uint64_t w = parts[i].w;
		if (w == 0 || w >= m.next_w)
			return "version " + std::to_string(w) + " was never written";
		const Rec *r = m.find(w);
		recs[i] = r;
		if (r == nullptr) {
			newest = std::max(newest, m.forgotten_ack);
			continue;
		}
		const Kind want = parts[i].kind == 'S' ? Kind::Set
				  : parts[i].kind == 'A' ? Kind::Append
							 : Kind::Prepend;
		if (r->kind != want)
			return "version " + std::to_string(w) + " is no " + parts[i].kind + " write";
		if (r->state == State::Failed)
			return "version " + std::to_string(w) +
			       " is visible, but its write returned that it did not store";
		newest = std::max(newest, r->state == State::InFlight ? kInf : r->ack);
	}
	const Rec *base = recs[base_at];
	if (base && base->ttl < 0)
		return "version " + std::to_string(base_w) + " was written already expired";

	// Stale: a write that changed the value began after every part had
	// returned and returned before the read began.
	const uint64_t floor = counter ? s.floor_repl : s.floor_all;
	const uint64_t newest_base =
		counter ? (base == nullptr ? m.forgotten_ack
					   : base->state == State::InFlight ? kInf : base->ack)
			: newest;
	if (newest_base < floor) {
		snprintf(msg, sizeof(msg),
			 "stale read: version %" PRIu64 " (newest part acked at tick %" PRIu64
			 ") read, but a write announced at tick %" PRIu64
			 " had stored before the read began (tick %" PRIu64 ")",
			 base_w, newest_base, floor, s.r0);
		return msg;
	}
	if (newest_base < s.flush_floor) {
		snprintf(msg, sizeof(msg),
			 "version %" PRIu64 " (acked at tick %" PRIu64
			 ") outlived a flush_all begun at tick %" PRIu64,
			 base_w, newest_base, s.flush_floor);
		return msg;
	}
	if (base == nullptr) {
		skipped++;
		return "";
	}

	if (!counter) {
		// Appends in the order they were applied (running max of the
		// announces before each), prepends mirrored; none before the set.
		for (int side = 0; side < 2; side++) {
			uint64_t max_ann = base->ann;
			for (size_t n = 1;; n++) {
				size_t i;
				if (side == 0) {
					if (base_at + n >= parts.size())
						break;
					i = base_at + n;
				} else {
					if (n > base_at)
						break;
					i = base_at - n;
				}
				const Rec *r = recs[i];
				if (r == nullptr)
					continue;
				if (r->state == State::Stored && r->ack < max_ann) {
					snprintf(msg, sizeof(msg),
						 "%s %" PRIu64 " returned (tick %" PRIu64
						 ") before a write it follows in the value began "
						 "(tick %" PRIu64 ")",
						 side == 0 ? "append" : "prepend", r->w, r->ack,
						 max_ann);
					return msg;
				}
				max_ann = std::max(max_ann, r->ann);
			}
		}
		// Lost append: stored after the set returned, before the read.
		if (base->state == State::Stored) {
			if (m.next_w - base_w > kRing) {
				skipped++;
			} else {
				std::vector<uint64_t> have;
				for (const Part &p : parts)
					have.push_back(p.w);
				std::sort(have.begin(), have.end());
				for (uint64_t w = base_w + 1; w < m.next_w; w++) {
					const Rec *r = m.find(w);
					if (r == nullptr || r->state != State::Stored ||
					    (r->kind != Kind::Append && r->kind != Kind::Prepend) ||
					    r->ann < base->ack || r->ack > s.r0)
						continue;
					if (!std::binary_search(have.begin(), have.end(), w))
						return "lost update: " +
						       std::string(r->kind == Kind::Append
									   ? "append "
									   : "prepend ") +
						       std::to_string(w) +
						       " stored after the set and before the read, "
						       "and is not in the value";
				}
			}
		}
	} else {
		// The offset: the deltas that must be in it, and some of those
		// that may.
		if (m.next_w - base->low_w > kRing) {
			skipped++;
		} else {
			int64_t must = 0, lo = 0, hi = 0;
			bool judged = true;
			for (uint64_t w = base->low_w; w < m.next_w; w++) {
				const Rec *r = m.find(w);
				if (r == nullptr) {
					judged = false;
					break;
				}
				if (r->kind != Kind::Arith || r->state == State::Failed ||
				    (r->state == State::Stored && r->ack < base->ann) ||
				    r->ann > s.r1)
					continue;
				if (w == self_w ||
				    (r->state == State::Stored && base->state == State::Stored &&
				     r->ann > base->ack && r->ack < s.r0))
					must += r->delta;
				else if (r->delta < 0)
					lo += r->delta;
				else
					hi += r->delta;
			}
			if (!judged) {
				skipped++;
			} else if (offset < must + lo || offset > must + hi) {
				snprintf(msg, sizeof(msg),
					 "counter of set %" PRIu64 " at offset %" PRId64
					 ", outside [%" PRId64 ", %" PRId64
					 "] (incr/decr lost, or applied twice)",
					 base_w, offset, must + lo, must + hi);
				return msg;
			}
		}
	}
	return check_expiry(m, base, expires_at, clk_now);
}

inline std::string Model::check_cas(unsigned k, uint64_t gets_next, uint64_t cw)
{
	KeyModel &m = keys_[k];
	std::lock_guard<std::mutex> g(m.mu);
	const Rec *c = m.find(cw);
	if (c == nullptr || cw - gets_next > kRing) {
		skipped++;
		return "";
	}
	for (uint64_t w = gets_next; w < cw; w++) {
		const Rec *r = m.find(w);
		if (r == nullptr) {
			skipped++;
			return "";
		}
		if (r->state == State::Stored && changes(*r) && r->ack < c->ann)
			return "lost update: cas " + std::to_string(cw) +
			       " stored over write " + std::to_string(w) +
			       ", which changed the value after the gets";
	}
	return "";
}

inline std::string Model::check_incr_grows(unsigned k, uint64_t w, uint64_t reply)
{
	KeyModel &m = keys_[k];
	std::lock_guard<std::mutex> g(m.mu);
	const Rec *r = m.find(w);
	const uint64_t base = (reply >> 32) & ((1ull << (kKeyShift - 32)) - 1);
	std::string bad;
	if (r && m.mono_ack != 0 && m.mono_ack < r->ann && m.mono_base == base &&
	    reply <= m.mono_val)
		bad = "incr reply " + std::to_string(reply) + " not above " +
		      std::to_string(m.mono_val) + ", an earlier incr's reply";
	m.mono_base = base;
	m.mono_val = reply;
	m.mono_ack = tick.fetch_add(1);
	return bad;
}

} // namespace torture

#endif
