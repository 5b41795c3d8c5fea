// Private header of another folder: reported.
#include "json/ok.hpp"
#include "readers/json_util.hpp"
