#define OPARA_STATIC
#define OPARA_IMPLEMENTATION
#include "opara.h"
#include "use_api.h"
int use_api_b(void);
int main(void) { return use_api() | use_api_b(); }
