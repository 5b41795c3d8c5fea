// Sibling on the same floor: reported.
#include "ir/ir.hpp"
