/* parameterized.h — ParameterizedTest is in the stand-in criterion.h. */
#include <criterion/criterion.h>
