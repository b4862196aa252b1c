// Out-of-line anchor for the error tree's vtables.
#include "core/error.h"
