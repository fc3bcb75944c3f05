/* http/obuf.h - moved to core/obuf.h (the capped buffer is not HTTP-specific). */
#include "core/obuf.h"
