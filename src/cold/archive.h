// Transitional: the history store is cold/history.h (cold::History, alias cold::Archive).
#pragma once
#include "cold/history.h"
