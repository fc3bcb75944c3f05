/*
 * core/rng.c - xoshiro256** seeded by splitmix64.
 *
 * Bounded draws use Lemire's multiply-and-reject method: take the high 64 bits
 * of a 128-bit product x*n and reject the few low products that would bias the
 * result, so every value in [0, n) is exactly equally likely.
 */
#include "core/rng.h"

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

void gf_rng_init(struct gf_rng *rng, uint64_t seed)
{
	uint64_t x = seed;

	for (int i = 0; i < 4; i++)
		rng->s[i] = splitmix64(&x);
}

uint64_t gf_rng_next(struct gf_rng *rng)
{
	uint64_t *s = rng->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

uint64_t gf_rng_below(struct gf_rng *rng, uint64_t n)
{
	unsigned __int128 m = (unsigned __int128)gf_rng_next(rng) * n;
	uint64_t lo = (uint64_t)m;

	if (lo < n) {
		uint64_t threshold = -n % n;

		while (lo < threshold) {
			m = (unsigned __int128)gf_rng_next(rng) * n;
			lo = (uint64_t)m;
		}
	}
	return (uint64_t)(m >> 64);
}

double gf_rng_double(struct gf_rng *rng)
{
	return (double)(gf_rng_next(rng) >> 11) * 0x1.0p-53;
}
