#define OPARA_IMPLEMENTATION
#include "opara.h"
#include "use_api.h"
int main(void) { return use_api(); }
