/* api_math: implementation pending (see api_math.h). */
#include "api/api_math.h"
