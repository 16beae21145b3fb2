/* opara.h included after system headers, so it cannot choose the POSIX feature level itself. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#define OPARA_IMPLEMENTATION
#include "opara.h"
#include "use_api.h"
int main(void) { return use_api(); }
