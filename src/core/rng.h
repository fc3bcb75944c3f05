/*
 * core/rng.h - the engine's only source of randomness: a seeded generator.
 *
 * xoshiro256** (Blackman & Vigna) seeded through splitmix64.  The generator is
 * a small value struct owned by the caller; the engine never reads a global
 * generator or the clock, so a seed in gives the same bytes out.
 */
#ifndef GF_CORE_RNG_H
#define GF_CORE_RNG_H

#include <stdint.h>

struct gf_rng {
	uint64_t s[4];
};

/* Seed the generator; any 64-bit seed is valid (0 included). */
void gf_rng_init(struct gf_rng *rng, uint64_t seed);

/* Next 64 uniformly distributed bits. */
uint64_t gf_rng_next(struct gf_rng *rng);

/* Uniform integer in [0, n) without modulo bias; n must be > 0. */
uint64_t gf_rng_below(struct gf_rng *rng, uint64_t n);

/* Uniform double in [0, 1). */
double gf_rng_double(struct gf_rng *rng);

#endif /* GF_CORE_RNG_H */
