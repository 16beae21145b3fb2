/* placeholder */
#include "opara_sched.h"
