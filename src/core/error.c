/*
 * core/error.c - names and messages for gf_err, generated from GF_ERRNO_MAP.
 */
#include "core/error.h"

static const char *const err_msgs[] = {
#define GF_ERR_MSG_(name, msg) msg,
	GF_ERRNO_MAP(GF_ERR_MSG_)
#undef GF_ERR_MSG_
};

static const char *const err_names[] = {
#define GF_ERR_NAME_(name, msg) "GF_" #name,
	GF_ERRNO_MAP(GF_ERR_NAME_)
#undef GF_ERR_NAME_
};

const char *gf_strerror(gf_err err)
{
	if ((unsigned)err >= (unsigned)GF_ERR_COUNT_)
		return "unknown error";
	return err_msgs[err];
}

const char *gf_err_name(gf_err err)
{
	if ((unsigned)err >= (unsigned)GF_ERR_COUNT_)
		return "GF_UNKNOWN";
	return err_names[err];
}
