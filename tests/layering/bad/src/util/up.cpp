// An include from the ground floor up: reported.

#include <vector>
int f(int a[2]) { return a[0]; }  // brackets; semicolons
#include "readers/reader_thing.hpp"
