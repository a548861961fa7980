#include "CForeignToplevel.h"
