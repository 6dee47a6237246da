! tap_f08.h - included (#include) by the Fortran tests, which are preprocessed (.F90): checks that
! record their call site, as ok() and is_int() of tap.h do in C. Needs `use tap_f08`.
#define OK(cond, desc) call tap_ok_at(cond, desc, __FILE__, __LINE__)
#define IS(got, expected, desc) call tap_is_at(int(got, 8), int(expected, 8), desc, __FILE__, __LINE__)
