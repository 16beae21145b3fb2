/* Links against src/ compiled as separate translation units (no amalgamation). */
#include "opara_api.h"
#include "use_api.h"
int main(void) { return use_api(); }
