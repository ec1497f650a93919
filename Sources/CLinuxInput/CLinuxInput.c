/* Everything of this module is `static inline` in its header; SwiftPM builds a C target only from a source file. */
#include "CLinuxInput.h"
