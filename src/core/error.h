/*
 * core/error.h - the one error enum of gpufleet.
 *
 * Every action in the library returns a gf_err (0 = GF_OK).  Predicates return
 * bool.  Scheduling outcomes (fits / unschedulable ...) are a separate enum in
 * policy/, not errors.  The list is append-only: codes are part of the ABI of
 * the engine library and appear in logs.
 *
 * The names and messages come from one X-macro list, so a code without a
 * message cannot compile.
 */
#ifndef GF_CORE_ERROR_H
#define GF_CORE_ERROR_H

#define GF_ERRNO_MAP(X)                                              \
	X(OK, "success")                                                 \
	X(NOMEM, "out of memory")                                        \
	X(INVAL, "invalid argument")                                     \
	X(IO, "input/output error")                                      \
	X(PARSE, "malformed input")                                      \
	X(RANGE, "value out of range")                                   \
	X(NOENT, "no such entry")                                        \
	X(EXISTS, "entry already exists")                                \
	X(TOOBIG, "input exceeds its size limit")                        \
	X(UNSUPPORTED, "operation not supported")                        \
	X(STATE, "operation not valid in the current state")             \
	X(UNAVAILABLE, "resource or service unavailable")                \
	X(TIMEOUT, "operation timed out")

typedef enum gf_err {
#define GF_ERR_ENUM_(name, msg) GF_##name,
	GF_ERRNO_MAP(GF_ERR_ENUM_)
#undef GF_ERR_ENUM_
	GF_ERR_COUNT_
} gf_err;

/* Human-readable message for an error code; never NULL. */
const char *gf_strerror(gf_err err);

/* Symbolic name ("GF_PARSE"); never NULL ("GF_UNKNOWN" for out-of-range codes). */
const char *gf_err_name(gf_err err);

#endif /* GF_CORE_ERROR_H */
